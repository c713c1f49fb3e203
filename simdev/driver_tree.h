// DriverTreeWriter writes the simulator's state as the Neuron driver's sysfs tree (driver
// 2.24–2.30 layout) and a /proc tree of the runtimes' processes, so the real-host backend
// (neurondev) can be tested by a round trip: read the tree, and compare with the Snapshot it was
// written from. A test tool: the daemon never writes trees. What each file holds, how a Write
// updates the tree (only changed files, each replaced atomically; new and removed directories seen
// whole or not at all) and how driver versions, exits and resets show are specified in
// docs/driver-tree.md; the reader (neurondev) implements exactly its inverse.
// The writer owns everything it creates under both roots and removes nothing else; it keeps what a
// driver keeps between reads (retired counts, peaks, last changes). Not thread-safe; a reader in
// another thread or process may read the tree while it writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/driver_version.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"
#include "simdev/driver_generation.h"
#include "simdev/tree_files.h"

namespace neuronmon::simdev {

struct DriverTreeView;  // simdev/driver_tree_view.h

struct DriverTreeOptions {
  // Written to module/neuron/version; decides the generation written (driver_generation.h):
  // 2.24, 2.28, 2.30.2 or the reorganised 2.31 layout. Numbers separated by dots.
  std::string driver_version = "2.30.2.0";
  bool write_proc = true;
  // Non-empty: the kernel log the driver writes to, as a file: each Write appends a /dev/kmsg
  // record ("3,<seq>,<us>,-;NEURON_HW_ERR=<TYPE> ... nd-id=<N> ... serial-num=<S> ...") for every
  // NEURON_HW_ERR event the snapshot's kernel_* counts gained since the last Write.
  std::string kernel_log = "";
  // Non-empty: each runtime's datastore on each device it holds, as the driver maps it, in
  // `<datastore_root>/neuron<N>/<pid>` (datastore_image.h): what the reader's --datastore-root
  // reads. Busy time, FLOPs (MACs) and memory per physical core; time in collectives on each of its
  // cores; its executions on its first core; host memory and runtime version on its first device.
  std::string datastore_root = "";
};

class DriverTreeWriter {
 public:
  // The roots need not exist yet; Write creates them. `proc_root` is unused without write_proc.
  DriverTreeWriter(std::string sysfs_root, std::string proc_root, DriverTreeOptions options = {});
  ~DriverTreeWriter();
  DriverTreeWriter(const DriverTreeWriter&) = delete;
  DriverTreeWriter& operator=(const DriverTreeWriter&) = delete;

  // Writes (overwrites) the tree for `snapshot`, taken at `inventory`'s state (the processes of
  // `inventory` are the snapshot's runtimes). REQUIRES: successive calls describe the same instance
  // in time order. Errors: a snapshot that does not fit the inventory (too few devices or cores, a
  // runtime with no inventory process), a snapshot carrying a read error, or a driver_version that
  // is not a version — nothing written; a file that cannot be written — the message names its
  // path, and the tree may be partly updated (the next Write completes it).
  Status Write(const v1::Inventory& inventory, const Snapshot& snapshot);

  // Files and symlinks created or replaced by the last Write (unchanged ones are skipped).
  std::size_t files_written() const { return tree_.written(); }

 private:
  using View = DriverTreeView;
  struct CounterState {
    std::uint64_t total = 0;
    std::uint64_t present = 0;
    std::uint64_t peak = 0;
  };
  struct FlatCore {  // other_info of a physical core when its last runtime exited
    std::uint64_t busy_ns = 0;
    std::uint64_t flop_count = 0;
  };
  struct SeenRuntime {
    std::vector<std::uint32_t> cores;
    ExecutionCounters executions;
  };

  void Restart(std::uint64_t epoch);
  void RetireExited(const View& view);
  Status WriteDevice(const View& view, const v1::Device& device);
  Status WriteDeviceFiles(const View& view, const v1::Device& device, const std::string& dir);
  Status RemoveDevice(std::uint32_t index);
  Status WriteHostMemory(const View& view, const std::string& dir, std::uint32_t device);
  Status WriteCore(const View& view, const std::string& dir, std::uint32_t logical,
                   std::uint32_t j);
  Status WriteProcesses(const View& view);
  Status WriteDatastores(const View& view);
  Status AppendKernelLog(const v1::Inventory& inventory, const Snapshot& snapshot);
  Status WriteProcessFiles(const View& view, const RuntimeSample& runtime, const std::string& dir);
  // `dir`/{total,present} (and `peak` when `with_peak`), updating the counter's state.
  Status WriteCounter(const std::string& dir, std::uint64_t total, bool with_peak);

  std::string sysfs_root_;
  std::string proc_root_;
  DriverTreeOptions options_;
  std::optional<DriverVersion> version_;  // options_.driver_version; nullopt: not a version
  DriverGeneration generation_;
  bool started_ = false;
  std::uint64_t epoch_ = 0;
  TreeFiles tree_;                                          // both trees' files, as on disk
  std::unordered_map<std::string, CounterState> counters_;  // by counter directory
  std::map<std::uint32_t, ExecutionCounters> retired_;      // by logical core, on its j = 0
  std::map<std::uint64_t, FlatCore> flat_;                  // by (N << 32 | K)
  std::map<std::uint32_t, SeenRuntime> seen_;               // runtimes of the last Write, by pid
  std::set<std::uint32_t> devices_written_;                 // device directories on disk
  std::map<std::uint32_t, HardwareErrors> kernel_logged_;   // events in the kernel log, by device
  std::uint64_t kernel_seq_ = 0;
  bool kernel_log_created_ = false;
  std::map<std::uint32_t, std::size_t> processes_written_;  // pid -> fd links on disk
  std::set<std::string> datastores_written_;                // image paths on disk
};

}  // namespace neuronmon::simdev
