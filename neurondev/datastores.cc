#include "neurondev/datastores.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "proto/common/unique_fd.h"

namespace neuronmon::neurondev {

// Only the layout's bytes are read: the counters end at kMinimumSize, the rest of the driver's
// 256 KiB is never looked at.
DatastoreFiles::DatastoreFiles(std::string root)
    : root_(std::move(root)), buffer_(datastore::kMinimumSize, '\0') {}

Result<std::span<const std::byte>> DatastoreFiles::Image(int device, std::uint32_t pid) {
  const std::string path = root_ + "/neuron" + std::to_string(device) + "/" + std::to_string(pid);
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int e = errno;
    if (e == ENOENT) return Status::NotFound(path + ": no datastore");
    return Status::IoError(path + ": " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + ": not a regular file");
  }
  // The counters' three sections, each read where it lies (a 12.5 KiB of the layout's 67,200
  // bytes: the rest of the buffer stays zero and is never decoded); a file shorter than the layout
  // is read whole, for the decoder to refuse.
  struct Range {
    std::size_t from, to;
  };
  using namespace datastore;
  static constexpr Range kSections[] = {
      {0, kCoreCountersStart + 4 * kCoreCounterCount * 8},
      {kExtCountersStart, kExtCountersStart + 4 * kExtCounterCount * 8},
      {kFullCoreSetsStart, kMinimumSize}};
  const bool whole = static_cast<std::uint64_t>(st.st_size) < kMinimumSize;
  std::size_t got = 0;
  for (const Range& r : kSections) {
    const std::size_t from = whole ? got : r.from, to = whole ? buffer_.size() : r.to;
    std::size_t at = from;
    while (at < to) {
      const ssize_t n = ::pread(fd.get(), buffer_.data() + at, to - at, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::IoError(path + ": " + std::strerror(errno));
      if (n == 0) break;
      at += static_cast<std::size_t>(n);
    }
    got = at;
    if (whole || at < to) break;  // a file that ended early: as long as what was read
  }
  return std::as_bytes(std::span(buffer_.data(), got));
}

Datastores::Datastores(std::unique_ptr<DatastoreSource> source) : source_(std::move(source)) {}

Result<datastore::Reading> Datastores::Once(int device, std::uint32_t pid, std::size_t cores) {
  Result<std::span<const std::byte>> image = source_->Image(device, pid);
  if (!image.ok()) return image.status();
  Result<datastore::Reading> r = datastore::Decode(*image, cores);
  // Read first, asked after: what was read is this process's only if it still holds the memory.
  if (!source_->StillItsOwn(device, pid)) {
    return Status::NotFound("pid " + std::to_string(pid) + " let its datastore on ND" +
                            std::to_string(device) + " go while it was read");
  }
  if (!r.ok()) {
    return Status(r.status().code(), "ND" + std::to_string(device) + " pid " + std::to_string(pid) +
                                         ": " + r.status().message());
  }
  return r;
}

Result<Datastores::Read> Datastores::ReadDatastore(int device, std::uint32_t pid,
                                                   std::size_t cores) {
  Result<datastore::Reading> now = Once(device, pid, cores);
  const auto key = std::pair(device, pid);
  if (!now.ok()) {
    last_.erase(key);
    return now.status();
  }
  Read out;
  const auto last = last_.find(key);
  if (last != last_.end()) out.previous = std::move(last->second);
  if (out.previous && !datastore::FellBack(*out.previous, *now).empty()) {
    Result<datastore::Reading> again = Once(device, pid, cores);
    if (!again.ok()) {
      last_.erase(key);
      return again.status();
    }
    // The second read agrees with the first: the datastore itself started again.
    out.restarted = datastore::FellBack(*out.previous, *again);
    now = std::move(again);
  }
  out.reading = *now;
  last_[key] = std::move(*now);
  return out;
}

}  // namespace neuronmon::neurondev
