// Internals of the Analyzer (analyzer.h): progress in the newest period — what a runtime
// completed, how busy it was, and the collective it sits in without any operation completing —
// and the hang rule over it (docs/diagnosis.md, rule 0), which comes before every other rule.
// The Analyzer keeps each runtime's step time and idleness between evaluations; these functions
// only read. Not part of the daemon's API. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "daemon/core/analysis/analysis.h"
#include "daemon/core/analysis/runtime_metrics.h"

namespace neuronmon::daemon::analysis_internal {

// What one runtime did in the newest period: executions completed, and the collective it sat in
// without any operation completing (none: it is not waiting in one).
struct Recent {
  std::uint64_t completed = 0;
  std::optional<CollectiveKind> waiting;
  double in_flight = 0;    // share of the period in collectives
  double utilization = 0;  // percent, mean over its cores
  double cpus = 0;         // CPUs its process used
};

// A runtime's newest period, from its samples `now` (in snapshot `end`) and `before` (in
// `previous`), `period` apart; it waits in a collective when none completed while collectives
// were in flight at least `in_flight` of the period.
Recent RecentOf(const Snapshot& end, const Snapshot& previous, const RuntimeSample& now,
                const RuntimeSample& before, Nanos period, double in_flight);

// Idle in the newest period: cores and process, with nothing completing and no collective in
// flight (one that waits for its peers is not idle: the hang rule judges it). A process whose CPU
// is unmeasured counts as idle on the host.
bool IsIdle(const RuntimeMetrics& m, const Recent& recent, const AnalyzerThresholds& t);

// Seconds a pause of `steps` of a runtime's recent step time (`step_ns`) takes, and at least
// `least`.
double PauseSeconds(double steps, Nanos least, std::int64_t step_ns);

// One runtime of a possibly hung job: how long since it last completed an execution, and what it
// did in the newest period.
struct Stalled {
  const RuntimeMetrics* m = nullptr;  // not null; outlives the Stalled
  double seconds = 0;                 // since its last completed execution
  double threshold = 0;  // seconds the rule waits for (0: no step seen yet, cannot tell)
  Recent recent;
};

// Hang detection, per job (processes sharing a command line; a process without one is its own
// job): every member on this host has completed nothing for hang_steps of its recent step times
// while at least one waits in a collective that does not complete. Members that are not in a
// collective are the ones that stopped joining; they are named, in `straggler` and Finding.hang.
// Returns findings by pid.
std::map<std::uint32_t, v1::Finding> Hangs(const std::vector<Stalled>& all,
                                           const AnalyzerThresholds& t);

}  // namespace neuronmon::daemon::analysis_internal
