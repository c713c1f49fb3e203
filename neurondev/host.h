// Host: a real Neuron host read into the daemon's data model — the same Snapshot and Inventory
// the simulator produces, so every output works unchanged on top of it. Sources:
//   - the driver's sysfs tree (devices, memory by category, ECC, execution outcomes, busy time;
//     CounterTracker turns it into cumulative counters with epochs);
//   - /proc: which processes hold which /dev/neuron<N>, their command, user and CPU time;
//   - AWS's neuron-monitor, when installed, run as a child: per-application utilization,
//     execution stats, latency and per-model memory (see neurondev/runtime_source.h);
//   - on Kubernetes, the kubelet's PodResources API: which pod container was allocated which
//     devices (pod_resources.h), asked at most every 10 s without blocking Read, and the pod,
//     namespace and container of a process whose devices are all one container's.
// What no source gives (HBM traffic, corrected ECC counts, and without neuron-monitor latency,
// collectives, and FLOPs before driver 2.30.2) is named in Snapshot::unmeasured with the reason.
// Reads only files under the injected roots. Not thread-safe; Read() takes a few milliseconds on a
// 16-device host.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "neurondev/counter_tracker.h"
#include "neurondev/datastores.h"
#include "neurondev/kernel_log.h"
#include "neurondev/pod_resources.h"
#include "neurondev/processes.h"
#include "neurondev/runtime_source.h"
#include "neurondev/sysfs_sampler.h"
#include "neurondev/sysfs_tree.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

struct HostOptions {
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
  // AWS's neuron-monitor; empty: do not run it (runtime figures from /proc and sysfs only).
  std::string neuron_monitor = "/opt/aws/neuron/bin/neuron-monitor";
  // Physical cores per logical core; 0: the architecture's default (Trn2: 2, else 1), as the
  // Neuron runtime's NEURON_LOGICAL_NC_CONFIG.
  int logical_nc_config = 0;
  // Where the device nodes are (/dev/neuron<N>), asked for each device's PCI address.
  std::string dev_root = "/dev";
  // Where neuron-monitor's config file is written; empty: the temporary directory.
  std::string config_dir;
  TreeLimits tree_limits;
  // How the driver's tree is sampled at 1 Hz: the layout is re-discovered every 5 minutes; ECC
  // and health counters are re-read every 2 s, execution outcomes and memory usage over 20 s,
  // memory peaks, the other counts and power over a minute; busy time and FLOPs every second.
  // That keeps a 16-device trn2 within the daemon's CPU budget (bench/README.md). Tests that
  // compare every field at every read set all of them to 1.
  SamplerOptions sampler{
      .rediscover_every = 300, .errors_every = 2, .slow_every = 20, .rare_every = 60};
  ProcessLimits process_limits;
  ChildLimits child_limits;  // for neuron-monitor
  // Runtimes of neuron-monitor's documents tracked at once (IntegratorOptions::max_runtimes).
  std::size_t max_runtimes = 1024;
  // Reads between two scans of the process table (which processes hold which devices); the
  // processes' CPU time is read at every read. 1: scan at every read.
  std::uint32_t process_scan_every = 5;
  // Ask the kubelet's PodResources API (at pod_resources.socket_path, when it exists) which pods
  // were allocated which devices. false: never (no pod names, no allocations).
  bool kubernetes = true;
  PodResourcesOptions pod_resources;
  // Count the driver's NEURON_HW_ERR events in the kernel log (kernel_log.path, /dev/kmsg).
  // false: never (the devices' kernel_log_unavailable says so).
  bool kernel_log = true;
  KernelLogOptions kernel_log_options;
  // Read each runtime's datastore (its cores, busy and collective time, executions, memory and
  // runtime version, shared devices included) from the live driver: /dev/neuron<N> under dev_root
  // opened read-only while another process holds it (driver_datastores.h). false: never.
  bool driver_datastores = true;
  // Non-empty: read the datastores from image files, `<datastore_root>/neuron<N>/<pid>`
  // (DatastoreFiles), not from the driver.
  std::string datastore_root;
  // The daemon's own pid, never counted as a holder of a device (its datastore reads open the
  // devices too); 0: getpid().
  std::uint32_t own_pid = 0;
  // Datastores read per read at most (the processes' devices beyond it keep the driver's figures).
  std::size_t datastore_max_reads = 1024;
  bool operator==(const HostOptions&) const = default;
};

// Whether `sysfs_root` has a Neuron driver tree with at least one device.
bool HasNeuronDevices(const std::string& sysfs_root);

class Host {
 public:
  // Reads the tree once. Fails when there is no Neuron device (the message says where it looked).
  static Result<std::unique_ptr<Host>> Open(HostOptions options, MonoTime now);
  ~Host();

  // The inventory as of the last Read (devices, hardware figures), with the processes then and,
  // on Kubernetes, the kubelet's last answer: allocations, and each process's pod, namespace and
  // container when its cgroup puts it in a pod and every device it holds is allocated to one
  // container alone (never when two containers share one of its devices).
  v1::Inventory Inventory(MonoTime now);
  Snapshot Read(MonoTime now);
  // Work that may follow a Read without delaying it: the process scan's step (its budget is
  // processes.max_scan_time). Once called, the next Read does not take a step itself; a caller
  // that never calls it has the step taken inside each Read.
  void AfterRead();
  // "neuron: 16 x Trainium2, driver 2.30.2.0, runtime figures from neuron-monitor, pods from the
  // kubelet" (or ", pods unknown: <why>" on a node whose kubelet cannot be asked).
  std::string Describe() const;
  // Empty when per-application figures come from neuron-monitor; else why not (for logs and
  // neuron-top's title): "install aws-neuronx-tools for per-application figures".
  std::string RuntimeStatus() const;
  // What the sources left out or refused, for the daemon's own metrics: the kernel log (null when
  // kernel_log.enabled is false), the last complete process scan, and neuron-monitor's integrator
  // (null when runtime figures do not come from neuron-monitor).
  const KernelLog* kernel_log() const { return kernel_log_.get(); }
  // Core readings whose nc_time_in_use grew by more than the interval, clamped (CounterTracker).
  std::uint64_t clamped_busy_readings() const;
  const ProcessScan& last_process_scan() const { return processes_; }
  const MonitorIntegrator* runtime_integrator() const;

 private:
  explicit Host(HostOptions options);
  void Refresh(const TreeReading& reading);
  void ScanProcessesIfDue();
  // neuron-monitor names runtimes by pid alone: a runtime whose pid now names a process that
  // started at another time (/proc/<pid>/stat field 22) is forgotten, never continued. A pid whose
  // stat cannot be read is left as it is.
  void ForgetReusedRuntimePids();
  // The kernel log's events since the daemon started, into each device of `s`, attributed by the
  // serial numbers of `reading`'s devices.
  void AddKernelLog(const TreeReading& reading, Snapshot& s);
  // Allocations and the processes' pods from the kubelet's last answer, into `inv`.
  void AddKubernetes(v1::Inventory& inv) const;
  // Runtimes from the process table and the driver's tree (without neuron-monitor).
  // `interval_ns`: since the last read (0 at the first).
  std::vector<RuntimeSample> RuntimesFromProcesses(const TreeReading& reading,
                                                   std::uint64_t interval_ns);
  // A runtime's datastores summed over its devices.
  struct DatastoreTotals {
    ExecutionCounters executions;     // its own since it started
    std::uint64_t collective_us = 0;  // CC_TIME summed over the cores it uses
    std::size_t cores = 0;            // physical cores it uses
  };
  // The datastores of each process on each device it holds, at most datastore_max_reads of them,
  // by (pid, device); how each device's went into `devices` (the last error in datastore_note_).
  struct DeviceDatastores {
    int read = 0, none = 0, unread = 0;  // holders read, without one (NotFound), not read
    bool served() const { return unread == 0 && read > 0; }
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Datastores::Read> ReadDatastores(
      const std::vector<const NeuronProcess*>& live,
      std::map<std::uint32_t, DeviceDatastores>& devices);
  // Reads a device stays served while one holder's datastore cannot be read.
  static constexpr int kServedGrace = 3;
  // What a process's datastore on one device says of it: its counts there, its host memory, and
  // the cores it uses there with their memory.
  struct DatastoreShare {
    DatastoreTotals totals;
    HostMemory host;
    std::vector<CoreMemory> cores;
  };
  // What process `pid`'s datastore on device `d` says of it. `sysfs` is the device's reading;
  // `alone`: no other process holds it.
  DatastoreShare FromDatastore(const Datastores::Read& got, std::uint32_t pid, std::uint32_t d,
                               const DeviceReading* sysfs, bool alone, std::uint64_t interval_ns);
  // `share` into the runtime `r` (the cores it uses), its `memory` and `totals`.
  static void AddShare(const DatastoreShare& share, RuntimeSample& r, RuntimeMemory& memory,
                       DatastoreTotals& totals);
  std::shared_ptr<const Unmeasured> UnmeasuredNow(bool exclusive, bool runtime_figures);
  // Where a core's busy time and FLOPs came from at a read (the driver's, for a core in neither),
  // and that source's cumulative counts.
  enum class CoreSource { kNeuronMonitor, kDatastores };
  struct SourcedCores {
    CoreSource source = CoreSource::kNeuronMonitor;
    CoreCounters counters;
  };
  // Busy time and FLOPs per logical core: `runtime`'s cumulative counts for the cores it has, the
  // driver's for the rest. A core whose source changed counts from the next read on.
  std::vector<CoreCounters> MergeCores(const std::map<std::uint32_t, SourcedCores>& runtime);
  // On a driver whose per-core status counters move only when a process exits (before 2.30.2),
  // the hardware errors the live processes' datastores count on each device, into its errors.
  void AddDatastoreErrors(Snapshot& s);
  // neuron-monitor's latency, into the runtimes of the same pid.
  static void AddLatency(const std::vector<RuntimeSample>& from_monitor,
                         std::vector<RuntimeSample>& runtimes);

  HostOptions options_;
  SysfsSampler sampler_;
  MonoTime start_;
  std::unique_ptr<CounterTracker> tracker_;
  std::unique_ptr<RuntimeSource> runtime_source_;
  std::unique_ptr<PodResourcesClient> pod_resources_;  // null: kubernetes off
  std::unique_ptr<KernelLog> kernel_log_;              // null: kernel_log off
  std::unique_ptr<Datastores> datastores_;             // null: none read
  // From the datastores at the last read, by pid: the logical cores a runtime uses (busy or
  // holding memory there), and its runtime and framework versions.
  std::map<std::uint32_t, std::vector<std::uint32_t>> datastore_cores_;
  struct Versions {
    std::string runtime, framework;  // "" when the datastore names none
  };
  std::map<std::uint32_t, Versions> versions_;
  // Each runtime's share of each served device at its last read, by (pid, device): a read in which
  // one of its datastores cannot be read (a device's grace) keeps that share, so its cumulative
  // executions and time in collectives never fall and count again.
  std::map<std::pair<std::uint32_t, std::uint32_t>, DatastoreShare> last_shares_;
  // Processes holding devices whose datastores were read at the last read, with none of their own
  // there (v1::Process::no_datastore).
  std::set<std::uint32_t> no_datastore_;
  // Every runtime's figures came from datastores at the last read (so executions are measured on
  // any driver and on shared devices, and time in collectives is known).
  bool figures_from_datastores_ = false;
  // ... and there was at least one runtime: the snapshot's runtimes are the datastores'.
  bool datastore_runtimes_ = false;
  // Busy time and FLOPs per logical core summed from the datastores' growth since the daemon
  // started (cumulative).
  std::map<std::uint32_t, CoreCounters> datastore_core_totals_;
  std::map<std::uint32_t, CoreCounters> datastore_growth_;  // this read's, before the cap
  // The devices the datastores served at the last read, each with the reads of grace it used.
  std::map<std::uint32_t, int> served_;
  std::optional<MonoTime> last_read_;
  // The hardware errors the datastores read at the last read count, by device; and per device
  // what this epoch showed at least (AddDatastoreErrors).
  std::map<std::uint32_t, HardwareErrors> datastore_errors_;
  std::map<std::size_t, HardwareErrors> error_floor_;
  std::uint64_t error_floor_epoch_ = 0;
  std::string datastore_note_;  // why some datastore could not be read, for Describe
  std::string runtime_status_;
  // Busy time and FLOPs per logical core, accumulated from whichever source had the core in each
  // read (neuron-monitor's utilization, else the driver's counters), so switching is seamless.
  std::vector<CoreCounters> merged_cores_;
  std::vector<CoreCounters> previous_tracker_cores_;
  std::map<std::uint32_t, SourcedCores> previous_runtime_cores_;
  std::uint64_t merged_epoch_ = 0;
  v1::Inventory inventory_;
  std::vector<int> device_indices_;
  int lnc_ = 1;
  bool live_ = false;
  std::string driver_version_;
  std::string layout_note_;  // ", driver layout: ..." when nodes moved, are missing or unknown
  // The start time of each neuron-monitor runtime's pid when it was first seen.
  std::map<std::uint32_t, std::uint64_t> runtime_starts_;
  bool scan_stepped_ = false;  // AfterRead took the step since the last Read
  ProcessScanner scanner_;
  ProcessScan processes_;
  std::uint64_t reads_ = 0;
  std::string process_note_;
  std::vector<std::string> placement_errors_;  // why a device's PCI placement is unknown
  bool shared_devices_ = false;
  // Per pid: the epoch and device execution totals when first seen, so a runtime's counts start
  // at its own start rather than at the driver's.
  struct Baseline {
    std::uint64_t epoch = 0;
    ExecutionCounters executions;
  };
  std::map<std::uint32_t, Baseline> baselines_;
  std::shared_ptr<const Unmeasured> unmeasured_;
};

}  // namespace neuronmon::neurondev
