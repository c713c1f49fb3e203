// The live driver's runtime datastores: what AWS's neuron-monitor reads, read the same way
// (aws-neuron-driver neuron_cdev.c, neuron_ds.c, neuron_mmap.c):
//   - /dev/neuron<N> is opened O_RDONLY, once per device while some other process holds the device,
//     and kept open: the driver answers the datastore ioctl only on a descriptor that is not
//     write-only (a write-only open is its "free access" mode, for query ioctls alone), and such an
//     open attaches the daemon's pid to the device (one of its 16 process slots) — the daemon is
//     therefore never counted as a holder (Host drops its own pid). Closing it makes the driver run
//     its process-exit clean-up for the daemon's pid (with a 10 ms sleep, 1 s on first-generation
//     devices), so a device is closed
//     only when no other process holds it. While it is open the driver refuses a reset through
//     sysfs (it resets only unopened devices), as it does while any runtime holds the device.
//   - NEURON_IOCTL_ACQUIRE_NEURON_DS with the runtime's pid returns the mmap offset and size of
//     the datastore that pid created; ENOENT when it has none. The monitor's acquire takes no
//     reference and no lock of the runtime's (RELEASE by a non-owner does nothing, so none is
//     sent).
//   - The offset is mapped PROT_READ, MAP_SHARED. The driver would let a monitor map it writable
//     (the memory lives as long as the device), so read-only is our choice, not its rule. A device
//     has 16 datastore slots, handed from process to process and cleared when one exits: a
//     mapping is kept per slot (offset) and reused, and after each read the pid is asked again so
//     a slot handed to another process mid-read is never taken for the old one's.
// The calls sit behind DriverCalls so tests can run the mapping logic on a memfd. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>

#include "neurondev/datastores.h"
#include "proto/common/status.h"
#include "proto/common/unique_fd.h"

namespace neuronmon::neurondev {

// Where the driver put a datastore: NEURON_IOCTL_ACQUIRE_NEURON_DS's answer.
struct DatastoreLocation {
  std::uint64_t mmap_offset = 0;
  std::uint32_t size = 0;
};

struct DriverCalls {
  // Opens device `index`'s node for the datastore ioctl; the error names the path and the cause.
  std::function<Result<UniqueFd>(int index)> open;
  // NEURON_IOCTL_ACQUIRE_NEURON_DS for `pid` on `fd`: 0, or the errno.
  std::function<int(int fd, std::uint32_t pid, DatastoreLocation* out)> acquire;
};

// The real calls: `<dev_root>/neuron<N>`, O_RDONLY, which must be a character device (no ioctl is
// ever sent to anything else), and the ioctl itself.
DriverCalls LiveDriverCalls(std::string dev_root);

class DriverDatastores final : public DatastoreSource {
 public:
  // A device has at most this many datastores (NEURON_MAX_DATASTORE_ENTRIES_PER_DEVICE): the
  // mappings kept per device.
  static constexpr std::size_t kMaxMappingsPerDevice = 16;
  // A device whose node could not be opened is tried again after this many reads (RetainDevices
  // calls): a failed open can cost the driver a kernel-log line (all 16 process slots taken) or
  // wait out a reset, and the reason stands meanwhile.
  static constexpr std::uint64_t kOpenRetryReads = 60;

  DriverDatastores(std::string dev_root, DriverCalls calls);
  ~DriverDatastores() override;
  DriverDatastores(const DriverDatastores&) = delete;
  DriverDatastores& operator=(const DriverDatastores&) = delete;

  Result<std::span<const std::byte>> Image(int device, std::uint32_t pid) override;
  bool StillItsOwn(int device, std::uint32_t pid) override;
  void RetainDevices(const std::set<int>& held) override;
  std::string Name() const override { return "the driver (" + dev_root_ + "/neuron<N>)"; }

  std::size_t open_devices() const { return devices_.size(); }
  std::size_t mappings() const;

 private:
  struct Mapping {
    const std::byte* address = nullptr;
    std::size_t size = 0;
  };
  struct Device {
    UniqueFd fd;
    std::map<std::uint64_t, Mapping> mappings;  // by mmap offset: one per datastore slot
    std::uint64_t last_offset = 0;              // of the last image handed out
  };
  static void Unmap(Device& device);

  std::string dev_root_;
  DriverCalls calls_;
  std::map<int, Device> devices_;
  std::uint64_t reads_ = 0;  // RetainDevices calls
  struct FailedOpen {
    std::uint64_t retry_at = 0;  // reads_
    Status why;
  };
  std::map<int, FailedOpen> failed_opens_;
};

}  // namespace neuronmon::neurondev
