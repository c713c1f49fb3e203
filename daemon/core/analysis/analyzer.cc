#include "daemon/core/analysis/analyzer.h"

#include <algorithm>
#include <utility>

#include "daemon/core/analysis/allocations.h"
#include "daemon/core/analysis/hangs.h"
#include "daemon/core/analysis/recent_window.h"
#include "daemon/core/analysis/rules.h"
#include "daemon/core/analysis/runtime_metrics.h"
#include "daemon/core/analysis/summary.h"
#include "daemon/core/report/device_health.h"

namespace neuronmon::daemon {

using analysis_internal::Gaps;
using analysis_internal::RecentWindow;
using analysis_internal::RuntimeMetrics;
using analysis_internal::Stalled;

struct Analyzer::Round {
  const Snapshot* end = nullptr;       // the newest sample
  const Snapshot* previous = nullptr;  // the one before it, `period` earlier
  const Snapshot* start = nullptr;     // the window's start
  Nanos period{0};
  std::int64_t now_ns = 0;  // `end`'s wall time
  v1::Report window;        // the window's report
  std::vector<RuntimeMetrics> metrics;
  std::map<std::uint32_t, std::string> stragglers;  // by pid: the slow devices
  std::vector<Stalled> stalled;                     // into `metrics`
  std::map<std::uint32_t, v1::Finding> hangs;       // by pid
  Analysis next;
  Evaluation evaluation;
  Gaps gaps;
};

Analyzer::Analyzer(AnalyzerThresholds thresholds) : thresholds_(thresholds) {}

void Analyzer::Reset() {
  tracks_.clear();
  analysis_ = Analysis{};
  evaluation_ = Evaluation{};
}

void Analyzer::Update(const History& history, const v1::Inventory& inventory) {
  Round round;
  if (!FindWindow(history, round)) return;
  round.window = analysis_internal::WindowReport(*round.start, *round.end, inventory);
  MeasureRuntimes(round, inventory);
  round.stragglers = analysis_internal::Stragglers(round.metrics, thresholds_);
  for (RuntimeMetrics& m : round.metrics) TrackProgress(m, round);
  round.hangs = analysis_internal::Hangs(round.stalled, thresholds_);
  RecentWindow recent(history, *round.end, round.period, inventory, thresholds_);
  for (const RuntimeMetrics& m : round.metrics) DecideVerdict(m, round, recent);
  analysis_internal::AddAllocationFindings(inventory, *round.end, round.now_ns, analysis_,
                                           round.next);
  // Forget runtimes that exited.
  std::erase_if(tracks_,
                [&](const auto& t) { return FindRuntime(*round.end, t.first) == nullptr; });
  // The devices' health over the same window: a failed device keeps the instance from reading
  // healthy (the window lies in one epoch: FindWindow).
  std::vector<v1::DeviceHealth> devices;
  const std::string& corrected = round.end->UnmeasuredReason(Signal::kEccCorrected);
  for (std::size_t d = 0; d < round.end->devices.size(); ++d) {
    devices.push_back(DeviceHealthOf(*round.start, *round.end, d, /*reset=*/false, corrected));
  }
  round.next.instance = analysis_internal::Summarize(round.next, !round.end->runtimes.empty(),
                                                     round.now_ns, round.gaps, devices);
  round.next.devices = std::move(devices);
  analysis_ = std::move(round.next);
  evaluation_ = std::move(round.evaluation);
}

bool Analyzer::FindWindow(const History& history, Round& round) const {
  round.end = history.newest();
  if (round.end == nullptr || history.size() < 2) return false;
  round.previous = history.AtOrBefore(round.end->seq - 1);
  round.period = round.end->device_time - round.previous->device_time;
  if (round.period <= Nanos(0)) return false;
  round.start =
      analysis_internal::WindowStart(history, *round.end, thresholds_.window, round.period);
  const Snapshot* start = round.start;
  if (start == nullptr || start->epoch != round.end->epoch || start == round.end)
    return false;  // counters restarted
  round.now_ns = ToUnixNanos(round.end->wall);
  round.evaluation = Evaluation{start->seq, round.end->seq, {}};
  return true;
}

void Analyzer::MeasureRuntimes(Round& round, const v1::Inventory& inventory) const {
  std::map<std::uint32_t, std::string> commands;
  std::map<std::uint32_t, std::string> pods;
  for (const v1::Process& p : inventory.processes()) {
    commands[p.pid()] = p.command();
    const v1::Attribution& a = p.attribution();
    if (!a.pod().empty()) pods[p.pid()] = PodLabelWithContainer(a);
  }
  const v1::HbmStats& hbm = round.window.system().hbm_stats();
  for (const v1::RuntimeReport& r : round.window.runtimes()) {
    const RuntimeSample* now = FindRuntime(*round.end, r.pid());
    const RuntimeSample* before = FindRuntime(*round.start, r.pid());
    if (now == nullptr || before == nullptr) continue;  // too new to judge
    RuntimeMetrics& m =
        round.metrics.emplace_back(analysis_internal::Measure(r, hbm, *now, *before, inventory));
    m.command = commands[r.pid()];
    m.pod = pods[r.pid()];
    auto track = tracks_.find(r.pid());
    m.pressured =
        track != tracks_.end() && track->second.verdict.kind() == v1::FINDING_KIND_MEMORY_PRESSURE;
  }
  analysis_internal::MeasureMemory(round.metrics, *round.end, hbm, inventory);
}

// Progress since the previous sample: when the runtime last completed an execution, at what
// step time, and whether it now sits in a collective that does not complete (a Stalled for the
// hang rule), or idles (how long, against how long its steps say a pause may last).
void Analyzer::TrackProgress(RuntimeMetrics& m, Round& round) {
  const RuntimeSample* now = FindRuntime(*round.end, m.pid);
  const RuntimeSample* before = FindRuntime(*round.previous, m.pid);
  Track& track = tracks_[m.pid];
  if (before == nullptr || !m.Has(Signal::kExecutions)) return;
  const analysis_internal::Recent recent = analysis_internal::RecentOf(
      *round.end, *round.previous, *now, *before, round.period, thresholds_.hang_in_flight);
  const std::int64_t device_ns = round.end->device_time.count();
  if (recent.completed > 0) {
    const std::int64_t since =
        track.last_progress_ns >= 0 ? device_ns - track.last_progress_ns : round.period.count();
    const std::int64_t step = since / static_cast<std::int64_t>(recent.completed);
    track.step_ns = track.step_ns > 0 ? (3 * track.step_ns + step) / 4 : step;
    track.last_progress_ns = device_ns;
  }
  if (track.last_progress_ns < 0) return;  // never seen running: a hang cannot be told
  if (m.Has(Signal::kCollectives)) {
    const double since = 1e-9 * static_cast<double>(device_ns - track.last_progress_ns);
    const double wait = analysis_internal::PauseSeconds(thresholds_.hang_steps,
                                                        thresholds_.hang_min, track.step_ns);
    round.stalled.push_back({&m, since, wait, recent});
    m.waiting = recent.waiting.has_value();
  }
  if (!analysis_internal::IsIdle(m, recent, thresholds_)) {
    track.idle_since_ns = -1;
  } else if (track.idle_since_ns < 0) {
    track.idle_since_ns = round.previous->device_time.count();  // since that period's start
  }
  if (m.Has(Signal::kCoreActivity) && track.idle_since_ns >= 0 && track.step_ns > 0) {
    m.idle_seconds = 1e-9 * static_cast<double>(device_ns - track.idle_since_ns);
    m.stop_after = analysis_internal::PauseSeconds(thresholds_.stop_steps, thresholds_.stop_min,
                                                   track.step_ns);
  }
}

// The runtime's candidate — the hang rule's, else the rules' — then its verdict.
void Analyzer::DecideVerdict(const RuntimeMetrics& m, Round& round, RecentWindow& recent) {
  const auto straggler = round.stragglers.find(m.pid);
  const auto hang = round.hangs.find(m.pid);
  const bool hung = hang != round.hangs.end();
  std::string lacking;
  const v1::Finding& candidate = round.evaluation.candidates[m.pid] =
      hung ? hang->second
           : analysis_internal::Classify(
                 m, thresholds_, straggler == round.stragglers.end() ? "" : straggler->second,
                 &lacking);
  Track& track = tracks_[m.pid];
  if (candidate.kind() == v1::FINDING_KIND_UNSPECIFIED && !lacking.empty()) {
    Forget(track, round.now_ns);
    if (track.verdict.kind() == v1::FINDING_KIND_UNSPECIFIED)  // not a standing errors verdict
      round.gaps.undetermined[m.pid] = std::move(lacking);
  } else {
    // A hang, and a stop, come from rules that have already waited several step times.
    const bool waited = hung ||
                        (candidate.kind() == v1::FINDING_KIND_IDLE_ALLOCATED && m.Stopped()) ||
                        candidate.kind() == v1::FINDING_KIND_MEMORY_PRESSURE;
    // A runtime that sits in a collective that does not complete may be hanging: its verdict
    // holds until the hang rule, which waits a few step times, has decided.
    Decide(track, candidate, waited, round.now_ns, round.period,
           [&](v1::FindingKind kind) { return !m.waiting && recent.Confirms(m, kind); });
    if (!lacking.empty()) round.gaps.lacking.insert(std::move(lacking));
  }
  if (track.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED)
    round.next.runtimes[m.pid].push_back(track.verdict);
}

}  // namespace neuronmon::daemon
