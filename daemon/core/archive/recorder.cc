#include "daemon/core/archive/recorder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace neuronmon::daemon {

Status MakeDirectories(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("recorder directory is empty");
  std::string path;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0750) != 0 && errno != EEXIST) {
      return Status::IoError("cannot create " + path + ": " + std::strerror(errno));
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IoError(dir + " is not a directory");
  }
  return Status::Ok();
}

Recorder::Recorder(RecorderOptions options, v1::ArchiveHeader header)
    : options_(std::move(options)), header_(std::move(header)) {}

Recorder::~Recorder() { Close(); }

void Recorder::Close() {
  if (writer_ == nullptr) return;
  const std::uint64_t before = writer_->bytes();
  (void)writer_->Close();
  stats_.bytes_written += writer_->bytes() - before;
  stats_.archive_bytes += writer_->bytes() - before;
  files_.push_back({writer_->path(), writer_->bytes()});
  writer_.reset();
}

Status Recorder::OpenFile(WallTime wall) {
  if (Status st = MakeDirectories(options_.directory); !st.ok()) return st;
  if (!scanned_) {
    // Files a previous run left: they count against the cap, oldest first.
    scanned_ = true;
    Result<std::vector<std::string>> old = archive::ListArchive(options_.directory);
    if (old.ok()) {
      for (const std::string& path : *old) {
        if (!archive::IsFileNameFor(path)) continue;  // an incident's, or anyone else's: not ours
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0) {
          files_.push_back({path, static_cast<std::uint64_t>(st.st_size)});
          stats_.archive_bytes += static_cast<std::uint64_t>(st.st_size);
        }
      }
    }
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string path = options_.directory + "/" +
                             archive::FileNameFor(wall, static_cast<std::uint64_t>(++serial_));
    archive::WriterOptions wo;
    wo.compression_level = options_.compression_level;
    Result<std::unique_ptr<archive::ArchiveWriter>> w =
        archive::ArchiveWriter::Create(path, header_, wo);
    if (w.ok()) {
      writer_ = std::move(*w);
      stats_.archive_bytes += writer_->bytes();
      return Status::Ok();
    }
    if (::access(path.c_str(), F_OK) != 0) return w.status();  // not a name clash
  }
  return Status::IoError("cannot find a free file name in " + options_.directory);
}

void Recorder::Prune(WallTime now) {
  const auto over_cap = [&] { return stats_.archive_bytes > options_.max_bytes; };
  while (!files_.empty()) {
    const File& f = files_.front();
    bool expired = false;
    if (options_.retention > Nanos::zero()) {
      // A closed file ends where the next one starts: its name's time is a lower bound, so a file
      // is dropped once the one after it started before the retention began.
      const std::string next = files_.size() > 1    ? files_[1].path
                               : writer_ != nullptr ? writer_->path()
                                                    : std::string();
      const std::optional<WallTime> next_start = archive::StartOfFile(next);
      expired = next_start && *next_start < now - options_.retention;
    }
    if (!over_cap() && !expired) break;
    if (::unlink(f.path.c_str()) == 0 || errno == ENOENT) ++stats_.files_deleted;
    stats_.archive_bytes -= std::min(stats_.archive_bytes, f.bytes);
    files_.pop_front();
  }
}

Status Recorder::Append(const Snapshot& snapshot, const v1::Inventory& inventory,
                        const std::string& description, std::span<const v1::Event> events) {
  const WallTime wall = snapshot.wall;
  if (retry_at_) {
    if (wall < *retry_at_) return Status::Ok();
    retry_at_.reset();
  }
  if (writer_ != nullptr && writer_->first_wall() &&
      wall - *writer_->first_wall() >= options_.segment) {
    Close();
  }
  Status st = Status::Ok();
  bool opened = false;
  if (writer_ == nullptr) {
    st = OpenFile(wall);
    opened = st.ok();
  }
  if (st.ok()) {
    const std::uint64_t before = writer_->bytes();
    st = writer_->Append(snapshot, inventory, description, events);
    const std::uint64_t grown = writer_->bytes() - before;
    stats_.bytes_written += grown;
    stats_.archive_bytes += grown;
  }
  if (!st.ok()) {
    ++stats_.failures;
    stats_.active = false;
    stats_.last_error = st.message();
    if (writer_ != nullptr) {
      files_.push_back({writer_->path(), writer_->bytes()});
      writer_.reset();  // torn: readers skip its tail
    }
    retry_at_ = wall + options_.retry;
    if (failing_) return Status::Ok();  // said once per episode
    failing_ = true;
    return st;
  }
  ++stats_.snapshots;
  stats_.active = true;
  failing_ = false;
  // The cap and the retention: checked when a file starts and once a minute.
  if (opened || stats_.snapshots % 60 == 0) Prune(wall);
  return Status::Ok();
}

}  // namespace neuronmon::daemon
