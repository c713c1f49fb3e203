// Runtime datastores (datastore.h) read from a source, with what the reading of one datastore
// needs over time: a read in which a cumulative counter fell is read again once, and a fall that
// a second read confirms is the datastore started afresh, said so the caller starts counting anew.
// Two sources: image files (`--datastore-root DIR`, config `datastore_root`:
// `<DIR>/neuron<N>/<pid>` holds the bytes the driver maps for process `pid` on device N; for tests,
// for containers that are handed the images, and the simulator's round trip), and the live driver
// (driver_datastores.h: NEURON_IOCTL_ACQUIRE_NEURON_DS and a read-only mapping). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "neurondev/datastore.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

// Where datastore images come from.
class DatastoreSource {
 public:
  virtual ~DatastoreSource() = default;
  // The bytes of `pid`'s datastore on device `device` (at most datastore::kDriverSize), valid until
  // the next call on this source. NotFound: the process has none there (it exited, or never wrote
  // one); any other error says why the source could not be asked, with the path.
  virtual Result<std::span<const std::byte>> Image(int device, std::uint32_t pid) = 0;
  // Whether the image last returned for `pid` on `device` still belongs to it: false when the
  // process let its datastore go while it was read (the driver hands the same memory to the next
  // process), so what was read is not its.
  virtual bool StillItsOwn(int device, std::uint32_t pid) = 0;
  // Lets go of what the source holds for the devices outside `held` (the devices some process
  // other than the daemon holds).
  virtual void RetainDevices(const std::set<int>& held) = 0;
  // "image files under DIR", "the driver (/dev/neuron<N>)": for logs and neuron-ls --driver.
  virtual std::string Name() const = 0;
};

// Image files: `<root>/neuron<N>/<pid>`, each one bounded read of a regular file (never a link,
// FIFO or device) of the layout's bytes (datastore::kMinimumSize of the driver's 256 KiB), so a
// process that exits between two reads costs one missing file.
class DatastoreFiles final : public DatastoreSource {
 public:
  explicit DatastoreFiles(std::string root);
  Result<std::span<const std::byte>> Image(int device, std::uint32_t pid) override;
  bool StillItsOwn(int, std::uint32_t) override { return true; }
  void RetainDevices(const std::set<int>&) override {}
  std::string Name() const override { return "image files under " + root_; }

 private:
  std::string root_;
  std::string buffer_;
};

class Datastores {
 public:
  explicit Datastores(std::unique_ptr<DatastoreSource> source);

  struct Read {
    datastore::Reading reading;
    // Non-empty: a cumulative counter fell since this datastore's last reading and a second read
    // said the same (the datastore was cleared and written again, as for a new process of the same
    // pid), and which; the caller starts this datastore's counts afresh rather than subtracting.
    std::string restarted;
    // This datastore's reading before this one (nullopt the first time it is read): with
    // `restarted` empty, what its cumulative counters grew from.
    std::optional<datastore::Reading> previous;
  };
  // The datastore of `pid` on `device`, a device of `cores` physical NeuronCores. A read in which a
  // cumulative counter fell is read again once (a runtime caught mid-write); NotFound when there
  // is none (or the process let it go while it was read), the decoder's error for one that is not
  // a datastore, the source's for a source that cannot be asked.
  Result<Read> ReadDatastore(int device, std::uint32_t pid, std::size_t cores);
  // Drops what is kept of datastores whose pid `keep` says no to.
  template <typename Keep>
  void Retain(Keep keep) {
    std::erase_if(last_, [&](const auto& entry) { return !keep(entry.first.second); });
  }
  DatastoreSource& source() { return *source_; }

 private:
  Result<datastore::Reading> Once(int device, std::uint32_t pid, std::size_t cores);

  std::unique_ptr<DatastoreSource> source_;
  std::map<std::pair<int, std::uint32_t>, datastore::Reading> last_;
};

}  // namespace neuronmon::neurondev
