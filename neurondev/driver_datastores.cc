#include "neurondev/driver_datastores.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace neuronmon::neurondev {
namespace {

// struct neuron_ioctl_neuron_ds_info (aws-neuron-driver neuron_ioctl.h): pid in (0 would create
// one for the caller: never sent), mmap offset and size out.
struct NeuronDsInfo {
  pid_t pid;
  std::uint64_t mmap_offset;
  std::uint32_t size;
};
static_assert(offsetof(NeuronDsInfo, mmap_offset) == 8 && sizeof(NeuronDsInfo) == 24);
// _IOR(NEURON_IOCTL_BASE, 71, struct neuron_ioctl_neuron_ds_info *): the driver encodes the
// size of a pointer, not of the struct.
constexpr unsigned long kAcquireNeuronDs = _IOR('N', 71, NeuronDsInfo*);

}  // namespace

DriverCalls LiveDriverCalls(std::string dev_root) {
  DriverCalls calls;
  calls.open = [dev_root = std::move(dev_root)](int index) -> Result<UniqueFd> {
    const std::string path = dev_root + "/neuron" + std::to_string(index);
    // O_RDONLY, not O_WRONLY: the driver's free-access mode refuses the datastore ioctl.
    // O_NONBLOCK so a FIFO planted at the path is not waited on.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) {
      const int e = errno;
      std::string why = path + ": " + std::strerror(e);
      if (e == EACCES || e == EPERM) {
        why +=
            " (the daemon needs read access to the Neuron devices: packaging/systemd/"
            "neuron-monitord-real-host.conf)";
      }
      return Status::Unavailable(why);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISCHR(st.st_mode)) {
      return Status::Unavailable(path + ": not a character device");
    }
    return fd;
  };
  calls.acquire = [](int fd, std::uint32_t pid, DatastoreLocation* out) {
    NeuronDsInfo info{};
    info.pid = static_cast<pid_t>(pid);
    if (::ioctl(fd, kAcquireNeuronDs, &info) != 0) return errno;
    out->mmap_offset = info.mmap_offset;
    out->size = info.size;
    return 0;
  };
  return calls;
}

DriverDatastores::DriverDatastores(std::string dev_root, DriverCalls calls)
    : dev_root_(std::move(dev_root)), calls_(std::move(calls)) {}

DriverDatastores::~DriverDatastores() {
  for (auto& [index, device] : devices_) Unmap(device);
}

void DriverDatastores::Unmap(Device& device) {
  for (auto& [offset, m] : device.mappings) {
    ::munmap(const_cast<std::byte*>(m.address), m.size);
  }
  device.mappings.clear();
}

std::size_t DriverDatastores::mappings() const {
  std::size_t n = 0;
  for (const auto& [index, device] : devices_) n += device.mappings.size();
  return n;
}

Result<std::span<const std::byte>> DriverDatastores::Image(int index, std::uint32_t pid) {
  if (pid == 0 || pid > 0x7fffffffu) {
    return Status::InvalidArgument("pid " + std::to_string(pid) + " is not a process");
  }
  auto it = devices_.find(index);
  if (it == devices_.end()) {
    if (const auto failed = failed_opens_.find(index);
        failed != failed_opens_.end() && reads_ < failed->second.retry_at) {
      return failed->second.why;
    }
    Result<UniqueFd> fd = calls_.open(index);
    if (!fd.ok()) {
      failed_opens_[index] = {reads_ + kOpenRetryReads, fd.status()};
      return fd.status();
    }
    failed_opens_.erase(index);
    it = devices_.emplace(index, Device{}).first;
    it->second.fd = std::move(*fd);
  }
  Device& device = it->second;
  DatastoreLocation where;
  if (const int e = calls_.acquire(device.fd.get(), pid, &where); e != 0) {
    if (e == ENOENT) return Status::NotFound("pid " + std::to_string(pid) + " has no datastore");
    return Status::Unavailable(dev_root_ + "/neuron" + std::to_string(index) +
                               ": the driver refused the datastore of pid " + std::to_string(pid) +
                               ": " + std::strerror(e));
  }
  if (where.size < datastore::kMinimumSize || where.size > datastore::kDriverSize) {
    return Status::InvalidArgument("the driver gave a datastore of " + std::to_string(where.size) +
                                   " bytes (expected " + std::to_string(datastore::kMinimumSize) +
                                   " to " + std::to_string(datastore::kDriverSize) + ")");
  }
  auto mapped = device.mappings.find(where.mmap_offset);
  if (mapped != device.mappings.end() && mapped->second.size != where.size) {
    ::munmap(const_cast<std::byte*>(mapped->second.address), mapped->second.size);
    device.mappings.erase(mapped);
    mapped = device.mappings.end();
  }
  if (mapped == device.mappings.end()) {
    if (device.mappings.size() >= kMaxMappingsPerDevice) Unmap(device);
    void* address = ::mmap(nullptr, where.size, PROT_READ, MAP_SHARED, device.fd.get(),
                           static_cast<off_t>(where.mmap_offset));
    if (address == MAP_FAILED) {
      return Status::Unavailable(dev_root_ + "/neuron" + std::to_string(index) +
                                 ": mapping the datastore of pid " + std::to_string(pid) +
                                 " failed: " + std::strerror(errno));
    }
    mapped = device.mappings
                 .emplace(where.mmap_offset,
                          Mapping{static_cast<const std::byte*>(address), std::size_t{where.size}})
                 .first;
  }
  device.last_offset = where.mmap_offset;
  return std::span<const std::byte>(mapped->second.address, mapped->second.size);
}

bool DriverDatastores::StillItsOwn(int index, std::uint32_t pid) {
  const auto it = devices_.find(index);
  if (it == devices_.end()) return false;
  DatastoreLocation where;
  return calls_.acquire(it->second.fd.get(), pid, &where) == 0 &&
         where.mmap_offset == it->second.last_offset;
}

void DriverDatastores::RetainDevices(const std::set<int>& held) {
  ++reads_;
  std::erase_if(failed_opens_, [&](const auto& entry) { return !held.contains(entry.first); });
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (held.contains(it->first)) {
      ++it;
      continue;
    }
    Unmap(it->second);  // before the close: the driver's clean-up finds no mapping of ours
    it = devices_.erase(it);
  }
}

}  // namespace neuronmon::neurondev
