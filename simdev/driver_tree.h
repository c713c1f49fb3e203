// DriverTreeWriter: writes the simulator's state as the Neuron driver's sysfs tree
// (driver 2.24–2.30 layout, reference/neuron-sysfs.md) and a /proc tree of the runtimes' processes,
// so the real-host backend (neurondev) can be tested by a round trip: read the tree, and compare
// with the Snapshot it was written from. A test tool: the daemon never writes trees.
//
// Each Write(inventory, snapshot) brings the tree up to date with `snapshot`. The writer keeps what
// a driver keeps between reads — counts of runtimes that exited, memory high-water marks, the last
// change of each counter — and remembers what it wrote, so an unchanged file is not rewritten.
// Every file is replaced atomically (written under a hidden temporary name in the same directory,
// then renamed), so a reader in another thread or process sees either the old or the new content.
// A new device or process directory is built under a hidden name (".neuron<N>.new", ".<pid>.new")
// and renamed into place, and one that goes away is renamed to ".<name>.removed" before it is
// deleted: a reader sees each whole or not at all. The writer owns everything it creates under
// both roots and removes nothing else. Not thread-safe.
//
// The mapping (the reader implements exactly its inverse). Paths are under `<sysfs>`; D is
// `devices/virtual/neuron_device/neuron<N>` for inventory device N; every counter file holds
// "%llu\n".
//   module/neuron/version            options.driver_version + "\n"
//   class/neuron_device/neuron<N>    symlink "../../devices/virtual/neuron_device/neuron<N>"
//   D/core_count                     physical_core_count, no newline
//   D/connected_devices              connected_to joined by ", ", + "\n" ("\n" when none)
//   D/info/serial_number             serial_number + "\n"
//   D/info/architecture/{arch_type,instance_type,device_name}
//                                    NDv2/Trn1/Trainium1, NDv3/Inf2/Inferentia2,
//                                    NDv3/Trn2/Trainium2, chosen by the device's device_name (else
//                                    hardware_info's neuron_device_type); each + "\n"
//   D/stats/memory_usage/host_mem/<cat>/{total,present,peak}
//        cat: application_memory constants dma_buffers tensors (RuntimeMemory::host summed over the
//        runtimes whose LOWEST device is N), driver_memory notifications dma_rings uncategorized
//        (0). total = current bytes; present = size of the last change |new - old|; peak = the
//        largest total written since the writer started (or since the last epoch change).
//   D/stats/hardware/{mem_ecc_uncorrected = ecc.mem_uncorrected, sram_ecc_uncorrected =
//        ecc.sram_uncorrected, mem_ecc_repairable_uncorrected = 0}. Corrected ECC is not written:
//        the driver has no such counter.
//   D/stats/hardware/health_status/{hbm_ecc_err_count = mem_uncorrected,
//        repairable_hbm_ecc_err_count = 0, sram_ecc_err_count = sram_uncorrected,
//        hw_error_event = 0}                                  only when driver_version >= 2.28
//   D/stats/power/utilization        "POWER_STATUS_NO_DATA,<S>,0.00,0.00,0.00\n", S = snapshot.wall
//                                    in Unix seconds (the simulator has no power model)
//   D/neuron_core<K>/                K = 0..P-1, P = physical_core_count, lnc = P / core_count.
//        Global logical core g = core_ids[i] covers K = i*lnc .. i*lnc+lnc-1; j = K - i*lnc.
//        The physical core's busy ns b = CoreCounters::physical_busy_ns[j] when lnc > 1 (and that
//        entry exists), else CoreCounters::busy_ns.
//     stats/other_info/nc_time_in_use/{total,present}   floor(b / 1000): MICROseconds
//     stats/other_info/flop_count/{total,present}       llround(flops / lnc)
//     stats/other_info/{model_load_count,reset_req_count,reset_fail_count,inference_count}  0
//     stats/status/<outcome>/{total,present}            the 24 driver outcomes. A runtime's
//        ExecutionCounters count on the first physical core (j = 0) of its lowest logical core:
//          success = completed                 execute_completed_with_error = completed_with_err
//          execute_completed_with_num_error = completed_with_num_err
//          timeout = timed_out                 exec_bad_input = incorrect_input
//          execute_failed_to_queue = failed_to_queue   generic_error = generic
//          hw_error = hardware                 unsupported_neff_version = model
//          resource_error = runtime
//        Written nowhere: `numerical` — the simulator counts every NaN error in both numerical
//        and completed_with_num_err, so the reader takes numerical =
//        execute_completed_with_num_error; `transient` — recoveries from corrected ECC, which the
//        driver does not count. Outcomes with no ExecutionCounters field (failure,
//        resource_nc_error, invalid_error, oob_error, hw_*_error, execute_sw_*, ...) are 0.
//        Counts are cumulative since "driver load": a runtime that exits leaves its last counts on
//        its core (retired totals), so no count is lost.
//     stats/memory_usage/device_mem/<cat>/{total,present,peak}
//        cat: constants model_code model_shared_scratchpad runtime_memory tensors = the sum over
//        runtimes of their CoreMemory entry with `core` == g, split evenly over the lnc physical
//        cores (the remainder on j = 0); driver_memory collectives nonshared_scratchpad
//        notifications dma_rings uncategorized = 0. total/present/peak as for host_mem.
//     stats/tensor_engine/pe_cntrs   "xrow_grp,mm_active,wl_active,idle\n", then "r,mm,wl,idle\n"
//        for r = 0..3, all alike: B = llround(b * 1.4) busy cycles, mm = B * 3 / 4 (integer),
//        wl = B - mm, idle = llround(max(0, device_time_ns - b) * 1.4). Always live.
//   A device whose snapshot.devices[N].present is false: its directory and class link are removed
//   (and rewritten in full when it comes back).
// Driver versions below 2.30.2 ("flat" counters): stats/status/* and stats/other_info/* move only
// when a process exits — each physical core shows the values it had when the last runtime on it
// exited (0 before any did); pe_cntrs and memory stay live.
// "Exits" means: in the previous Write's snapshot, not in this one. A runtime's counts are those
// of the last snapshot it appeared in (what it did between that Write and its exit is not seen);
// its cores' other_info values are those of the snapshot it is first missing from.
// An epoch change (snapshot.epoch differs from the previous write's: a device reset) restarts every
// counter: retired totals, flat values, present and peak all start again from zero.
//
// /proc (options.write_proc), under `<proc>/<pid>/` for each snapshot runtime, its command taken
// from the inventory process with the same pid (split on runs of spaces into argv, so a reader
// joining the arguments with single spaces gets the command back unless it had repeated spaces):
//   cmdline   argv, each argument followed by a NUL
//   comm      basename of argv[0], at most 15 bytes (as the kernel truncates it), + "\n"
//   status    "Name:\t<comm>\nState:\tS (sleeping)\nTgid:\t<pid>\nPid:\t<pid>\nPPid:\t1\n"
//             "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"
//   environ   "NEURON_PROCESS_TAG=<tag>\0" when the tag is not the pid as text, else empty
//   cgroup    "0::/user.slice/user-1000.slice/session-1.scope\n"
//   fd/<k>    symlinks, k = 3, 4, ..., to "/dev/neuron<N>" for each device N its cores lie on,
//             ascending N (the targets need not exist)
// A process that is gone has its directory removed. Nothing else is written under the proc root.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::simdev {

struct DriverTreeOptions {
  // Written to module/neuron/version; decides the layout (health_status from 2.28) and whether
  // counters are live (2.30.2 and later) or flat. Numbers separated by dots.
  std::string driver_version = "2.30.2.0";
  bool write_proc = true;
  // Non-empty: the kernel log the driver writes to, as a file: each Write appends a /dev/kmsg
  // record ("3,<seq>,<us>,-;neuron<N>: NEURON_HW_ERR=<TYPE> ... nd-id=<N> ...") for every
  // NEURON_HW_ERR event the snapshot's kernel_* counts gained since the last Write.
  std::string kernel_log = "";
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
  std::size_t files_written() const { return files_written_; }

 private:
  struct View;  // the inventory and snapshot of one Write, indexed
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
  Status AppendKernelLog(const Snapshot& snapshot);
  Status WriteProcessFiles(const View& view, const RuntimeSample& runtime, const std::string& dir);
  // Builds `dir`, which is not on disk yet, under a hidden name with `write(staging dir)`, then
  // renames it into place: a reader sees a new device or process whole or not at all.
  Status WriteNewDirectory(const std::string& dir,
                           const std::function<Status(const std::string&)>& write);
  // `path` with the staging directory being built replaced by its final name: what the caches
  // are keyed by.
  std::string Canonical(const std::string& path) const;
  // `dir`/{total,present} (and `peak` when `with_peak`), updating the counter's state.
  Status WriteCounter(const std::string& dir, std::uint64_t total, bool with_peak);
  Status WriteFile(const std::string& path, const std::string& content);
  Status WriteSymlink(const std::string& path, const std::string& target);
  Status RemoveTree(const std::string& path);

  std::string sysfs_root_;
  std::string proc_root_;
  DriverTreeOptions options_;
  std::vector<int> version_;  // options_.driver_version parsed; empty when it is not a version
  bool health_status_;        // 2.28+: stats/hardware/health_status/
  bool live_counters_;        // 2.30.2+: status/ and other_info/ move while a process runs
  bool started_ = false;
  std::uint64_t epoch_ = 0;
  std::size_t files_written_ = 0;
  std::string staging_from_;  // "<parent>/.<name>.new/" while WriteNewDirectory runs, else ""
  std::string staging_to_;    // "<parent>/<name>/"
  // What is on disk: file path -> content, symlink path -> target.
  std::unordered_map<std::string, std::string> files_;
  std::unordered_map<std::string, std::string> links_;
  std::unordered_map<std::string, CounterState> counters_;  // by counter directory
  std::map<std::uint32_t, ExecutionCounters> retired_;      // by logical core, on its j = 0
  std::map<std::uint64_t, FlatCore> flat_;                  // by (N << 32 | K)
  std::map<std::uint32_t, SeenRuntime> seen_;               // runtimes of the last Write, by pid
  std::set<std::uint32_t> devices_written_;                 // device directories on disk
  std::map<std::uint32_t, HardwareErrors> kernel_logged_;   // events in the kernel log, by device
  std::uint64_t kernel_seq_ = 0;
  bool kernel_log_created_ = false;
  std::map<std::uint32_t, std::size_t> processes_written_;  // pid -> fd links on disk
};

}  // namespace neuronmon::simdev
