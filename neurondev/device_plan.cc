#include "neurondev/device_plan.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "proto/common/file_reader.h"

namespace neuronmon::neurondev {

DirIdentity Identity(std::string path, const struct stat& st) {
  return {std::move(path), true, st.st_dev, st.st_ino};
}

DirIdentity IdentifyDeviceDir(const std::string& root, int index) {
  const std::string name = "/neuron" + std::to_string(index);
  DirIdentity id;
  struct stat st {};
  id.path = root + "/devices/virtual/neuron_device" + name;
  if (::stat(id.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    id.path = root + "/class/neuron_device" + name;
    if (::stat(id.path.c_str(), &st) != 0) return id;
  }
  return Identity(std::move(id.path), st);
}

PlannedFile ByPath(std::string relative) {
  PlannedFile file;
  file.relative = std::move(relative);
  return file;
}

int OpenUnder(const DevicePlan& device, const std::string& relative, int flags) {
  if (device.dir_fd.get() >= 0) return ::openat(device.dir_fd.get(), relative.c_str(), flags);
  return ::open((device.dir.path + "/" + relative).c_str(), flags);
}

bool DirectoryUnder(const DevicePlan& device, const std::string& relative, std::string* error) {
  struct stat st {};
  const std::string path = device.dir.path + "/" + relative;
  const int rc = device.dir_fd.get() >= 0 ? ::fstatat(device.dir_fd.get(), relative.c_str(), &st, 0)
                                          : ::stat(path.c_str(), &st);
  if (rc == 0 && S_ISDIR(st.st_mode)) return true;
  if (rc != 0 && errno == ENOENT) return false;
  *error = path + ": " + (rc == 0 ? std::string("not a directory") : std::strerror(errno));
  return false;
}

ssize_t ReadFromStart(int fd, std::string& buffer) {
  ssize_t n;
  do {
    n = ::pread(fd, buffer.data(), buffer.size(), 0);
  } while (n < 0 && errno == EINTR);
  return n;
}

Result<std::string_view> ReadByPath(const DevicePlan& device, const std::string& relative,
                                    const std::string& path, std::string& buffer) {
  const std::size_t max_bytes = buffer.size() - 1;
  const UniqueFd fd(OpenUnder(device, relative, kFileFlags));
  if (fd.get() < 0) {
    const int error = errno;
    std::string message = path + ": cannot open: " + std::strerror(error);
    if (error == ENOENT) return Status::NotFound(std::move(message));
    return Status::IoError(std::move(message));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int error = errno;
    return Status::IoError(path + ": cannot stat: " + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": not a regular file");
  const Status too_large =
      Status::InvalidArgument(path + ": file larger than " + FormatBytes(max_bytes));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large;
  const ssize_t n = ReadFromStart(fd.get(), buffer);
  if (n < 0) {
    const int error = errno;
    return Status::IoError(path + ": cannot read: " + std::strerror(error));
  }
  if (static_cast<std::size_t>(n) > max_bytes) return too_large;
  return std::string_view(buffer.data(), static_cast<std::size_t>(n));
}

std::size_t OpenIn(const PlannedFile& file) { return file.fd.get() >= 0 ? 1 : 0; }

std::size_t OpenIn(const DevicePlan& d) {
  std::size_t n = OpenIn(d.power) + OpenIn(d.reset) + (d.dir_fd.get() >= 0 ? 1 : 0);
  for (const PlannedMemory& m : d.host_memory) n += OpenIn(m.total) + OpenIn(m.peak);
  for (const PlannedFile& f : d.hardware) n += OpenIn(f);
  for (const PlannedCounter& f : d.health) n += OpenIn(f.total);
  for (const PlannedCore& c : d.cores) {
    n += OpenIn(c.pe_counters);
    for (const PlannedCounter& o : c.outcomes) n += OpenIn(o.total);
    for (const PlannedCounter& o : c.other_info) n += OpenIn(o.total);
    for (const PlannedMemory& m : c.device_memory) n += OpenIn(m.total) + OpenIn(m.peak);
  }
  return n;
}

}  // namespace neuronmon::neurondev
