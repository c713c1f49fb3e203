// Internals of the Analyzer (analyzer.h): what the fast way of changing a verdict asks
// (docs/diagnosis.md, "Hysteresis"; the Analyzer's own hysteresis is in hysteresis.cc) — whether
// the newest seconds of metrics alone bear the change out. Not part of the daemon's API. Pure;
// not thread-safe (one evaluation's).
#pragma once

#include <optional>

#include "daemon/core/analysis/analysis.h"
#include "daemon/core/analysis/runtime_metrics.h"

namespace neuronmon::daemon::analysis_internal {

// The recent window of one evaluation: the last `thresholds.recent` of the history up to `end`.
// Its report is built on the first question, once per evaluation, and only when a change is due
// on a few agreeing evaluations. `history`, `end`, `inventory` and `t` must outlive it.
class RecentWindow {
 public:
  RecentWindow(const History& history, const Snapshot& end, Nanos period,
               const v1::Inventory& inventory, const AnalyzerThresholds& t);

  // Whether the recent window alone judges `m`'s runtime `kind` — and, for a change away from
  // healthy, finds its cores no busier than over the whole window (`m`) unless busy anyway: once
  // a pause is over, the newest metrics are busier than the window that still holds it (cores
  // busy in both were never paused). False when the history does not reach back that far
  // within the same counters, or the runtime is too new.
  bool Confirms(const RuntimeMetrics& m, v1::FindingKind kind);

 private:
  bool Agrees(const RuntimeMetrics& m, const v1::RuntimeReport& r, const RuntimeSample& now,
              const RuntimeSample& before, v1::FindingKind kind) const;

  const Snapshot* start_;  // null: the history does not reach back
  const Snapshot& end_;
  const v1::Inventory& inventory_;
  const AnalyzerThresholds& t_;
  std::optional<v1::Report> report_;
};

}  // namespace neuronmon::daemon::analysis_internal
