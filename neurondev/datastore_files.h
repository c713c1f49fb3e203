// Runtime datastores read from image files (`--datastore-root DIR`, config `datastore_root`):
// `<DIR>/neuron<N>/<pid>` holds the bytes the driver maps for process `pid` on device N
// (datastore.h). For tests, for containers that are handed the images, and for the simulator's
// round trip; the ioctl+mmap source reads the same layout from a live driver. Each read is one
// bounded read of a regular file (at most the driver's 256 KiB), so a process that exits between
// two reads costs one missing file. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "neurondev/datastore.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

class DatastoreFiles {
 public:
  explicit DatastoreFiles(std::string root);

  struct Read {
    datastore::Reading reading;
    // Non-empty: a cumulative counter fell since this datastore's last reading and a second read
    // said the same (the datastore was cleared and written again, as for a new process of the same
    // pid), and which; the caller starts this datastore's counts afresh rather than subtracting.
    std::string restarted;
  };
  // The datastore of `pid` on `device`, a device of `cores` physical NeuronCores. A read in which a
  // cumulative counter fell is read again once (a runtime caught mid-write); NotFound when there
  // is no image, the decoder's error for one that is not a datastore.
  Result<Read> ReadDatastore(int device, std::uint32_t pid, std::size_t cores);
  // Drops what is kept of datastores whose pid `keep` says no to.
  template <typename Keep>
  void Retain(Keep keep) {
    std::erase_if(last_, [&](const auto& entry) { return !keep(entry.first.second); });
  }

 private:
  Result<datastore::Reading> Once(const std::string& path, std::size_t cores);

  std::string root_;
  std::string buffer_;
  std::map<std::pair<int, std::uint32_t>, datastore::Reading> last_;
};

}  // namespace neuronmon::neurondev
