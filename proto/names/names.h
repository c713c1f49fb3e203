// The lower-case names of protocol enums as every output spells them — JSON (neuron-monitor's
// bottleneck_analysis and collectives_stats), Prometheus labels and neuron-top's screen:
// "input_bound", "warning", "all_reduce". Values this build does not know are "unspecified".
// Also the small facts about groups and inventories every layer needs, in one place. Pure;
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "neuronmon/v1/event.pb.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon {

// Every group a Subscribe may name, in the order outputs list them: the runtime-level groups,
// the system-level ones, then totals.
const std::array<v1::Group, 14>& AllGroups();
// Whether a Subscribe gets `group` only by naming it (the cluster view's host summary, the job
// accounting): an empty group list means every other group.
bool IsNamedOnlyGroup(v1::Group group);
// Whether `group` is reported per Neuron application (a runtime-level group).
bool IsRuntimeGroup(v1::Group group);
// A group's name as neuron-monitor's configuration and documents spell it ("neuroncore_counters",
// ..., "totals"); "unknown" for anything else.
const char* GroupName(v1::Group group);

// Appends a piece of evidence to `f`: a metric's value, its unit, and the threshold it was compared
// with ("<", "<=", ">", ">=") — the one way analyzers, the daemon's and the cluster view's, state
// why.
void AddEvidence(v1::Finding& f, const char* name, double value, const char* unit, double threshold,
                 const char* comparison);
// The same for an event: a figure that came with the change (a counter's growth, a job's totals),
// compared with nothing.
void AddEvidence(v1::Event& e, std::string_view name, double value, const char* unit);

// What a hang finding says of the rank that stopped joining: "rank5 has not joined all_reduce for
// 41 s" (whole seconds, rounded down) — the words of the analyzer's summary and of the cluster
// view's verdict. Meaningful only when `hang.stuck_rank` is set (else the rank is elsewhere).
std::string StuckRankClause(const v1::HangDetail& hang);

// NeuronCores per device of `inventory`, at least 1 (so that it can divide a core index).
std::uint32_t CoresPerDevice(const v1::Inventory& inventory);

// A device's utilization, percent: the mean over its `per` cores of `core_percent` (indexed by
// global core; cores beyond it count as idle).
double DeviceUtilization(std::span<const double> core_percent, std::uint32_t device,
                         std::uint32_t per);

// The protocol's operation for a snapshot's collective kind.
v1::CollectiveOp CollectiveOpOf(CollectiveKind kind);

const char* FindingKindName(v1::FindingKind kind);
// An event kind as docs/events.md and the JSON spell it ("verdict", "device_health", ...).
const char* EventKindName(v1::EventKind kind);
// How bad a verdict is, for choosing the one that names a host, a cluster or an incident: hang 7,
// errors 6, memory_pressure 5, straggler 4, the bottlenecks and idle_allocated 2, healthy 1,
// anything else 0.
int VerdictRank(v1::FindingKind kind);
// The job a process belongs to, as tables show it in one short cell: the Slurm job
// ("4242", "4242_7" for an array task), else the Kubernetes "namespace/pod", else the first 12
// digits of the container id; "" when none is known. Not sanitized (the caller makes it
// terminal-safe).
std::string JobOf(const v1::Attribution& attribution);
// A Kubernetes pod as the outputs name it: "pod inference/vllm-0" ("pod vllm-0" when its
// namespace is unknown), from a process's attribution or from the kubelet's allocation.
std::string PodLabel(const v1::Attribution& attribution);
std::string PodLabel(const v1::PodAllocation& allocation);
// PodLabel followed by the container when it is known: "pod inference/vllm-0 (container vllm)".
std::string PodLabelWithContainer(const v1::Attribution& attribution);
std::string PodLabelWithContainer(const v1::PodAllocation& allocation);
// "ok", "degraded", "failed"; "none", "watch", "drain", "reset", "replace".
const char* HealthStateName(v1::HealthState state);
const char* HealthActionName(v1::HealthAction action);
const char* SeverityName(v1::Severity severity);
const char* CollectiveOpName(v1::CollectiveOp op);
// A signal a backend may be unable to measure, as /metrics labels and the analyzer's findings name
// it: "hbm_traffic", "ecc_corrected", "core_activity", "executions", "latency", "runtime_cpu",
// "collectives", "flops".
const char* SignalName(Signal signal);

}  // namespace neuronmon
