#include "simdev/tree_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace neuronmon::simdev {
namespace {

namespace fs = std::filesystem;

Status Errno(const std::string& path, const std::string& what) {
  return Status::IoError(path + ": " + what + ": " + std::strerror(errno));
}

// Replaces `path` with `content` in one rename, so a reader never sees a partial file.
Status ReplaceFile(const std::string& path, const std::string& content) {
  const fs::path p(path);
  const std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(path, "cannot create " + tmp);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = Errno(path, "cannot write " + tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Errno(path, "cannot replace");
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

Status ReplaceSymlink(const std::string& path, const std::string& target) {
  const fs::path p(path);
  const std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
  ::unlink(tmp.c_str());
  if (::symlink(target.c_str(), tmp.c_str()) != 0) return Errno(path, "cannot create " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Errno(path, "cannot replace");
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

template <typename Map>
void ErasePrefix(Map& map, const std::string& prefix) {
  std::erase_if(map, [&](const auto& entry) { return entry.first.rfind(prefix, 0) == 0; });
}

}  // namespace

Status MakeParent(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::IoError(parent.string() + ": cannot create directory: " + ec.message());
  return Status::Ok();
}

Status TreeFiles::WriteNewDirectory(const std::string& dir,
                                    const std::function<Status(const std::string&)>& write) {
  const fs::path p(dir);
  const std::string staging = (p.parent_path() / ("." + p.filename().string() + ".new")).string();
  if (Status s = RemoveTree(dir); !s.ok()) return s;
  if (Status s = RemoveTree(staging); !s.ok()) return s;
  staging_from_ = staging + "/";
  staging_to_ = dir + "/";
  Status s = write(staging);
  staging_from_.clear();
  staging_to_.clear();
  if (s.ok() && ::rename(staging.c_str(), dir.c_str()) != 0)
    s = Errno(dir, "cannot rename " + staging);
  if (!s.ok()) {
    ErasePrefix(files_, dir + "/");
    ErasePrefix(links_, dir + "/");
  }
  return s;
}

std::string TreeFiles::Canonical(const std::string& path) const {
  if (staging_from_.empty() || path.rfind(staging_from_, 0) != 0) return path;
  return staging_to_ + path.substr(staging_from_.size());
}

Status TreeFiles::WriteFile(const std::string& path, const std::string& content) {
  return Write(files_, path, content, ReplaceFile);
}

Status TreeFiles::WriteFile(const std::string& path, const std::string& content, unsigned mode) {
  const std::size_t before = written_;
  Status s = WriteFile(path, content);
  if (s.ok() && written_ != before && ::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0)
    return Errno(path, "cannot chmod");
  return s;
}

Status TreeFiles::WriteSymlink(const std::string& path, const std::string& target) {
  return Write(links_, path, target, ReplaceSymlink);
}

Status TreeFiles::Write(std::unordered_map<std::string, std::string>& on_disk,
                        const std::string& path, const std::string& value, Replace replace) {
  const std::string key = Canonical(path);
  const auto it = on_disk.find(key);
  if (it != on_disk.end() && it->second == value) return Status::Ok();
  if (it == on_disk.end()) {
    if (Status s = MakeParent(path); !s.ok()) return s;
  }
  if (Status s = replace(path, value); !s.ok()) return s;
  on_disk[key] = value;
  ++written_;
  return Status::Ok();
}

Status TreeFiles::RemoveLink(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno(path, "cannot remove");
  links_.erase(Canonical(path));
  return Status::Ok();
}

Status TreeFiles::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno(path, "cannot remove");
  files_.erase(Canonical(path));
  return Status::Ok();
}

void TreeFiles::ForgetLink(const std::string& path) { links_.erase(path); }

// Renamed away first, so a reader listing the parent sees the directory whole or not at all.
Status TreeFiles::RemoveTree(const std::string& path) {
  ErasePrefix(files_, path + "/");
  ErasePrefix(links_, path + "/");
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return Status::Ok();
  const fs::path p(path);
  const fs::path hidden = p.parent_path() / ("." + p.filename().string() + ".removed");
  fs::remove_all(hidden, ec);
  fs::rename(p, hidden, ec);
  if (ec) return Status::IoError(path + ": cannot remove: " + ec.message());
  fs::remove_all(hidden, ec);
  if (ec) return Status::IoError(path + ": cannot remove: " + ec.message());
  return Status::Ok();
}

}  // namespace neuronmon::simdev
