#include "daemon/core/analysis/analyzer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "daemon/core/report/report_builder.h"
#include "proto/common/order_statistics.h"
#include "proto/names/names.h"

namespace neuronmon::daemon {
namespace {

// What one runtime did over the window.
struct Metrics {
  std::uint32_t pid = 0;
  std::string tag;
  std::string command;
  double utilization = 0;     // percent, mean over its cores
  double flops_fraction = 0;  // of the cores' BF16 peak
  double hbm = 0;             // percent of its devices' peak bandwidth
  double collective = 0;      // share of the window in collectives (0..1)
  std::uint64_t executions = 0;
  std::uint64_t errors = 0;  // failed executions and hardware errors
  std::uint64_t transient = 0;
  bool loading = false;  // device memory still growing
  std::string device_error;
  std::vector<int> devices;
  std::vector<double> device_utilization;  // per device, same order
  double process_cpus = 0;                 // CPUs the process used over the window
  // Progress: seconds its cores and process have been idle with no execution completing, and how
  // long its recent step times say a pause may last (stop_after 0: unknown — a signal is
  // unmeasured, or no step seen yet).
  double idle_seconds = 0;
  double stop_after = 0;
  bool waiting = false;  // in a collective that did not complete in the newest period
  // Memory pressure: the fullest device it holds memory on (-1: none), its use of it, and who
  // else holds the most there ("pid 812 (serve) holds 2.7 GiB"; empty: nobody).
  int memory_device = -1;
  double memory_percent = 0;
  double memory_used = 0, memory_total = 0, memory_own = 0;
  std::string memory_category;  // its largest category on that device, with its size
  std::string memory_neighbour;
  bool pressured = false;  // its verdict is memory_pressure already (the threshold relaxes)
  std::string pod;         // "pod inference/vllm-0 (container vllm)" when its pod is known

  // It stopped: idle for longer than its steps say a pause may last.
  bool Stopped() const { return stop_after > 0 && idle_seconds >= stop_after; }
  // Why each signal the rules read could not be measured over the window (empty: it was); the
  // figure of an unmeasured signal above is 0 and must not be read.
  std::array<std::string, kSignals> unavailable;

  const std::string& Unavailable(Signal s) const {
    return unavailable[static_cast<std::size_t>(s)];
  }
  bool Has(Signal s) const { return Unavailable(s).empty(); }
};

std::string Fmt(const char* format, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

std::string DeviceName(int d) { return "nd" + std::to_string(d); }

std::string GiB(double bytes) { return Fmt("%.1f GiB", bytes / (1024.0 * 1024 * 1024)); }

// Each runtime's device memory by device, from the newest snapshot; then, for each runtime, the
// fullest device it holds memory on, its largest category there, and the biggest other holder.
void MeasureMemory(std::vector<Metrics>& all, const Snapshot& end, const v1::HbmStats& hbm,
                   const v1::Inventory& inv) {
  const std::uint32_t per = CoresPerDevice(inv);
  struct Held {
    std::map<int, double> bytes;                            // by device
    std::map<int, std::pair<double, const char*>> largest;  // by device: category and its size
  };
  std::map<std::uint32_t, Held> held;
  std::map<std::uint32_t, std::string> tags;
  for (const RuntimeSample& r : end.runtimes) {
    tags[r.pid] = r.tag;
    if (!r.memory) continue;
    Held& h = held[r.pid];
    std::map<int, std::map<const char*, double>> categories;
    for (const CoreMemory& c : r.memory->cores) {
      const int d = static_cast<int>(c.core / per);
      h.bytes[d] += static_cast<double>(c.Total());
      auto& cat = categories[d];
      cat["tensors"] += static_cast<double>(c.tensors);
      cat["constants"] += static_cast<double>(c.constants);
      cat["model code"] += static_cast<double>(c.model_code);
      cat["scratchpad"] += static_cast<double>(c.model_shared_scratchpad);
      cat["runtime memory"] += static_cast<double>(c.runtime_memory);
    }
    for (const auto& [d, cat] : categories) {
      auto top = std::max_element(cat.begin(), cat.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      h.largest[d] = {top->second, top->first};
    }
  }
  for (Metrics& m : all) {
    const Held& mine = held[m.pid];
    for (const auto& [d, own] : mine.bytes) {
      if (own <= 0 || d >= hbm.devices_size() || !hbm.devices(d).error().empty()) continue;
      const v1::DeviceHbm& dev = hbm.devices(d);
      if (dev.total_bytes() == 0) continue;
      const double percent =
          100 * static_cast<double>(dev.used_bytes()) / static_cast<double>(dev.total_bytes());
      if (m.memory_device >= 0 && percent <= m.memory_percent) continue;
      m.memory_device = d;
      m.memory_percent = percent;
      m.memory_used = static_cast<double>(dev.used_bytes());
      m.memory_total = static_cast<double>(dev.total_bytes());
      m.memory_own = own;
      const auto largest = mine.largest.find(d);
      m.memory_category = largest == mine.largest.end() ? ""
                                                        : std::string(largest->second.second) +
                                                              " " + GiB(largest->second.first);
      double top = 0;
      m.memory_neighbour.clear();
      for (const auto& [pid, other] : held) {
        const auto it = other.bytes.find(d);
        if (pid == m.pid || it == other.bytes.end() || it->second <= top) continue;
        top = it->second;
        m.memory_neighbour =
            "pid " + std::to_string(pid) + " (" + tags[pid] + ") holds " + GiB(it->second);
      }
    }
  }
}

// A runtime's figures over the window, read from the window's report — the same figures neuron-top,
// neuron-monitor and /metrics show for a window of that length — plus what only the snapshots
// tell (device memory still growing: the model is loading).
Metrics Measure(const v1::RuntimeReport& r, const v1::HbmStats& hbm_stats, const RuntimeSample& now,
                const RuntimeSample& before, const v1::Inventory& inv) {
  Metrics m;
  m.pid = r.pid();
  m.tag = r.tag();
  m.device_error = r.error();
  m.loading =
      now.memory && before.memory && now.memory->DeviceTotal() > before.memory->DeviceTotal();
  const std::uint32_t per = CoresPerDevice(inv);
  double busy = 0, flops = 0, peak = 0;
  std::vector<double> core_percent;  // by global core: this runtime's cores only
  for (const v1::CoreCounters& c : r.neuroncore_counters().cores()) {
    const double u = c.utilization_percent();
    busy += u;
    flops += c.flops();
    if (c.index() >= core_percent.size()) core_percent.resize(c.index() + 1, 0.0);
    core_percent[c.index()] = u;
    const int d = static_cast<int>(c.index() / per);
    if (m.devices.empty() || m.devices.back() != d) m.devices.push_back(d);
    if (d < inv.devices_size()) peak += inv.devices(d).peak_flops().bf16() / per;
  }
  for (int d : m.devices) {
    m.device_utilization.push_back(
        DeviceUtilization(core_percent, static_cast<std::uint32_t>(d), per));
  }
  const int cores = r.neuroncore_counters().cores_size();
  m.utilization = cores == 0 ? 0 : busy / cores;
  m.flops_fraction = peak > 0 ? flops / peak : 0;
  double hbm = 0;
  for (int d : m.devices) {
    if (d < hbm_stats.devices_size()) hbm += hbm_stats.devices(d).bandwidth_utilization_percent();
  }
  m.hbm = m.devices.empty() ? 0 : hbm / static_cast<double>(m.devices.size());
  m.collective = r.collectives_stats().time_share();
  // The report's execution_stats come from the same growth of the same counters.
  const ExecutionCounters window = now.executions.Minus(before.executions);
  m.executions = window.completed;
  m.errors = window.Failed();
  m.transient = window.transient;
  // A runtime's device error makes its groups' errors too; the errors rule reads that first.
  const auto set = [&](Signal s, const std::string& reason) {
    m.unavailable[static_cast<std::size_t>(s)] = reason;
  };
  set(Signal::kCoreActivity, r.neuroncore_counters().error());
  set(Signal::kExecutions, r.execution_stats().error());
  set(Signal::kCollectives, r.collectives_stats().error());
  set(Signal::kHbmTraffic, hbm_stats.bandwidth_unavailable());
  set(Signal::kRuntimeCpu, r.vcpu_usage().error());
  m.process_cpus = (r.vcpu_usage().user_percent() + r.vcpu_usage().system_percent()) / 100 *
                   std::max(1.0, static_cast<double>(inv.host_vcpu_count()));
  return m;
}

// "signals unavailable: collectives (<reason>), hbm_traffic (<reason>)" for the signals in
// `consulted` that `m` lacks; empty when it lacks none of them.
std::string Lacking(const Metrics& m, const std::vector<Signal>& consulted) {
  std::string out;
  for (Signal s : consulted) {
    if (m.Has(s)) continue;
    out += out.empty() ? "signals unavailable: " : ", ";
    out += std::string(SignalName(s)) + " (" + m.Unavailable(s) + ")";
  }
  return out;
}

// The window's report: the groups the rules read, for every runtime.
v1::Report WindowReport(const Snapshot& start, const Snapshot& end, const v1::Inventory& inv) {
  ReportInput in;
  in.inventory = &inv;
  in.end = &end;
  for (v1::Group g :
       {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_EXECUTION_STATS, v1::GROUP_COLLECTIVES_STATS,
        v1::GROUP_HBM_STATS, v1::GROUP_NEURON_RUNTIME_VCPU_USAGE}) {
    in.groups.push_back({g, &start});
  }
  return BuildReport(in);
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

// The candidate verdict for one runtime and window, and in `lacking` the signals the rules it
// went through could not read ("signals unavailable: ..."; empty: none). A rule never reads an
// unmeasured signal's 0, and a verdict reached without one says so at the end of its summary.
// Kind UNSPECIFIED: no verdict — the model is loading (`lacking` empty), or no rule could decide
// for want of signals.
v1::Finding Classify(const Metrics& m, const AnalyzerThresholds& t, const std::string& straggler,
                     std::string* lacking) {
  v1::Finding f;
  f.set_subject(m.tag);
  f.set_pid(m.pid);
  std::vector<Signal> consulted;  // by the rules so far
  const double u = m.utilization;
  if (m.Has(Signal::kCoreActivity)) {
    AddEvidence(f, "utilization_percent", u, "percent", t.busy_percent,
                u < t.busy_percent ? "<" : ">=");
  }
  auto kind = [&](v1::FindingKind k, std::string summary) {
    *lacking = Lacking(m, consulted);
    f.set_kind(k);
    f.set_summary(lacking->empty() ? std::move(summary) : summary + "; " + *lacking);
  };
  if (!m.device_error.empty()) {
    kind(v1::FINDING_KIND_ERRORS, m.device_error);
    return f;
  }
  consulted.push_back(Signal::kExecutions);
  const bool executions = m.Has(Signal::kExecutions);
  if (executions && m.errors > 0) {
    AddEvidence(f, "failed_executions", static_cast<double>(m.errors), "count", 0, ">");
    kind(v1::FINDING_KIND_ERRORS,
         Fmt("%.0f failed executions or hardware errors in the last window",
             static_cast<double>(m.errors)));
    return f;
  }
  if (executions && m.transient > 0)
    AddEvidence(f, "corrected_errors", static_cast<double>(m.transient), "count", 0, ">");
  const bool ran_nothing = !executions || m.executions == 0;  // as far as anyone can tell
  // A device it holds memory on is nearly full: the next allocation may fail, whatever else
  // holds it back — unless it sits idle itself (idle_allocated says so; the busy neighbour's
  // memory_pressure names it).
  const double full = t.memory_pressure_percent - (m.pressured ? t.memory_pressure_clear : 0);
  const bool idle_holder =
      m.Has(Signal::kCoreActivity) && u < t.idle_percent && ran_nothing && !m.loading;
  if (m.memory_device >= 0 && m.memory_percent >= full && !idle_holder) {
    AddEvidence(f, "hbm_used_percent", m.memory_percent, "percent", full, ">=");
    std::string summary = DeviceName(m.memory_device) +
                          Fmt(" HBM %.0f%% full (", m.memory_percent) + GiB(m.memory_used) +
                          " of " + GiB(m.memory_total) + "): it holds " + GiB(m.memory_own);
    if (!m.memory_category.empty()) summary += ", most of it " + m.memory_category;
    if (!m.memory_neighbour.empty()) summary += "; " + m.memory_neighbour;
    kind(v1::FINDING_KIND_MEMORY_PRESSURE, std::move(summary));
    return f;
  }
  if (m.loading && ran_nothing) return v1::Finding{};  // still loading the model
  consulted.push_back(Signal::kCoreActivity);
  if (!m.Has(Signal::kCoreActivity)) {
    *lacking = Lacking(m, consulted);
    return v1::Finding{};
  }
  // Cores held unused: idle, nothing run, and the process idle on the host too — one busy there
  // (reading input, writing a checkpoint) makes its cores wait for it, which the rules below
  // tell. Without its CPU figures the verdict says so.
  consulted.push_back(Signal::kRuntimeCpu);
  const bool cpu = m.Has(Signal::kRuntimeCpu);
  if (u < t.idle_percent && ran_nothing && (!cpu || m.process_cpus < t.host_busy_cpus)) {
    if (cpu) AddEvidence(f, "process_cpus", m.process_cpus, "cpus", t.host_busy_cpus, "<");
    kind(v1::FINDING_KIND_IDLE_ALLOCATED,
         Fmt(executions ? "holds its NeuronCores but ran nothing (%.1f%% busy)"
                        : "holds its NeuronCores at %.1f%% busy",
             u) +
             (m.pod.empty() ? "" : "; " + m.pod));
    return f;
  }
  // It stopped: cores and process idle, nothing completed, for longer than its steps take —
  // told before a whole window has gone by without an execution.
  if (m.Stopped()) {
    AddEvidence(f, "idle_seconds", m.idle_seconds, "seconds", m.stop_after, ">=");
    kind(v1::FINDING_KIND_IDLE_ALLOCATED,
         Fmt("holds its NeuronCores but has run nothing for %.0f s", std::floor(m.idle_seconds)) +
             (m.pod.empty() ? "" : "; " + m.pod));
    return f;
  }
  consulted.pop_back();
  consulted.push_back(Signal::kCollectives);
  const bool collectives = m.Has(Signal::kCollectives);
  if (collectives) {
    AddEvidence(f, "collective_time_share_percent", 100 * m.collective, "percent",
                100 * t.collective_share, m.collective >= t.collective_share ? ">=" : "<");
  }
  if (!straggler.empty()) {
    f.set_straggler(straggler);
    kind(v1::FINDING_KIND_STRAGGLER,
         straggler + " is slower than its peers, which wait for it in collectives");
    return f;
  }
  // HBM bandwidth matters only when FLOP/s are low enough for the cores to be starved of it.
  if (m.flops_fraction <= t.flops_fraction) consulted.push_back(Signal::kHbmTraffic);
  const bool memory_bound =
      m.Has(Signal::kHbmTraffic) && m.hbm >= t.hbm_percent && m.flops_fraction <= t.flops_fraction;
  if (memory_bound) {
    AddEvidence(f, "hbm_bandwidth_percent", m.hbm, "percent", t.hbm_percent, ">=");
    AddEvidence(f, "flops_percent_of_peak", 100 * m.flops_fraction, "percent",
                100 * t.flops_fraction, "<=");
    kind(v1::FINDING_KIND_HBM_BOUND,
         Fmt("HBM bandwidth at %.0f%% of peak while FLOP/s reach only %.0f%% of peak", m.hbm,
             100 * m.flops_fraction));
    return f;
  }
  if (u >= t.busy_percent) {
    kind(v1::FINDING_KIND_HEALTHY,
         Fmt("NeuronCores %.0f%% busy at %.0f%% of peak FLOP/s", u, 100 * m.flops_fraction));
    return f;
  }
  if (!collectives) {  // input- or collective-bound: only the time in collectives tells
    *lacking = Lacking(m, consulted);
    return v1::Finding{};
  }
  const double idle_outside = std::max(0.0, 1 - u / 100 - m.collective);
  if (m.collective >= t.collective_share ||
      (m.collective >= t.fast_collective_share && m.collective > idle_outside)) {
    kind(v1::FINDING_KIND_COLLECTIVE_BOUND,
         Fmt("%.0f%% of the time in collectives; cores only %.0f%% busy", 100 * m.collective, u));
    return f;
  }
  // What makes it input-bound rather than collective-bound: the cores wait between executions
  // longer than they wait in collectives (compared honestly: both shares are small near 80%).
  AddEvidence(f, "idle_between_executions_percent", 100 * idle_outside, "percent",
              100 * m.collective, idle_outside >= m.collective ? ">=" : "<");
  kind(v1::FINDING_KIND_INPUT_BOUND, Fmt("cores idle %.0f%% of the time between executions while "
                                         "collectives take %.0f%%: the host "
                                         "does not feed them fast enough",
                                         100 * idle_outside, 100 * m.collective));
  return f;
}

// Straggler detection: in each job (processes sharing a command line) with at least three
// members using collectives, one member much busier than the median while the others spend a
// large share in collectives. Within one runtime over several devices, one device much busier.
std::map<std::uint32_t, std::string> Stragglers(const std::vector<Metrics>& all,
                                                const AnalyzerThresholds& t) {
  std::map<std::uint32_t, std::string> out;
  std::map<std::string, std::vector<const Metrics*>> jobs;
  const auto judged = [](const Metrics& m) {
    return m.Has(Signal::kCoreActivity) && m.Has(Signal::kCollectives);
  };
  for (const Metrics& m : all) {
    if (judged(m) && m.collective > 0 && !m.command.empty()) jobs[m.command].push_back(&m);
  }
  for (const auto& [command, members] : jobs) {
    if (members.size() < 3) continue;
    std::vector<double> u, c;
    for (const Metrics* m : members) u.push_back(m->utilization), c.push_back(m->collective);
    const double mu = Median(u), mc = Median(c);
    const Metrics* top = *std::max_element(members.begin(), members.end(), [](auto* a, auto* b) {
      return a->utilization < b->utilization;
    });
    if (top->utilization - mu < t.straggler_gap_points || mc < t.straggler_peer_share ||
        top->collective > 0.6 * mc) {
      continue;
    }
    std::string name;
    for (int d : top->devices) name += (name.empty() ? "" : ",") + DeviceName(d);
    for (const Metrics* m : members) out[m->pid] = name;
  }
  for (const Metrics& m : all) {
    if (out.count(m.pid) || !judged(m) || m.device_utilization.size() < 3 ||
        m.collective < t.straggler_peer_share)
      continue;
    const double mu = Median(m.device_utilization);
    const auto top = std::max_element(m.device_utilization.begin(), m.device_utilization.end());
    if (*top - mu >= t.straggler_gap_points)
      out[m.pid] =
          DeviceName(m.devices[static_cast<std::size_t>(top - m.device_utilization.begin())]);
  }
  return out;
}

// What one runtime did in the newest period: executions completed, and the collective it sat in
// without any operation completing (none: it is not waiting in one).
struct Recent {
  std::uint64_t completed = 0;
  std::optional<CollectiveKind> waiting;
  double in_flight = 0;    // share of the period in collectives
  double utilization = 0;  // percent, mean over its cores
  double cpus = 0;         // CPUs its process used
};

std::uint64_t Growth(std::uint64_t now, std::uint64_t before) {
  return now > before ? now - before : 0;
}

// `end` and `previous`: the snapshots `now` and `before` come from.
Recent RecentOf(const Snapshot& end, const Snapshot& previous, const RuntimeSample& now,
                const RuntimeSample& before, Nanos period, double in_flight) {
  Recent r;
  r.completed = Growth(now.executions.completed, before.executions.completed);
  std::uint64_t core_busy = 0;
  for (std::uint32_t c : now.cores) {
    if (c < end.cores.size() && c < previous.cores.size())
      core_busy += Growth(end.cores[c].busy_ns, previous.cores[c].busy_ns);
  }
  r.cpus = static_cast<double>(Growth(now.cpu_user_ns + now.cpu_system_ns,
                                      before.cpu_user_ns + before.cpu_system_ns)) /
           static_cast<double>(period.count());
  if (!now.cores.empty()) {
    r.utilization = 100 * static_cast<double>(core_busy) /
                    (static_cast<double>(period.count()) * static_cast<double>(now.cores.size()));
  }
  std::uint64_t ops = 0, busy = 0, top = 0;
  std::optional<CollectiveKind> op;
  for (std::size_t k = 0; k < now.collectives.size(); ++k) {
    ops += Growth(now.collectives[k].count, before.collectives[k].count);
    const std::uint64_t b = Growth(now.collectives[k].busy_ns, before.collectives[k].busy_ns);
    busy += b;
    if (b > top) top = b, op = now.collectives[k].kind;
  }
  r.in_flight = static_cast<double>(busy) / static_cast<double>(period.count());
  if (ops == 0 && r.in_flight >= in_flight) r.waiting = op;
  return r;
}

// One runtime of a possibly hung job: how long since it last completed an execution, and what it
// did in the newest period.
struct Stalled {
  const Metrics* m = nullptr;
  double seconds = 0;    // since its last completed execution
  double threshold = 0;  // seconds the rule waits for (0: no step seen yet, cannot tell)
  Recent recent;
};

// The hang finding of `s`, one member of a hung job: `detail` names the collective it does not
// complete and the rank here that has not joined it (none: that rank runs on another host);
// `peers`: the ranks here that wait ("3 ranks").
v1::Finding HangFinding(const Stalled& s, const v1::HangDetail& detail, const std::string& peers,
                        const AnalyzerThresholds& t) {
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_HANG);
  f.set_subject(s.m->tag);
  f.set_pid(s.m->pid);
  AddEvidence(f, "seconds_since_last_execution", s.seconds, "seconds", s.threshold, ">=");
  AddEvidence(f, "collective_in_flight_percent", 100 * s.recent.in_flight, "percent",
              100 * t.hang_in_flight, s.recent.in_flight >= t.hang_in_flight ? ">=" : "<");
  const std::string op = CollectiveOpName(detail.operation());
  const double secs = std::floor(s.seconds);
  if (!s.recent.waiting) {
    f.set_summary(StuckRankClause(detail) + "; " + peers + " here wait for it");
  } else if (!detail.stuck_rank().empty()) {
    f.set_summary("waits in " + op + Fmt(" for %.0f s: ", secs) + detail.stuck_rank() +
                  " has not joined");
  } else {
    f.set_summary("waits in " + op + Fmt(" for %.0f s with ", secs) + peers +
                  " here; the rank that stopped joining is on another host");
  }
  f.set_straggler(detail.stuck_rank());
  *f.mutable_hang() = detail;
  return f;
}

// Hang detection, per job (processes sharing a command line; a process without one is its own
// job): every member on this host has completed nothing for hang_steps of its recent step times
// while at least one waits in a collective that does not complete. Members that are not in a
// collective are the ones that stopped joining; they are named. Returns findings by pid.
std::map<std::uint32_t, v1::Finding> Hangs(const std::vector<Stalled>& all,
                                           const AnalyzerThresholds& t) {
  std::map<std::uint32_t, v1::Finding> out;
  std::map<std::string, std::vector<const Stalled*>> jobs;
  for (const Stalled& s : all) {
    jobs[s.m->command.empty() ? "pid " + std::to_string(s.m->pid) : s.m->command].push_back(&s);
  }
  for (const auto& [command, members] : jobs) {
    const Stalled* waiter = nullptr;
    std::vector<const Stalled*> stuck;
    bool all_stalled = true;
    for (const Stalled* s : members) {
      all_stalled = all_stalled && s->threshold > 0 && s->seconds >= s->threshold;
      if (!s->recent.waiting) {
        stuck.push_back(s);
      } else if (waiter == nullptr) {
        waiter = s;
      }
    }
    if (!all_stalled || waiter == nullptr) continue;
    // What the waiting ranks say: the first stuck rank. A stuck rank speaks of itself.
    v1::HangDetail job;
    job.set_operation(CollectiveOpOf(*waiter->recent.waiting));
    if (!stuck.empty()) {
      job.set_stuck_rank(stuck.front()->m->tag);
      job.set_stuck_seconds(stuck.front()->seconds);
    }
    const std::size_t waiting = members.size() - stuck.size();
    const std::string peers = std::to_string(waiting) + (waiting == 1 ? " rank" : " ranks");
    for (const Stalled* s : members) {
      v1::HangDetail detail = job;
      if (!s->recent.waiting) {
        detail.set_stuck_rank(s->m->tag);
        detail.set_stuck_seconds(s->seconds);
      }
      out[s->m->pid] = HangFinding(*s, detail, peers, t);
    }
  }
  return out;
}

// What an evaluation did without: the signals candidates lacked, by pid.
struct Gaps {
  std::map<std::uint32_t, std::string> undetermined;  // no rule could judge these applications
  std::set<std::string> lacking;                      // what judged candidates did without
};

// "no verdict for 2 applications: signals unavailable: collectives (...)"; empty when every
// application could be judged.
std::string Unjudged(const Gaps& gaps) {
  if (gaps.undetermined.empty()) return "";
  std::set<std::string> lacking;
  for (const auto& [pid, text] : gaps.undetermined) lacking.insert(text);
  std::string out = "no verdict for " + std::to_string(gaps.undetermined.size()) +
                    (gaps.undetermined.size() == 1 ? " application: " : " applications: ");
  for (auto it = lacking.begin(); it != lacking.end(); ++it)
    out += (it == lacking.begin() ? "" : "; ") + *it;
  return out;
}

std::string Joined(std::string text, const std::string& more) {
  return more.empty() ? text : text.empty() ? more : text + "; " + more;
}

// `any_runtime`: whether any application is running (judged or not yet).
v1::Finding Summarize(const Analysis& a, bool any_runtime, std::int64_t now_ns, const Gaps& gaps) {
  v1::Finding s;
  s.set_subject("instance");
  s.set_since_unix_ns(now_ns);
  std::map<int, int> counts;
  const v1::Finding* worst = nullptr;
  int shown = 0;
  for (const auto& [pid, findings] : a.runtimes) {
    for (const v1::Finding& f : findings) {
      ++shown;
      ++counts[f.kind()];
      const bool straggler = f.kind() == v1::FINDING_KIND_STRAGGLER && worst != nullptr &&
                             worst->kind() != v1::FINDING_KIND_MEMORY_PRESSURE;
      const bool pressure = f.kind() == v1::FINDING_KIND_MEMORY_PRESSURE && worst != nullptr &&
                            worst->kind() != v1::FINDING_KIND_MEMORY_PRESSURE;
      const bool hang = f.kind() == v1::FINDING_KIND_HANG;
      // A hang outranks everything, and its finding that names the stuck rank the others.
      const bool better =
          worst == nullptr ||
          (hang ? worst->kind() != v1::FINDING_KIND_HANG ||
                      (f.straggler() == f.subject() && worst->straggler() != worst->subject())
                : worst->kind() != v1::FINDING_KIND_HANG &&
                      (f.severity() > worst->severity() ||
                       ((straggler || pressure) && worst->kind() != v1::FINDING_KIND_ERRORS)));
      if (better) worst = &f;
    }
  }
  const std::string unjudged = Unjudged(gaps);
  if (shown == 0) {
    s.set_kind(v1::FINDING_KIND_HEALTHY);
    s.set_severity(v1::SEVERITY_INFO);
    s.set_summary(!unjudged.empty() ? unjudged
                  : any_runtime     ? "collecting data"
                                    : "no Neuron application is running");
    s.set_confidence(unjudged.empty() ? 1 : 0);
    return s;
  }
  // Errors and stragglers name one culprit; otherwise the kind most applications share.
  v1::FindingKind kind = v1::FINDING_KIND_HEALTHY;
  if (worst->kind() == v1::FINDING_KIND_ERRORS || worst->kind() == v1::FINDING_KIND_STRAGGLER ||
      worst->kind() == v1::FINDING_KIND_HANG || worst->kind() == v1::FINDING_KIND_MEMORY_PRESSURE) {
    kind = worst->kind();
    s.set_straggler(worst->straggler());
    if (worst->has_hang()) *s.mutable_hang() = worst->hang();
  } else {
    int best = 0;
    for (const auto& [k, n] : counts) {
      if (k != v1::FINDING_KIND_HEALTHY && n > best && 2 * n >= shown)
        best = n, kind = static_cast<v1::FindingKind>(k);
    }
  }
  s.set_kind(kind);
  s.set_severity(SeverityOf(kind));
  s.set_confidence(static_cast<double>(counts[kind]) / shown);
  std::string summary;
  if (kind == v1::FINDING_KIND_HEALTHY) {
    // The healthy ones' summaries are not shown: say here what they were judged without.
    summary = Fmt("%.0f of %.0f applications healthy", counts[v1::FINDING_KIND_HEALTHY], shown);
    for (const std::string& lacking : gaps.lacking) summary = Joined(summary, lacking);
  } else {
    summary = Fmt("%.0f of %.0f applications: ", counts[kind], shown) + worst->summary();
  }
  s.set_summary(Joined(summary, unjudged));
  s.set_advice(Advice(kind));
  for (const v1::Evidence& e : worst->evidence()) *s.add_evidence() = e;
  return s;
}

std::string DeviceList(const std::set<std::uint32_t>& devices) {
  std::string out;
  for (std::uint32_t d : devices) out += (out.empty() ? "nd" : ", nd") + std::to_string(d);
  return out;
}

// Allocated versus used, where the kubelet's allocations are known: a runtime using devices no
// pod was allocated gets an `unallocated` finding after its verdict; each pod container whose
// allocated devices no runtime uses gets an idle_allocated finding of its own.
// `previous`: the last analysis, whose findings of the same kind and subject keep their `since`.
void AddAllocationFindings(const v1::Inventory& inv, const Snapshot& end, std::int64_t now_ns,
                           const Analysis& previous, Analysis& out) {
  const auto since = [&](const std::vector<v1::Finding>& before, const v1::Finding& f) {
    for (const v1::Finding& b : before) {
      if (b.kind() == f.kind() && b.subject() == f.subject()) return b.since_unix_ns();
    }
    return now_ns;
  };
  if (inv.allocations().empty()) return;
  const std::uint32_t per = CoresPerDevice(inv);
  std::set<std::uint32_t> allocated;
  for (const v1::PodAllocation& a : inv.allocations()) {
    allocated.insert(a.device_indices().begin(), a.device_indices().end());
    for (std::uint32_t c : a.core_ids()) allocated.insert(c / per);
  }
  std::set<std::uint32_t> used;
  for (const RuntimeSample& r : end.runtimes) {
    std::set<std::uint32_t> outside;
    for (std::uint32_t c : r.cores) {
      used.insert(c / per);
      if (!allocated.count(c / per)) outside.insert(c / per);
    }
    if (outside.empty()) continue;
    v1::Finding f;
    f.set_kind(v1::FINDING_KIND_UNALLOCATED);
    f.set_severity(v1::SEVERITY_WARNING);
    f.set_subject(r.tag);
    f.set_pid(r.pid);
    f.set_summary("uses " + DeviceList(outside) + ", which Kubernetes allocated to no pod");
    f.set_advice(Advice(v1::FINDING_KIND_UNALLOCATED));
    f.set_confidence(1);
    f.set_since_unix_ns(now_ns);
    AddEvidence(f, "unallocated_devices_in_use", static_cast<double>(outside.size()), "count", 0,
                ">");
    if (auto it = previous.runtimes.find(r.pid); it != previous.runtimes.end())
      f.set_since_unix_ns(since(it->second, f));
    out.runtimes[r.pid].push_back(std::move(f));
  }
  for (const v1::PodAllocation& a : inv.allocations()) {
    std::set<std::uint32_t> devices(a.device_indices().begin(), a.device_indices().end());
    for (std::uint32_t c : a.core_ids()) devices.insert(c / per);
    if (devices.empty()) continue;
    std::size_t in_use = 0;
    for (std::uint32_t d : devices) in_use += used.count(d);
    if (in_use > 0) continue;
    v1::Finding f;
    f.set_kind(v1::FINDING_KIND_IDLE_ALLOCATED);
    f.set_severity(v1::SEVERITY_WARNING);
    f.set_subject(PodLabel(a));
    f.set_summary(PodLabelWithContainer(a) + " was allocated " + DeviceList(devices) +
                  " but no Neuron application runs on them");
    f.set_advice("delete the pod, or lower its " + a.resource_name() +
                 " request, so the scheduler can give the devices to a pod that uses them");
    f.set_confidence(1);
    f.set_since_unix_ns(now_ns);
    AddEvidence(f, "allocated_devices_in_use", 0, "count", 1, "<");
    f.set_since_unix_ns(since(previous.allocations, f));
    out.allocations.push_back(std::move(f));
  }
}

}  // namespace

Analyzer::Analyzer(AnalyzerThresholds thresholds) : thresholds_(thresholds) {}

void Analyzer::Reset() {
  tracks_.clear();
  analysis_ = Analysis{};
  evaluation_ = Evaluation{};
}

std::uint32_t Analyzer::VoteLimit(Nanos period) const {
  return static_cast<std::uint32_t>(
      std::max<std::int64_t>(3, thresholds_.memory / std::max(Nanos(1), period)));
}

void Analyzer::Decide(Track& track, const v1::Finding& candidate, bool waited, std::int64_t now_ns,
                      Nanos period, const std::function<bool(v1::FindingKind)>& confirms) {
  const std::uint32_t limit = VoteLimit(period);
  track.votes.push_back(candidate.kind());
  while (track.votes.size() > limit) track.votes.pop_front();
  const auto count = [&](int k) { return std::count(track.votes.begin(), track.votes.end(), k); };
  const bool have = track.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED;
  auto adopt = [&] {
    const bool same = track.verdict.kind() == candidate.kind();
    const std::int64_t since = same ? track.verdict.since_unix_ns() : now_ns;
    track.verdict = candidate;
    track.verdict.set_since_unix_ns(since);
  };
  if (waited) {
    adopt();
  } else if (candidate.kind() == v1::FINDING_KIND_ERRORS) {
    track.last_error_ns = now_ns;
    adopt();
  } else if (have && track.verdict.kind() == v1::FINDING_KIND_ERRORS) {
    if (now_ns - track.last_error_ns < thresholds_.errors_clear.count()) return;
    if (candidate.kind() != v1::FINDING_KIND_UNSPECIFIED) adopt();
  } else if (candidate.kind() == v1::FINDING_KIND_UNSPECIFIED) {
    return;
  } else if (have && candidate.kind() == track.verdict.kind()) {
    adopt();  // fresh evidence for the same verdict
  } else {
    // A first verdict needs a few agreeing evaluations; a change needs most of the remembered ones.
    double needed = have ? thresholds_.majority * limit : std::min<double>(limit, 3);
    const bool straggler_change = candidate.kind() == v1::FINDING_KIND_STRAGGLER ||
                                  (have && track.verdict.kind() == v1::FINDING_KIND_STRAGGLER &&
                                   candidate.kind() == v1::FINDING_KIND_HEALTHY) ||
                                  (have && track.verdict.kind() == v1::FINDING_KIND_HANG);
    if (straggler_change) needed = std::min<double>(needed, thresholds_.straggler_votes);
    // The fast way: the last few candidates agree, and the newest metrics alone bear them out.
    std::size_t run = 0;
    for (auto it = track.votes.rbegin(); it != track.votes.rend() && *it == candidate.kind(); ++it)
      ++run;
    const std::uint32_t votes = candidate.kind() == v1::FINDING_KIND_HEALTHY
                                    ? thresholds_.healthy_votes
                                    : thresholds_.fast_votes;
    const bool fast = have && !straggler_change && run >= votes && confirms(candidate.kind());
    if (static_cast<double>(count(candidate.kind())) < needed && !fast) return;
    adopt();
    // A new verdict starts the count afresh: going back takes as many votes as coming.
    std::erase_if(track.votes, [&](int k) { return k != candidate.kind(); });
  }
  track.verdict.set_severity(SeverityOf(track.verdict.kind()));
  track.verdict.set_advice(Advice(track.verdict.kind()));
  track.verdict.set_confidence(static_cast<double>(count(track.verdict.kind())) /
                               static_cast<double>(track.votes.size()));
}

void Analyzer::Forget(Track& track, std::int64_t now_ns) const {
  // An errors verdict stands its time; any other rested on signals no longer measured.
  const bool errors = track.verdict.kind() == v1::FINDING_KIND_ERRORS &&
                      now_ns - track.last_error_ns < thresholds_.errors_clear.count();
  if (!errors) {
    track.votes.clear();
    track.verdict = v1::Finding{};
  }
}

void Analyzer::Update(const History& history, const v1::Inventory& inventory) {
  const Snapshot* end = history.newest();
  if (end == nullptr || history.size() < 2) return;
  const Snapshot* previous = history.AtOrBefore(end->seq - 1);
  const Nanos period = end->device_time - previous->device_time;
  if (period <= Nanos(0)) return;
  const std::uint64_t back =
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, thresholds_.window / period));
  const Snapshot* start = history.AtOrBefore(end->seq > back ? end->seq - back : 0);
  if (start == nullptr || start->epoch != end->epoch || start == end) return;  // counters restarted
  std::map<std::uint32_t, std::string> commands;
  std::map<std::uint32_t, std::string> pods;
  for (const v1::Process& p : inventory.processes()) {
    commands[p.pid()] = p.command();
    const v1::Attribution& a = p.attribution();
    if (!a.pod().empty()) pods[p.pid()] = PodLabelWithContainer(a);
  }
  const v1::Report window = WindowReport(*start, *end, inventory);
  std::vector<Metrics> metrics;
  for (const v1::RuntimeReport& r : window.runtimes()) {
    const RuntimeSample* now = FindRuntime(*end, r.pid());
    const RuntimeSample* before = FindRuntime(*start, r.pid());
    if (now == nullptr || before == nullptr) continue;  // too new to judge
    metrics.push_back(Measure(r, window.system().hbm_stats(), *now, *before, inventory));
    metrics.back().command = commands[r.pid()];
    metrics.back().pod = pods[r.pid()];
    auto track = tracks_.find(r.pid());
    metrics.back().pressured =
        track != tracks_.end() && track->second.verdict.kind() == v1::FINDING_KIND_MEMORY_PRESSURE;
  }
  MeasureMemory(metrics, *end, window.system().hbm_stats(), inventory);
  const std::map<std::uint32_t, std::string> stragglers = Stragglers(metrics, thresholds_);
  // Progress since the previous sample: when each runtime last completed an execution, at what
  // step time, and whether it now sits in a collective that does not complete.
  std::vector<Stalled> stalled;
  const std::int64_t device_ns = end->device_time.count();
  for (Metrics& m : metrics) {
    const RuntimeSample* now = FindRuntime(*end, m.pid);
    const RuntimeSample* before = FindRuntime(*previous, m.pid);
    Track& track = tracks_[m.pid];
    if (before == nullptr || !m.Has(Signal::kExecutions)) continue;
    const Recent recent =
        RecentOf(*end, *previous, *now, *before, period, thresholds_.hang_in_flight);
    if (recent.completed > 0) {
      const std::int64_t since =
          track.last_progress_ns >= 0 ? device_ns - track.last_progress_ns : period.count();
      const std::int64_t step = since / static_cast<std::int64_t>(recent.completed);
      track.step_ns = track.step_ns > 0 ? (3 * track.step_ns + step) / 4 : step;
      track.last_progress_ns = device_ns;
    }
    if (track.last_progress_ns < 0) continue;  // never seen running: a hang cannot be told
    // Seconds a pause of `steps` of its recent step times takes, and at least `least`.
    const auto steps_of = [&](double steps, Nanos least) {
      return 1e-9 * std::max(steps * static_cast<double>(track.step_ns),
                             static_cast<double>(least.count()));
    };
    const double wait = steps_of(thresholds_.hang_steps, thresholds_.hang_min);
    const double since = 1e-9 * static_cast<double>(device_ns - track.last_progress_ns);
    if (m.Has(Signal::kCollectives)) {
      stalled.push_back({&m, since, wait, recent});
      m.waiting = recent.waiting.has_value();
    }
    // Idle: cores and process, with nothing completing and no collective in flight (one that
    // waits for its peers is not idle: the hang rule judges it), since the start of the newest
    // period that was. A process whose CPU is unmeasured counts as idle on the host.
    const bool idle = recent.completed == 0 && recent.utilization < thresholds_.idle_percent &&
                      recent.in_flight < thresholds_.hang_in_flight &&
                      (!m.Has(Signal::kRuntimeCpu) || recent.cpus < thresholds_.host_busy_cpus);
    if (!idle) {
      track.idle_since_ns = -1;
    } else if (track.idle_since_ns < 0) {
      track.idle_since_ns = previous->device_time.count();
    }
    if (m.Has(Signal::kCoreActivity) && track.idle_since_ns >= 0 && track.step_ns > 0) {
      m.idle_seconds = 1e-9 * static_cast<double>(device_ns - track.idle_since_ns);
      m.stop_after = steps_of(thresholds_.stop_steps, thresholds_.stop_min);
    }
  }
  const std::map<std::uint32_t, v1::Finding> hangs = Hangs(stalled, thresholds_);
  // Whether the last thresholds_.recent alone bear out a change of a runtime's verdict to `kind`,
  // asked when a change is due on a few agreeing evaluations: that window's report is built once
  // per evaluation, and only then.
  const std::uint64_t recent_back =
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, thresholds_.recent / period));
  const Snapshot* recent_start =
      history.AtOrBefore(end->seq > recent_back ? end->seq - recent_back : 0);
  std::optional<v1::Report> recent_report;
  const auto recent_confirms = [&](const Metrics& m, v1::FindingKind kind) {
    if (recent_start == nullptr || recent_start->epoch != end->epoch || recent_start == end)
      return false;
    const RuntimeSample* now = FindRuntime(*end, m.pid);
    const RuntimeSample* before = FindRuntime(*recent_start, m.pid);
    if (now == nullptr || before == nullptr) return false;
    if (!recent_report) recent_report = WindowReport(*recent_start, *end, inventory);
    for (const v1::RuntimeReport& r : recent_report->runtimes()) {
      if (r.pid() != m.pid) continue;
      Metrics short_window =
          Measure(r, recent_report->system().hbm_stats(), *now, *before, inventory);
      short_window.idle_seconds = m.idle_seconds;
      short_window.stop_after = m.stop_after;
      short_window.memory_device = m.memory_device;
      short_window.memory_percent = m.memory_percent;
      short_window.pressured = m.pressured;
      std::string lacking;
      // It agrees; and a change away from healthy is not on its way back: once a pause is over,
      // the newest metrics are busier than the window that still holds it (cores busy in both
      // were never paused).
      const double u = short_window.utilization;
      return Classify(short_window, thresholds_, "", &lacking).kind() == kind &&
             (kind == v1::FINDING_KIND_HEALTHY || u <= m.utilization ||
              u >= thresholds_.busy_percent);
    }
    return false;
  };
  const std::int64_t now_ns = ToUnixNanos(end->wall);
  Analysis next;
  Evaluation evaluation{start->seq, end->seq, {}};
  Gaps gaps;
  for (const Metrics& m : metrics) {
    auto s = stragglers.find(m.pid);
    std::string lacking;
    auto hang = hangs.find(m.pid);
    const v1::Finding& candidate = evaluation.candidates[m.pid] =
        hang != hangs.end()
            ? hang->second
            : Classify(m, thresholds_, s == stragglers.end() ? "" : s->second, &lacking);
    Track& track = tracks_[m.pid];
    if (candidate.kind() == v1::FINDING_KIND_UNSPECIFIED && !lacking.empty()) {
      Forget(track, now_ns);
      if (track.verdict.kind() == v1::FINDING_KIND_UNSPECIFIED)  // not a standing errors verdict
        gaps.undetermined[m.pid] = std::move(lacking);
    } else {
      // A hang, and a stop, come from rules that have already waited several step times.
      const bool waited = hang != hangs.end() ||
                          (candidate.kind() == v1::FINDING_KIND_IDLE_ALLOCATED && m.Stopped()) ||
                          candidate.kind() == v1::FINDING_KIND_MEMORY_PRESSURE;
      // A runtime that sits in a collective that does not complete may be hanging: its verdict
      // holds until the hang rule, which waits a few step times, has decided.
      Decide(track, candidate, waited, now_ns, period,
             [&](v1::FindingKind kind) { return !m.waiting && recent_confirms(m, kind); });
      if (!lacking.empty()) gaps.lacking.insert(std::move(lacking));
    }
    if (track.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED)
      next.runtimes[m.pid].push_back(track.verdict);
  }
  AddAllocationFindings(inventory, *end, now_ns, analysis_, next);
  // Forget runtimes that exited.
  std::erase_if(tracks_, [&](const auto& t) { return FindRuntime(*end, t.first) == nullptr; });
  next.instance = Summarize(next, !end->runtimes.empty(), now_ns, gaps);
  analysis_ = std::move(next);
  evaluation_ = std::move(evaluation);
}

}  // namespace neuronmon::daemon
