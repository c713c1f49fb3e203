// Snapshot: the device at one instant, as every backend (the simulator, a real driver) produces it
// and the daemon's history keeps it. Cumulative counters only grow — except across a device reset,
// which bumps `epoch` — so any two snapshots give the rates and counts of the window between them.
// Gauges (memory, loaded models) are shared immutable objects, so consecutive snapshots that did
// not change them cost one pointer each. Plain values; thread-compatible.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/common/clock.h"
#include "proto/common/execution_counters.h"
#include "proto/common/hardware_errors.h"
#include "proto/common/latency_histogram.h"

namespace neuronmon {

// Indices into per-operation arrays; the order matches v1::CollectiveOp minus one.
enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
};
inline constexpr int kCollectiveKinds = 5;
// Each kind's name as every output and input spells it (neuron-monitor's `operations` keys,
// scenario files, /metrics labels), by CollectiveKind.
inline constexpr std::array<std::string_view, kCollectiveKinds> kCollectiveKindNames = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};

struct CoreCounters {
  std::uint64_t busy_ns = 0;
  double flops = 0;            // floating point operations executed
  double effective_flops = 0;  // of which useful model FLOPs
  // Physical sub-cores of a logical core (trn2 with logical NeuronCore config 2); size 0 otherwise.
  std::vector<std::uint64_t> physical_busy_ns;
};

struct EccCounters {
  std::uint64_t mem_corrected = 0;
  std::uint64_t mem_uncorrected = 0;
  std::uint64_t sram_corrected = 0;
  std::uint64_t sram_uncorrected = 0;
  // What each counter grew by since `earlier`; one that went backwards restarted, and counts its
  // own value (as LatencyHistogram::Minus).
  EccCounters Minus(const EccCounters& earlier) const;
};

// The driver's power reading, percent of the device's maximum power over its last interval (a
// minute on a real host). A gauge.
struct DevicePower {
  std::string unavailable = "no reading";  // non-empty: no reading, and why
  double average_percent = 0;
  double min_percent = 0;
  double max_percent = 0;
  std::int64_t sampled_unix_ns = 0;  // when the interval ended (0: unknown)
};

// The driver's device memory categories (stats/memory_usage/device_mem/<category> of each core),
// in this order: what the runtimes hold (model code, tensors, constants, shared scratchpad,
// runtime memory) and what the driver itself does.
inline constexpr std::array<const char*, 11> kDeviceMemoryCategories = {
    "model_code",     "tensors",       "constants",    "model_shared_scratchpad",
    "runtime_memory", "driver_memory", "collectives",  "nonshared_scratchpad",
    "notifications",  "dma_rings",     "uncategorized"};

// Index of `name` in kDeviceMemoryCategories, or of "uncategorized" for a name it lacks.
std::size_t DeviceMemoryCategory(std::string_view name);

// A device's memory by category, summed over its cores: bytes in use now and the high-water marks
// (the sum of the cores' own, since the driver loaded or the device was reset). A gauge.
struct DeviceMemory {
  bool measured = false;  // false: the backend cannot tell (outputs say unavailable, not 0)
  std::array<std::uint64_t, kDeviceMemoryCategories.size()> used{};
  std::array<std::uint64_t, kDeviceMemoryCategories.size()> peak{};
};

struct DeviceCounters {
  bool present = true;  // false: the device does not answer; its counters are meaningless
  // Non-empty: parts of the device could not be read ("PATH: problem; ..."); those counters keep
  // their previous values.
  std::string error;
  std::uint64_t hbm_read_bytes = 0;
  std::uint64_t hbm_write_bytes = 0;
  EccCounters ecc;
  HardwareErrors errors;
  // Non-empty: some of `errors` cannot be read (an older driver), and why; those stay 0.
  std::string errors_unavailable;
  // Which: bit i is kHardwareErrorFields[i] (the others are read and exported).
  std::uint32_t errors_missing = 0;
  // The components the firmware calls unhealthy (health_status/unhealthy_components, driver
  // 2.30.2+): "hbm", "sram", "link_3", ...; empty when none or not exposed.
  std::vector<std::string> unhealthy_components;
  // Non-empty: the kernel log cannot be read (the kernel_* counts of `errors` stay 0), and why.
  std::string kernel_log_unavailable;
  DevicePower power;
  DeviceMemory memory;
};

struct CollectiveCounters {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t busy_ns = 0;  // total time operations were in flight
  LatencyHistogram latency;
};

struct HostMemory {
  std::uint64_t application_memory = 0;
  std::uint64_t constants = 0;
  std::uint64_t dma_buffers = 0;
  std::uint64_t tensors = 0;
  std::uint64_t Total() const { return application_memory + constants + dma_buffers + tensors; }
};

struct CoreMemory {
  std::uint32_t core = 0;  // global logical core index
  std::uint64_t constants = 0;
  std::uint64_t model_code = 0;
  std::uint64_t model_shared_scratchpad = 0;
  std::uint64_t runtime_memory = 0;
  std::uint64_t tensors = 0;
  // The driver's other categories on the core (driver_memory, collectives, nonshared_scratchpad,
  // notifications, dma_rings, uncategorized): counted in the runtime's device total, not in AWS's
  // five-key breakdown.
  std::uint64_t other = 0;
  std::uint64_t Total() const {
    return constants + model_code + model_shared_scratchpad + runtime_memory + tensors + other;
  }
  // Each of the five runtime fields with the driver's device memory category it is in.
  std::array<std::pair<const char*, std::uint64_t>, 5> ByCategory() const {
    return {{{"constants", constants},
             {"model_code", model_code},
             {"model_shared_scratchpad", model_shared_scratchpad},
             {"runtime_memory", runtime_memory},
             {"tensors", tensors}}};
  }
};

struct SubgraphMemory {
  std::string name;  // "sg_00"
  std::uint32_t core = 0;
  std::uint32_t device = 0;
  HostMemory host;
  std::uint64_t constants = 0;
  std::uint64_t model_code = 0;
  std::uint64_t runtime_memory = 0;
  std::uint64_t tensors = 0;
  std::uint64_t DeviceTotal() const { return constants + model_code + runtime_memory + tensors; }
};

struct LoadedModel {
  std::string name;
  std::string uuid;
  std::uint32_t model_id = 0;
  bool is_running = false;
  std::vector<SubgraphMemory> subgraphs;
};

// A runtime's memory gauges.
struct RuntimeMemory {
  HostMemory host;
  std::vector<CoreMemory> cores;  // ascending core index
  std::vector<LoadedModel> models;
  // Non-empty: part of the runtime's device memory cannot be told apart (a device it shares with
  // another process, whose sysfs figures are per core, not per process), and why; `cores` then
  // holds only the devices it has alone.
  std::string device_unavailable;
  std::uint64_t DeviceTotal() const;
};

struct RuntimeSample {
  std::uint32_t pid = 0;
  std::string tag;                   // NEURON_PROCESS_TAG, or the pid as text
  std::string error;                 // non-empty: the runtime's device could not be read
  std::vector<std::uint32_t> cores;  // global logical cores it holds, ascending
  ExecutionCounters executions;
  LatencyHistogram total_latency;
  LatencyHistogram device_latency;
  std::uint64_t cpu_user_ns = 0;
  std::uint64_t cpu_system_ns = 0;
  std::array<CollectiveCounters, kCollectiveKinds> collectives;
  // Time in collective operations from a source that knows the time but not the operations (the
  // runtime's datastore: CC_TIME, the mean over its cores); nullopt where `collectives` has it.
  std::optional<std::uint64_t> collective_time_ns;
  std::shared_ptr<const RuntimeMemory> memory;  // never null in a Snapshot
};

// Host CPU time in USER_HZ ticks, as /proc/stat reports it.
struct CpuTimes {
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
};

struct CpuSample {
  std::uint32_t cpu = 0;  // the CPU's number (offline CPUs are absent)
  CpuTimes times;
};

struct HostSample {
  std::string cpu_error;  // non-empty: /proc/stat could not be read
  CpuTimes total;
  std::vector<CpuSample> per_cpu;
  std::uint64_t context_switches = 0;
  std::string memory_error;
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_used_bytes = 0;
  std::uint64_t swap_total_bytes = 0;
  std::uint64_t swap_used_bytes = 0;
};

// What a backend cannot measure, each with the reason shown to users. The simulator measures
// everything; a real host has no HBM traffic counter, and without AWS's neuron-monitor no
// per-application latency or collective figures (nor FLOPs before driver 2.30.2). A counter of an
// unmeasured signal stays 0 in the snapshot and must never be shown as a reading: every output
// omits it or names the reason. New signals go at the end: recordings keep the reasons by index.
enum class Signal : std::uint8_t {
  kHbmTraffic,    // DeviceCounters::hbm_read_bytes / hbm_write_bytes
  kEccCorrected,  // EccCounters::mem_corrected / sram_corrected
  kCoreActivity,  // CoreCounters (busy time; FLOPs too: unmeasured with it)
  kExecutions,    // RuntimeSample::executions
  kLatency,       // RuntimeSample::total_latency / device_latency
  kRuntimeCpu,    // RuntimeSample::cpu_user_ns / cpu_system_ns
  kCollectives,   // RuntimeSample::collectives
  kFlops,         // CoreCounters::flops / effective_flops (unmeasured whenever kCoreActivity is)
};
inline constexpr int kSignals = 8;

struct Unmeasured {
  std::array<std::string, kSignals> reasons;  // empty: measured
  const std::string& Reason(Signal s) const { return reasons[static_cast<std::size_t>(s)]; }
  bool Measured(Signal s) const { return Reason(s).empty(); }
  void Set(Signal s, std::string reason) {
    reasons[static_cast<std::size_t>(s)] = std::move(reason);
  }
  friend bool operator==(const Unmeasured&, const Unmeasured&) = default;
};

struct Snapshot {
  std::uint64_t seq = 0;  // assigned by the sampler
  MonoTime mono;          // daemon clock when read
  WallTime wall;
  Nanos device_time{0};             // the device's own clock (simulated time for simdev)
  std::uint64_t epoch = 0;          // increments when the device's counters restarted
  std::string error;                // non-empty: the whole device read failed
  std::vector<CoreCounters> cores;  // by global logical core index
  std::vector<DeviceCounters> devices;
  std::vector<RuntimeSample> runtimes;  // ascending pid
  HostSample host;
  // Null: the backend measured every signal (the simulator). Shared between snapshots while the
  // backend's sources do not change.
  std::shared_ptr<const Unmeasured> unmeasured;

  // The reason `signal` is not measured in this snapshot; empty when it is.
  const std::string& UnmeasuredReason(Signal signal) const;
};

// The runtime of `snapshot` with `pid` (runtimes are in ascending pid), or null.
const RuntimeSample* FindRuntime(const Snapshot& snapshot, std::uint32_t pid);

// The heap and inline bytes `snapshot` holds of its own: what each retained snapshot costs the
// history. The runtimes' memory breakdowns are shared between snapshots while they do not change
// and are left out; SharedMemoryBytes counts them. Estimates (allocator overhead not included),
// for sizing the history before it is filled.
std::size_t OwnBytes(const Snapshot& snapshot);
std::size_t SharedMemoryBytes(const Snapshot& snapshot);
// One memory breakdown's bytes (SharedMemoryBytes is their sum over a snapshot's runtimes).
std::size_t MemoryBytes(const RuntimeMemory& memory);

}  // namespace neuronmon
