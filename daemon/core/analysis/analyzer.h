// Analyzer: why NeuronCores sit below ~80% utilization, said live with the evidence. After each
// sample it looks at a sliding window of the history (metrics only — never the simulator's
// scenario — so it works for any backend) and gives each runtime a candidate verdict: hang,
// errors, idle_allocated, straggler, hbm_bound, collective_bound, input_bound or healthy (a busy,
// compute-bound core is healthy). A verdict changes only when a new candidate holds for most of
// the recent evaluations (hysteresis), or for the last few of them while a short window of the
// newest metrics alone agrees (a checkpoint darkens every window that contains it, not the short
// one after it); errors, hang and a stopped runtime's idle_allocated are reported at once (those
// rules themselves wait several step times); a straggler or hang comes or goes on a few agreeing
// evaluations. Where the kubelet's allocations are known, an idle_allocated verdict names the
// runtime's pod, a runtime using devices no pod was allocated gets a second finding, unallocated,
// and a pod allocated devices nothing uses is told (Analysis::allocations). Memory pressure (a
// device the runtime holds memory on nearly full) is said at once, before the performance rules,
// naming who holds the memory. The instance gets one summary finding. Thresholds live in one table
// (AnalyzerThresholds, docs/diagnosis.md). A signal the backend cannot measure
// (Snapshot::unmeasured) is never read as a 0: a rule that needs it is skipped, a verdict reached
// without a signal an earlier rule needed ends its summary with "signals unavailable: <signal>
// (<reason>)", and a runtime no rule can judge (utilization unmeasured; or below the busy threshold
// without collective figures) gets no verdict, which the instance summary names ("no verdict for N
// applications: signals unavailable: ..."). Pure and deterministic; not thread-safe (the daemon's
// io_context thread owns it). Its parts, in this folder: runtime_metrics.h (a runtime's figures
// over the window), rules.h (the candidate verdicts), hangs.h (progress and the hang rule),
// hysteresis.cc (candidates into verdicts), recent_window.h (the newest seconds that confirm a
// change), summary.h (the instance) and allocations.h.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/analysis/analysis.h"
#include "daemon/core/report/history.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/names/names.h"

namespace neuronmon::daemon {
namespace analysis_internal {
struct RuntimeMetrics;
class RecentWindow;
}  // namespace analysis_internal

class Analyzer {
 public:
  explicit Analyzer(AnalyzerThresholds thresholds = {});

  // Evaluates the newest snapshot of `history` against the window before it. `inventory` gives
  // peaks and which processes belong together (same command line).
  void Update(const History& history, const v1::Inventory& inventory);

  const Analysis& analysis() const { return analysis_; }
  // The latest evaluation: its window (history sequence numbers) and each runtime's candidate
  // verdict before hysteresis, whose evidence holds that window's figures — the figures a report
  // over the same window shows.
  struct Evaluation {
    std::uint64_t start_seq = 0;
    std::uint64_t end_seq = 0;
    std::map<std::uint32_t, v1::Finding> candidates;  // by pid
  };
  const Evaluation& last_evaluation() const { return evaluation_; }
  const AnalyzerThresholds& thresholds() const { return thresholds_; }
  // Forgets every verdict (the device restarted).
  void Reset();

 private:
  struct Track {
    std::deque<int> votes;  // candidate kinds, newest last
    v1::Finding verdict;    // kind UNSPECIFIED until the first verdict
    std::int64_t last_error_ns = 0;
    // Progress, in device time: when an execution last completed, and the step time then.
    std::int64_t last_progress_ns = -1;  // -1: none seen yet
    std::int64_t step_ns = 0;
    // Since when its cores and process have been idle with nothing completing (-1: they are not).
    std::int64_t idle_since_ns = -1;
  };

  // One evaluation on its way through Update's phases (analyzer.cc).
  struct Round;

  // Update's phases (analyzer.cc), in order: the window to evaluate (false: none yet, or the
  // counters restarted within it); each runtime's figures over it; each runtime's progress since
  // the previous sample (step time, idleness, a collective that does not complete); each
  // runtime's candidate through hysteresis into its verdict.
  bool FindWindow(const History& history, Round& round) const;
  void MeasureRuntimes(Round& round, const v1::Inventory& inventory) const;
  void TrackProgress(analysis_internal::RuntimeMetrics& m, Round& round);
  void DecideVerdict(const analysis_internal::RuntimeMetrics& m, Round& round,
                     analysis_internal::RecentWindow& recent);

  // The hysteresis (hysteresis.cc).
  std::uint32_t VoteLimit(Nanos period) const;
  // `waited`: the candidate's rule has itself waited several step times (a hang, a stop), so it
  // is adopted at once. `confirms(kind)`: whether the newest metrics alone bear out a change to
  // `kind` (computed only when a change is due on a few votes).
  void Decide(Track& track, const v1::Finding& candidate, bool waited, std::int64_t now_ns,
              Nanos period, const std::function<bool(v1::FindingKind)>& confirms);
  // Whether a candidate other than the verdict becomes it now: on enough of the remembered
  // votes, or the fast way (the last few agree and `confirms` bears them out).
  bool ChangeIsDue(const Track& track, const v1::Finding& candidate, std::uint32_t limit,
                   const std::function<bool(v1::FindingKind)>& confirms) const;
  // No rule could judge the runtime for want of signals: drops its verdict (except errors, which
  // stand until errors_clear has passed) and its votes.
  void Forget(Track& track, std::int64_t now_ns) const;

  AnalyzerThresholds thresholds_;
  std::map<std::uint32_t, Track> tracks_;
  Analysis analysis_;
  Evaluation evaluation_;
};

}  // namespace neuronmon::daemon
