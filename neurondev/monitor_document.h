// The documents AWS's `neuron-monitor` prints — one JSON object per line per period — read into
// values (ParseMonitorDocument), and the stream of them turned into the cumulative counters of a
// Snapshot (MonitorIntegrator). The schema is neuron-monitor's (reference/neuron-tools.md
// §1.5–1.7) plus our additive `collectives_stats` group (docs/json-schema.md); key names, units
// and numbers are kept as the document has them. Only the per-application part is read
// (`neuron_runtime_data`); `system_data` and the inventories come from elsewhere.
//
// The parser never throws and trusts nothing: sizes, nesting, counts and strings are bounded
// (MonitorLimits) before or while they are read. A document that is not JSON, not an object or
// over a bound is an error; a group whose content is malformed keeps its place with an `error`
// saying what was wrong (as neuron-monitor reports its own failures), so one bad field loses one
// group, not the document. Parsing is pure and thread-safe; a MonitorIntegrator is not
// thread-safe (the one thread reading neuron-monitor's output owns it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

struct MonitorLimits {
  // neuron-monitor's documents are ~1.5 KB idle and ~1.5 MB (pretty-printed) with 32 runtimes.
  std::size_t max_document_bytes = 16 << 20;
  std::size_t max_depth = 32;  // nesting of objects and arrays; the schema needs 9
  std::size_t max_runtimes = 1024;
  std::size_t max_cores_per_runtime = 4096;  // neuroncores_in_use / neuroncore_memory_usage
  std::uint32_t max_core_index = 65535;      // a core key above this is malformed
  std::size_t max_physical_cores = 16;       // `v3d` entries of one logical core
  std::size_t max_models_per_runtime = 1024;
  std::size_t max_subgraphs_per_model = 4096;
  std::size_t max_string_bytes = 4096;  // tags, error texts, model names (cut, not refused)
};

// What every group carries.
struct MonitorGroup {
  // Seconds the group's figures cover, as the document says; absent when missing or not a number.
  std::optional<double> period;
  // neuron-monitor's error ("" when fine), or — prefixed "malformed: " — why this parser refused
  // the group's content, whose figures are then left at zero.
  std::string error;
};

struct PhysicalCoreUtilization {
  std::uint32_t index = 0;  // N of `nc_v3.<N>`: the physical core's global index
  double utilization = 0;   // percent of the period
};

struct CoreUtilization {
  std::uint32_t core = 0;                         // the key: global logical core index
  double utilization = 0;                         // `neuroncore_utilization`, percent of the period
  std::optional<double> flops;                    // FLOP/s over the period (Neuron 2.7+)
  std::optional<double> effective_flops;          // FLOP/s (Neuron 2.9+)
  std::vector<PhysicalCoreUtilization> physical;  // `v3d` (Trn2, logical cores), ascending index
};

struct NeuroncoreCounters : MonitorGroup {
  std::vector<CoreUtilization> cores;  // `neuroncores_in_use`, ascending core
};

// Latency percentiles of the executions of one period, in seconds.
struct LatencyPercentiles {
  double p0 = 0, p1 = 0, p25 = 0, p50 = 0, p75 = 0, p99 = 0, p100 = 0;
};

struct ExecutionStats : MonitorGroup {
  // `execution_summary` (completed ... failed_to_queue) and `error_summary` (generic ...
  // hardware): counts of this period.
  ExecutionCounters counts;
  std::optional<LatencyPercentiles> total_latency;   // null in the document: nothing executed
  std::optional<LatencyPercentiles> device_latency;  // null in the document: nothing executed
};

struct MemoryUsed : MonitorGroup {
  std::uint64_t host_bytes = 0;    // neuron_runtime_used_bytes.host
  std::uint64_t device_bytes = 0;  // neuron_runtime_used_bytes.neuron_device
  // usage_breakdown.host → host; usage_breakdown.neuroncore_memory_usage → cores (ascending);
  // loaded_models → models (subgraphs in key order; each subgraph's usage_breakdown.host →
  // host, usage_breakdown.neuron_device → its device categories; neuroncore_index → core,
  // neuron_device_index → device).
  RuntimeMemory memory;
};

struct RuntimeVcpuUsage : MonitorGroup {
  double user = 0;    // vcpu_usage.user, percent
  double system = 0;  // vcpu_usage.system, percent
};

struct CollectiveOperation {
  CollectiveKind kind = CollectiveKind::kAllReduce;  // the key: "all_reduce", ...
  std::uint64_t count = 0;                           // completed within the period
  std::uint64_t bytes = 0;
  double operations_per_second = 0;
  double bytes_per_second = 0;
  double mean_message_bytes = 0;
  double time_share = 0;                      // fraction 0–1 of the period in flight
  std::optional<LatencyPercentiles> latency;  // null: none completed
};

// Our additive group (docs/json-schema.md); AWS's neuron-monitor does not print it.
struct CollectivesStats : MonitorGroup {
  std::vector<CollectiveOperation> operations;  // in CollectiveKind order
  double time_share = 0;
};

// One entry of `neuron_runtime_data`: a Neuron application.
struct MonitorRuntime {
  std::uint32_t pid = 0;
  std::string tag;    // neuron_runtime_tag (NEURON_PROCESS_TAG, or the pid as text)
  std::string error;  // non-empty: neuron-monitor could not collect from this application
  // The groups of `report`; absent when the document does not have them.
  std::optional<NeuroncoreCounters> neuroncore_counters;
  std::optional<ExecutionStats> execution_stats;
  std::optional<MemoryUsed> memory_used;
  std::optional<RuntimeVcpuUsage> neuron_runtime_vcpu_usage;
  std::optional<CollectivesStats> collectives_stats;
};

struct MonitorDocument {
  std::vector<MonitorRuntime> runtimes;  // document order
  // Entries that were left out ("neuron_runtime_data[2]: pid: expected an integer", a duplicate
  // pid) — tolerated, reported.
  std::vector<std::string> problems;
};

// Parses one document (a line of neuron-monitor's output; pretty-printed JSON is accepted too).
// Errors (kInvalidArgument): larger than max_document_bytes or nested deeper than max_depth
// (both checked before parsing), not JSON (invalid UTF-8 included), not an object,
// `neuron_runtime_data` not an array or longer than max_runtimes. Never throws.
Result<MonitorDocument> ParseMonitorDocument(std::string_view line,
                                             const MonitorLimits& limits = {});

struct IntegratorOptions {
  // Runtimes tracked at once (config processes.max_runtimes): a document listing more (its own
  // limit is MonitorLimits::max_runtimes) keeps the first ones in ascending pid, the rest counted
  // in dropped().
  std::size_t max_runtimes = 1024;
  // A counter group whose period is missing, not above 0 or above this is skipped with an error:
  // its counts cannot be placed in time.
  double max_period_seconds = 3600;
  // neuron_runtime_vcpu_usage percentages are shares of the whole host's vCPU capacity (as the
  // report builder turns them back), so CPU time = percent/100 × period × host_vcpus.
  std::uint32_t host_vcpus = 1;
};

// Whether one group of a runtime has given figures, and why not.
struct GroupStatus {
  bool available = false;  // its figures were integrated at least once
  std::string error;       // the latest document's error for it ("" when fine or absent)
};

struct RuntimeStatus {
  std::uint32_t pid = 0;
  GroupStatus neuroncore_counters;
  GroupStatus execution_stats;
  GroupStatus memory_used;
  GroupStatus neuron_runtime_vcpu_usage;
  GroupStatus collectives_stats;  // never available from AWS's neuron-monitor
  bool collectives_available() const { return collectives_stats.available; }
};

// Adds up a stream of documents into cumulative counters: each document's per-period figures
// (counts, utilization × period, percent × period) are added to the runtime's and the core's
// totals, so any two reads give the figures of the window between them, as the simulator's do.
// Memory is a gauge: the latest figure replaces the previous one. Every group of a document is
// taken as freshly collected: run neuron-monitor with one period for all runtime groups, since a
// group it re-emits because it was not yet due again would be counted twice.
class MonitorIntegrator {
 public:
  explicit MonitorIntegrator(IntegratorOptions options = {});

  // Integrates `doc`, received at `now` (REQUIRES: not earlier than the previous call). A group
  // with an error, or (counter groups) a period outside (0, max_period_seconds], adds nothing and
  // is reported in errors() and Statuses(); an entry with an error adds nothing and sets the
  // runtime's `error`. A runtime the document does not list has exited (or neuron-monitor no
  // longer sees it: its pid may be another process's by now) and is dropped at once.
  // Latency is an approximation: a document gives only percentiles of its period, so the
  // period's n executions (completed, with or without errors) are placed at the seven points
  // p0, p1, p25, p50, p75, p99, p100 with the shares of the distribution each stands for (0.5,
  // 12.5, 24.5, 25, 24.5, 12.5, 0.5 %, apportioned by largest remainder). The histogram's
  // quantiles at those points match the document's within bucket resolution once every point
  // has a count (n >= 200); fewer executions go to the central points first. Its sum is not the
  // true sum of latencies.
  void Add(const MonitorDocument& doc, MonoTime now);

  // The runtimes of the latest document, ascending pid: tag (neuron_runtime_tag, else the pid),
  // error, cores (those of the latest neuroncore_counters that were busy or held device memory —
  // neuron-monitor may list every core of the host for every runtime), cumulative executions,
  // latencies (approximated: see Add), CPU time and collectives; memory never null.
  std::vector<RuntimeSample> Runtimes() const;
  // For the same runtimes in the same order: which groups gave figures and their latest errors.
  std::vector<RuntimeStatus> Statuses() const;
  // Forgets the runtime of `pid` (the pid now names another process): it leaves Runtimes() at
  // once, and a later document listing the pid starts it afresh.
  void Forget(std::uint32_t pid) { runtimes_.erase(pid); }
  // Cumulative counters per global logical core: busy_ns (utilization × period; when several
  // runtimes list a core, their sum within one document is capped at its period), flops and
  // effective_flops (FLOP/s × period), physical_busy_ns (from `v3d`). Cores are never dropped.
  std::map<std::uint32_t, CoreCounters> Cores() const;
  // What made figures unavailable in the latest document: its problems, entry and group errors,
  // skipped periods ("pid 784315 neuron_runtime_vcpu_usage: open /proc/...").
  const std::vector<std::string>& errors() const { return errors_; }
  // False when a core of the latest document's integrated neuroncore_counters lacks `flops` or
  // `effective_flops` (neuron-monitor before Neuron 2.7 / 2.9): Cores()' FLOPs are not measured.
  bool flops_reported() const { return flops_reported_; }
  // Runtimes left out because max_runtimes were tracked, over every document so far.
  std::uint64_t dropped() const { return dropped_; }

 private:
  struct Tracked {
    RuntimeSample sample;
    RuntimeStatus status;
    MonoTime last_seen;  // the document that listed it last
  };

  // The runtime's entry, created on first sight; refreshes its tag, error and last sighting.
  Tracked& Track(const MonitorRuntime& runtime, MonoTime now);
  void AddRuntime(const MonitorRuntime& runtime, MonoTime now);
  // The period of `group` (seconds) when its figures can be added — present, no error and, for
  // `counters`, a period in (0, max_period_seconds]; otherwise records why in `status` and
  // errors_.
  std::optional<double> Usable(const MonitorRuntime& runtime, const MonitorGroup* group,
                               const char* name, bool counters, GroupStatus& status);

  IntegratorOptions options_;
  std::map<std::uint32_t, Tracked> runtimes_;
  std::map<std::uint32_t, CoreCounters> cores_;
  std::vector<std::string> errors_;
  std::uint64_t dropped_ = 0;
  bool flops_reported_ = true;
};

}  // namespace neuronmon::neurondev
