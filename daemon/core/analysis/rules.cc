#include "daemon/core/analysis/rules.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "proto/common/order_statistics.h"

namespace neuronmon::daemon::analysis_internal {
namespace {

// "signals unavailable: collectives (<reason>), hbm_traffic (<reason>)" for the signals in
// `consulted` that `m` lacks; empty when it lacks none of them.
std::string Lacking(const RuntimeMetrics& m, const std::vector<Signal>& consulted) {
  std::string out;
  for (Signal s : consulted) {
    if (m.Has(s)) continue;
    out += out.empty() ? "signals unavailable: " : ", ";
    out += std::string(SignalName(s)) + " (" + m.Unavailable(s) + ")";
  }
  return out;
}

// One runtime's way through the rules: the finding they build and the signals consulted so far.
// Each rule returns whether it decided — a verdict, or none for want of a signal it needs.
struct Judgement {
  const RuntimeMetrics& m;
  const AnalyzerThresholds& t;
  std::string* lacking;
  v1::Finding f;
  std::vector<Signal> consulted;

  // The verdict `kind`; its summary ends with the consulted signals `m` lacks.
  bool Say(v1::FindingKind kind, std::string summary) {
    *lacking = Lacking(m, consulted);
    f.set_kind(kind);
    f.set_summary(lacking->empty() ? std::move(summary) : summary + "; " + *lacking);
    return true;
  }
  // No verdict: the next rule needs a signal `m` lacks.
  bool Undecided() {
    *lacking = Lacking(m, consulted);
    f = v1::Finding{};
    return true;
  }
};

// Whether it ran nothing in the window, as far as anyone can tell.
bool RanNothing(const RuntimeMetrics& m) {
  return !m.Has(Signal::kExecutions) || m.executions == 0;
}

std::string PodClause(const RuntimeMetrics& m) { return m.pod.empty() ? "" : "; " + m.pod; }

// Its device does not answer, or executions failed in the window.
bool ErrorsRule(Judgement& j) {
  const RuntimeMetrics& m = j.m;
  if (!m.device_error.empty()) return j.Say(v1::FINDING_KIND_ERRORS, m.device_error);
  j.consulted.push_back(Signal::kExecutions);
  const bool executions = m.Has(Signal::kExecutions);
  if (executions && m.errors > 0) {
    AddEvidence(j.f, "failed_executions", static_cast<double>(m.errors), "count", 0, ">");
    return j.Say(v1::FINDING_KIND_ERRORS,
                 Fmt("%.0f failed executions or hardware errors in the last window",
                     static_cast<double>(m.errors)));
  }
  if (executions && m.transient > 0)
    AddEvidence(j.f, "corrected_errors", static_cast<double>(m.transient), "count", 0, ">");
  return false;
}

// A device it holds memory on is nearly full: the next allocation may fail, whatever else
// holds it back — unless it sits idle itself (idle_allocated says so; the busy neighbour's
// memory_pressure names it).
bool MemoryPressureRule(Judgement& j) {
  const RuntimeMetrics& m = j.m;
  const AnalyzerThresholds& t = j.t;
  const double full = t.memory_pressure_percent - (m.pressured ? t.memory_pressure_clear : 0);
  const bool idle_holder =
      m.Has(Signal::kCoreActivity) && m.utilization < t.idle_percent && RanNothing(m) && !m.loading;
  const bool pressed = m.memory_device >= 0 && m.memory_percent >= full && !idle_holder;
  if (!pressed) return false;
  AddEvidence(j.f, "hbm_used_percent", m.memory_percent, "percent", full, ">=");
  std::string summary = DeviceName(m.memory_device) + Fmt(" HBM %.0f%% full (", m.memory_percent) +
                        GiB(m.memory_used) + " of " + GiB(m.memory_total) + "): it holds " +
                        GiB(m.memory_own);
  if (!m.memory_category.empty()) summary += ", most of it " + m.memory_category;
  if (!m.memory_neighbour.empty()) summary += "; " + m.memory_neighbour;
  return j.Say(v1::FINDING_KIND_MEMORY_PRESSURE, std::move(summary));
}

// Cores held unused: idle, nothing run, and the process idle on the host too — one busy there
// (reading input, writing a checkpoint) makes its cores wait for it, which the rules below
// tell. Without its CPU figures the verdict says so. Or it stopped: cores and process idle,
// nothing completed, for longer than its steps take — told before a whole window has gone by
// without an execution. No rule from here on can judge it without its cores' activity.
bool HeldUnusedRules(Judgement& j) {
  const RuntimeMetrics& m = j.m;
  const AnalyzerThresholds& t = j.t;
  j.consulted.push_back(Signal::kCoreActivity);
  if (!m.Has(Signal::kCoreActivity)) return j.Undecided();
  j.consulted.push_back(Signal::kRuntimeCpu);
  const bool cpu = m.Has(Signal::kRuntimeCpu);
  const double u = m.utilization;
  if (u < t.idle_percent && RanNothing(m) && (!cpu || m.process_cpus < t.host_busy_cpus)) {
    if (cpu) AddEvidence(j.f, "process_cpus", m.process_cpus, "cpus", t.host_busy_cpus, "<");
    return j.Say(
        v1::FINDING_KIND_IDLE_ALLOCATED,
        Fmt(m.Has(Signal::kExecutions) ? "holds its NeuronCores but ran nothing (%.1f%% busy)"
                                       : "holds its NeuronCores at %.1f%% busy",
            u) +
            PodClause(m));
  }
  if (m.Stopped()) {
    AddEvidence(j.f, "idle_seconds", m.idle_seconds, "seconds", m.stop_after, ">=");
    return j.Say(
        v1::FINDING_KIND_IDLE_ALLOCATED,
        Fmt("holds its NeuronCores but has run nothing for %.0f s", std::floor(m.idle_seconds)) +
            PodClause(m));
  }
  j.consulted.pop_back();
  return false;
}

// A slow device of its job (Stragglers named it): the others wait for it in collectives.
bool StragglerRule(Judgement& j, const std::string& straggler) {
  const RuntimeMetrics& m = j.m;
  j.consulted.push_back(Signal::kCollectives);
  if (m.Has(Signal::kCollectives)) {
    AddEvidence(j.f, "collective_time_share_percent", 100 * m.collective, "percent",
                100 * j.t.collective_share, m.collective >= j.t.collective_share ? ">=" : "<");
  }
  if (straggler.empty()) return false;
  j.f.set_straggler(straggler);
  return j.Say(v1::FINDING_KIND_STRAGGLER,
               straggler + " is slower than its peers, which wait for it in collectives");
}

// HBM bandwidth matters only when FLOP/s are low enough for the cores to be starved of it.
// Unmeasured FLOP/s (their 0 is not a reading) may be low: the rule cannot judge without them.
bool HbmBoundRule(Judgement& j) {
  const RuntimeMetrics& m = j.m;
  const AnalyzerThresholds& t = j.t;
  j.consulted.push_back(Signal::kFlops);
  const bool flops = m.Has(Signal::kFlops);
  const bool low_flops = flops && m.flops_fraction <= t.flops_fraction;
  if (!flops || low_flops) j.consulted.push_back(Signal::kHbmTraffic);
  const bool memory_bound = low_flops && m.Has(Signal::kHbmTraffic) && m.hbm >= t.hbm_percent;
  if (!memory_bound) return false;
  AddEvidence(j.f, "hbm_bandwidth_percent", m.hbm, "percent", t.hbm_percent, ">=");
  AddEvidence(j.f, "flops_percent_of_peak", 100 * m.flops_fraction, "percent",
              100 * t.flops_fraction, "<=");
  return j.Say(v1::FINDING_KIND_HBM_BOUND,
               Fmt("HBM bandwidth at %.0f%% of peak while FLOP/s reach only %.0f%% of peak", m.hbm,
                   100 * m.flops_fraction));
}

bool BusyRule(Judgement& j) {
  const RuntimeMetrics& m = j.m;
  if (m.utilization >= j.t.busy_percent) {
    std::string summary = Fmt("NeuronCores %.0f%% busy", m.utilization);
    if (m.Has(Signal::kFlops)) summary += Fmt(" at %.0f%% of peak FLOP/s", 100 * m.flops_fraction);
    return j.Say(v1::FINDING_KIND_HEALTHY, std::move(summary));
  }
  return false;
}

// Below the busy threshold: waiting in collectives, or between executions for the host.
void WaitingRules(Judgement& j) {
  const RuntimeMetrics& m = j.m;
  const AnalyzerThresholds& t = j.t;
  const double u = m.utilization;
  if (!m.Has(Signal::kCollectives)) {  // only the time in collectives tells which
    j.Undecided();
    return;
  }
  const double idle_outside = std::max(0.0, 1 - u / 100 - m.collective);
  if (m.collective >= t.collective_share ||
      (m.collective >= t.fast_collective_share && m.collective > idle_outside)) {
    j.Say(v1::FINDING_KIND_COLLECTIVE_BOUND,
          Fmt("%.0f%% of the time in collectives; cores only %.0f%% busy", 100 * m.collective, u));
    return;
  }
  // What makes it input-bound rather than collective-bound: the cores wait between executions
  // longer than they wait in collectives (compared honestly: both shares are small near 80%).
  AddEvidence(j.f, "idle_between_executions_percent", 100 * idle_outside, "percent",
              100 * m.collective, idle_outside >= m.collective ? ">=" : "<");
  j.Say(v1::FINDING_KIND_INPUT_BOUND, Fmt("cores idle %.0f%% of the time between executions while "
                                          "collectives take %.0f%%: the host "
                                          "does not feed them fast enough",
                                          100 * idle_outside, 100 * m.collective));
}

// Whether `m`'s figures let a straggler be told: its cores' activity and its collectives.
bool Judged(const RuntimeMetrics& m) {
  return m.Has(Signal::kCoreActivity) && m.Has(Signal::kCollectives);
}

// A job's member much busier than its median while the others wait in collectives: every member
// is told the busy one's devices.
void JobStragglers(const std::vector<RuntimeMetrics>& all, const AnalyzerThresholds& t,
                   std::map<std::uint32_t, std::string>& out) {
  std::map<std::string, std::vector<const RuntimeMetrics*>> jobs;
  for (const RuntimeMetrics& m : all) {
    if (Judged(m) && m.collective > 0 && !m.command.empty()) jobs[m.command].push_back(&m);
  }
  for (const auto& [command, members] : jobs) {
    if (members.size() < 3) continue;
    std::vector<double> u, c;
    for (const RuntimeMetrics* m : members) u.push_back(m->utilization), c.push_back(m->collective);
    const double mu = Median(u), mc = Median(c);
    const RuntimeMetrics* top =
        *std::max_element(members.begin(), members.end(),
                          [](auto* a, auto* b) { return a->utilization < b->utilization; });
    if (top->utilization - mu < t.straggler_gap_points || mc < t.straggler_peer_share ||
        top->collective > 0.6 * mc) {
      continue;
    }
    std::string name;
    for (int d : top->devices) name += (name.empty() ? "" : ",") + DeviceName(d);
    for (const RuntimeMetrics* m : members) out[m->pid] = name;
  }
}

// Within one runtime over three devices or more, one device much busier than the others.
void DeviceStragglers(const std::vector<RuntimeMetrics>& all, const AnalyzerThresholds& t,
                      std::map<std::uint32_t, std::string>& out) {
  for (const RuntimeMetrics& m : all) {
    if (out.count(m.pid) || !Judged(m) || m.device_utilization.size() < 3 ||
        m.collective < t.straggler_peer_share)
      continue;
    const double mu = Median(m.device_utilization);
    const auto top = std::max_element(m.device_utilization.begin(), m.device_utilization.end());
    if (*top - mu >= t.straggler_gap_points)
      out[m.pid] =
          DeviceName(m.devices[static_cast<std::size_t>(top - m.device_utilization.begin())]);
  }
}

}  // namespace

v1::Finding Classify(const RuntimeMetrics& m, const AnalyzerThresholds& t,
                     const std::string& straggler, std::string* lacking) {
  Judgement j{m, t, lacking, {}, {}};
  j.f.set_subject(m.tag);
  j.f.set_pid(m.pid);
  const double u = m.utilization;
  if (m.Has(Signal::kCoreActivity)) {
    AddEvidence(j.f, "utilization_percent", u, "percent", t.busy_percent,
                u < t.busy_percent ? "<" : ">=");
  }
  if (ErrorsRule(j) || MemoryPressureRule(j)) return j.f;
  if (m.loading && RanNothing(m)) return v1::Finding{};  // still loading the model
  if (HeldUnusedRules(j) || StragglerRule(j, straggler) || HbmBoundRule(j) || BusyRule(j))
    return j.f;
  WaitingRules(j);
  return j.f;
}

std::map<std::uint32_t, std::string> Stragglers(const std::vector<RuntimeMetrics>& all,
                                                const AnalyzerThresholds& t) {
  std::map<std::uint32_t, std::string> out;
  JobStragglers(all, t, out);
  DeviceStragglers(all, t, out);
  return out;
}

const char* Advice(v1::FindingKind k) {
  switch (k) {
    case v1::FINDING_KIND_INPUT_BOUND:
      return "feed the cores faster: more DataLoader workers, prefetching (e.g. MpDeviceLoader), "
             "pre-tokenised data, or a larger batch per step";
    case v1::FINDING_KIND_COLLECTIVE_BOUND:
      return "overlap gradient collectives with the backward pass, use larger buckets or gradient "
             "accumulation, or shard optimizer state to cut data-parallel traffic";
    case v1::FINDING_KIND_HBM_BOUND:
      return "raise arithmetic intensity: fuse element-wise ops, use larger matmul tiles or batch, "
             "keep activations on chip, or use FP8/BF16 to halve the bytes moved";
    case v1::FINDING_KIND_STRAGGLER:
      return "check the slow device (throttling, ECC, a noisy neighbour); drain or replace it, or "
             "rebalance the work across ranks";
    case v1::FINDING_KIND_IDLE_ALLOCATED:
      return "exit the process or unload the model to free the NeuronCores, or start work on them";
    case v1::FINDING_KIND_UNALLOCATED:
      return "run it in a pod that requests the devices (aws.amazon.com/neuron or neuroncore), or "
             "stop it: the scheduler may give the same devices to a pod";
    case v1::FINDING_KIND_ERRORS:
      return "read the runtime's log; uncorrectable ECC or a lost device means draining the device";
    case v1::FINDING_KIND_MEMORY_PRESSURE:
      return "free device memory before an allocation fails: a smaller batch or sequence length, "
             "a smaller KV cache, activation checkpointing, or the model sharded over more "
             "NeuronCores; or move the neighbour holding memory on that device";
    case v1::FINDING_KIND_HANG:
      return "look at the rank that stopped joining (py-spy dump or gdb on its process, its data "
             "loader, its host); the job will not move on by itself: restart it from the last "
             "checkpoint";
    default:
      return "";
  }
}

v1::Severity SeverityOf(v1::FindingKind k) {
  switch (k) {
    case v1::FINDING_KIND_HEALTHY:
      return v1::SEVERITY_INFO;
    case v1::FINDING_KIND_ERRORS:
    case v1::FINDING_KIND_HANG:
      return v1::SEVERITY_CRITICAL;
    default:
      return v1::SEVERITY_WARNING;
  }
}

}  // namespace neuronmon::daemon::analysis_internal
