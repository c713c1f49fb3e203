#include "daemon/core/jobs/job_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "proto/common/file_reader.h"
#include "proto/common/unique_fd.h"

namespace neuronmon::daemon {
namespace {

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

}  // namespace

Status SaveJobFile(JobBook& book, const std::string& path) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) return Status::IoError(target.parent_path().string() + ": " + ec.message());
  }
  const std::string bytes = book.Serialize();
  const std::string temporary = path + ".tmp";
  // A fresh file: never one someone left there (a link, or a file of theirs to fill).
  ::unlink(temporary.c_str());
  UniqueFd fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640));
  if (!fd.valid()) return Errno(temporary);
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status st = Errno(temporary);
      ::unlink(temporary.c_str());
      return st;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) {
    Status st = Errno(temporary);
    ::unlink(temporary.c_str());
    return st;
  }
  fd.Reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    Status st = Errno(path);
    ::unlink(temporary.c_str());
    return st;
  }
  book.MarkSaved();
  return Status::Ok();
}

Status LoadJobFile(JobBook& book, const std::string& path, WallTime now) {
  Result<std::string> bytes = ReadRegularFile(path, kMaxJobFileBytes);
  if (!bytes.ok()) return bytes.status();
  Status st = book.Restore(*bytes, now);
  if (!st.ok()) return Status::InvalidArgument(path + ": " + st.message());
  return Status::Ok();
}

}  // namespace neuronmon::daemon
