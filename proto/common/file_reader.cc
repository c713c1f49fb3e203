#include "proto/common/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "proto/common/text.h"
#include "proto/common/unique_fd.h"

namespace neuronmon {
namespace {

constexpr std::size_t kMaxSecretBytes = 4096;

Status OpenError(const std::string& path, int error) {
  std::string message = path + ": cannot open: " + std::strerror(error);
  if (error == ENOENT) return Status::NotFound(std::move(message));
  return Status::IoError(std::move(message));
}

std::string Mode(mode_t mode) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%04o", static_cast<unsigned>(mode & 07777));
  return buffer;
}

// Reads at most `max_bytes` + 1 bytes of an open regular file.
Result<std::string> ReadOpen(int fd, const std::string& path, std::size_t max_bytes) {
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    // The file may grow while it is read: the cap holds whatever fstat said.
    if (text.size() > max_bytes) {
      return Status::InvalidArgument(path + ": file larger than " + FormatBytes(max_bytes));
    }
  }
  return text;
}

Result<std::string> ReadChecked(const std::string& path, std::size_t max_bytes,
                                struct stat* st_out) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below then refuses it.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return OpenError(path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Status::IoError(path + ": cannot stat: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + ": not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return Status::InvalidArgument(path + ": file larger than " + FormatBytes(max_bytes));
  }
  if (st_out != nullptr) *st_out = st;
  return ReadOpen(fd.get(), path, max_bytes);
}

}  // namespace

std::string FormatBytes(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

Result<std::string> ReadRegularFile(const std::string& path, std::size_t max_bytes) {
  return ReadChecked(path, max_bytes, nullptr);
}

Result<std::string> ReadPrivateFile(const std::string& path, std::size_t max_bytes,
                                    std::string_view what) {
  struct stat st {};
  Result<std::string> text = ReadChecked(path, max_bytes, &st);
  if (!text.ok()) return text.status();
  if ((st.st_mode & S_IROTH) != 0) {
    return Status::InvalidArgument(path + ": mode " + Mode(st.st_mode) +
                                   " lets every user read the " + std::string(what) +
                                   "; make it 0600 or 0640");
  }
  return text;
}

Result<std::string> ReadSecretFile(const std::string& path) {
  Result<std::string> text = ReadPrivateFile(path, kMaxSecretBytes, "token");
  if (!text.ok()) return text.status();
  const std::string_view token =
      Trim(std::string_view(*text).substr(0, text->find('\n')), kLineBlanks);
  if (token.empty()) return Status::InvalidArgument(path + ": the token file is empty");
  return std::string(token);
}

}  // namespace neuronmon
