#include "daemon/core/report/report_builder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "daemon/core/report/device_health.h"
#include "proto/names/names.h"
#include "proto/procfs/proc_parsers.h"
#include "proto/wire/field_codec.h"
#include "proto/wire/snapshot_codec.h"

namespace neuronmon::daemon {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

// Δ of a cumulative counter; after a reset the counter restarted, so its value is the delta.
std::uint64_t Delta(std::uint64_t end, std::uint64_t start, bool reset) {
  return reset || end < start ? end : end - start;
}
double Delta(double end, double start, bool reset) {
  return reset || end < start ? end : end - start;
}

struct Span {
  const Snapshot* a;
  const Snapshot* b;
  double seconds;  // device time between them
  bool reset;      // counters restarted in between
  std::uint64_t period_ns;
};

Span MakeSpan(const Snapshot* a, const Snapshot* b) {
  const auto ns = std::max<std::int64_t>(0, (b->device_time - a->device_time).count());
  return {a, b, static_cast<double>(ns) * 1e-9, a->epoch != b->epoch,
          static_cast<std::uint64_t>(ns)};
}

// The runtime's own error, else why the backend cannot measure `signal`: a group with an error
// carries no figures.
const std::string& GroupError(const RuntimeSample& r, const Span& s, Signal signal) {
  return r.error.empty() ? s.b->UnmeasuredReason(signal) : r.error;
}

double Rate(double delta, const Span& s) { return s.seconds > 0 ? delta / s.seconds : 0; }

// The fraction of the window a counter of busy nanoseconds was busy, at most 1.
double TimeShare(std::uint64_t busy_ns, std::uint64_t period_ns) {
  return period_ns ? std::min(1.0, static_cast<double>(busy_ns) / static_cast<double>(period_ns))
                   : 0;
}

double Percent(std::uint64_t busy_ns, const Span& s) {
  if (s.period_ns == 0) return 0;
  return std::min(100.0, 100.0 * static_cast<double>(busy_ns) / static_cast<double>(s.period_ns));
}

void FillCores(const RuntimeSample& r, const Span& s, int lnc, v1::NeuronCoreCounters* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(GroupError(r, s, Signal::kCoreActivity));
  if (!out->error().empty()) return;
  out->set_flops_unavailable(s.b->UnmeasuredReason(Signal::kFlops));
  const bool flops = out->flops_unavailable().empty();
  for (std::uint32_t c : r.cores) {
    if (c >= s.b->cores.size() || c >= s.a->cores.size()) continue;
    const CoreCounters& e = s.b->cores[c];
    const CoreCounters& st = s.a->cores[c];
    v1::CoreCounters* core = out->add_cores();
    core->set_index(c);
    core->set_utilization_percent(Percent(Delta(e.busy_ns, st.busy_ns, s.reset), s));
    if (flops) {
      core->set_flops(Rate(Delta(e.flops, st.flops, s.reset), s));
      core->set_effective_flops(Rate(Delta(e.effective_flops, st.effective_flops, s.reset), s));
    }
    for (std::size_t p = 0; p < e.physical_busy_ns.size() && p < st.physical_busy_ns.size(); ++p) {
      v1::PhysicalCoreUtilization* phys = core->add_physical();
      phys->set_index(c * static_cast<std::uint32_t>(lnc) + static_cast<std::uint32_t>(p));
      phys->set_utilization_percent(
          Percent(Delta(e.physical_busy_ns[p], st.physical_busy_ns[p], s.reset), s));
    }
  }
}

void FillMemory(const RuntimeSample& r, const Span& s, v1::MemoryUsed* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(r.error);
  wire::MemoryToProto(*r.memory, *out);
}

void FillVcpu(const RuntimeSample& r, const RuntimeSample* before, const Span& s, double vcpus,
              v1::RuntimeVcpuUsage* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(GroupError(r, s, Signal::kRuntimeCpu));
  if (before == nullptr || s.period_ns == 0 || !out->error().empty()) return;
  const double capacity = static_cast<double>(s.period_ns) * std::max(1.0, vcpus) / 100.0;
  out->set_user_percent(std::min(
      100.0, static_cast<double>(Delta(r.cpu_user_ns, before->cpu_user_ns, s.reset)) / capacity));
  out->set_system_percent(std::min(
      100.0,
      static_cast<double>(Delta(r.cpu_system_ns, before->cpu_system_ns, s.reset)) / capacity));
}

void FillExecutions(const RuntimeSample& r, const RuntimeSample* before, const Span& s,
                    v1::ExecutionStats* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(GroupError(r, s, Signal::kExecutions));
  if (!out->error().empty()) return;
  const bool reset = s.reset || before == nullptr;
  wire::ExecutionSummariesToProto(reset ? r.executions : r.executions.Minus(before->executions),
                                  *out->mutable_error_summary(), *out->mutable_execution_summary());
  const LatencyHistogram total =
      reset ? r.total_latency : r.total_latency.Minus(before->total_latency);
  const LatencyHistogram device =
      reset ? r.device_latency : r.device_latency.Minus(before->device_latency);
  out->set_latency_unavailable(s.b->UnmeasuredReason(Signal::kLatency));
  if (!out->latency_unavailable().empty()) return;
  if (!FillPercentiles(total, out->mutable_total_latency())) out->clear_total_latency();
  if (!FillPercentiles(device, out->mutable_device_latency())) out->clear_device_latency();
}

void FillCollectives(const RuntimeSample& r, const RuntimeSample* before, const Span& s,
                     v1::CollectivesStats* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(GroupError(r, s, Signal::kCollectives));
  if (!out->error().empty()) return;
  const bool reset = s.reset || before == nullptr;
  std::uint64_t busy_ns = 0;
  for (std::size_t k = 0; k < r.collectives.size(); ++k) {
    const CollectiveCounters& c = r.collectives[k];
    if (c.count == 0) continue;  // never used by this runtime
    const CollectiveCounters zero;
    const CollectiveCounters& b = reset ? zero : before->collectives[k];
    v1::CollectiveStats* op = out->add_operations();
    op->set_op(CollectiveOpOf(c.kind));
    const std::uint64_t count = Delta(c.count, b.count, reset);
    const std::uint64_t bytes = Delta(c.bytes, b.bytes, reset);
    op->set_count(count);
    op->set_bytes(bytes);
    op->set_operations_per_second(Rate(static_cast<double>(count), s));
    op->set_bytes_per_second(Rate(static_cast<double>(bytes), s));
    op->set_mean_message_bytes(count ? static_cast<double>(bytes) / static_cast<double>(count) : 0);
    const std::uint64_t busy = Delta(c.busy_ns, b.busy_ns, reset);
    busy_ns += busy;
    op->set_time_share(TimeShare(busy, s.period_ns));
    const LatencyHistogram window = reset ? c.latency : c.latency.Minus(b.latency);
    if (!FillPercentiles(window, op->mutable_latency())) op->clear_latency();
  }
  // The share of all operations together: the Diagnosis's collective_time_share_percent. A source
  // that knows only the time (the runtime's datastore) gives the share without operations.
  // Its counters are the process's own, not the device's: a device reset does not restart them.
  if (out->operations().empty() && r.collective_time_ns && before != nullptr &&
      before->collective_time_ns) {
    const std::uint64_t now = *r.collective_time_ns, then = *before->collective_time_ns;
    busy_ns = now >= then ? now - then : now;
  }
  out->set_time_share(TimeShare(busy_ns, s.period_ns));
}

// `process`: the runtime's process in the inventory (who runs it, when it started), or null.
void FillRuntime(const RuntimeSample& r, const ReportInput& in, const v1::Process* process,
                 v1::RuntimeReport* out) {
  out->set_pid(r.pid);
  out->set_tag(r.tag);
  if (process != nullptr) {
    const v1::Attribution& who = process->attribution();
    if (who.ByteSizeLong() > 0) *out->mutable_attribution() = who;
    out->set_start_time_ticks(process->start_time_ticks());
  }
  const int lnc =
      static_cast<int>(std::max(1u, in.inventory->hardware_info().logical_neuroncore_config()));
  const double vcpus = in.inventory->host_vcpu_count();
  for (const GroupWindow& g : in.groups) {
    const Span s = MakeSpan(g.start, in.end);
    const RuntimeSample* before = FindRuntime(*g.start, r.pid);
    switch (g.group) {
      case v1::GROUP_NEURONCORE_COUNTERS:
        FillCores(r, s, lnc, out->mutable_neuroncore_counters());
        break;
      case v1::GROUP_MEMORY_USED:
        FillMemory(r, s, out->mutable_memory_used());
        break;
      case v1::GROUP_NEURON_RUNTIME_VCPU_USAGE:
        FillVcpu(r, before, s, vcpus, out->mutable_vcpu_usage());
        break;
      case v1::GROUP_EXECUTION_STATS:
        FillExecutions(r, before, s, out->mutable_execution_stats());
        break;
      case v1::GROUP_COLLECTIVES_STATS:
        FillCollectives(r, before, s, out->mutable_collectives_stats());
        break;
      case v1::GROUP_BOTTLENECK_ANALYSIS:
        out->set_findings_period_ns(s.period_ns);  // findings are attached by the analyzer
        break;
      default:
        break;
    }
  }
}

void FillCpu(const CpuUsagePercent& p, std::uint32_t cpu, v1::CpuUsage* out) {
  out->set_cpu(cpu);
  out->set_user(p.user);
  out->set_nice(p.nice);
  out->set_system(p.system);
  out->set_idle(p.idle);
  out->set_io_wait(p.io_wait);
  out->set_irq(p.irq);
  out->set_soft_irq(p.soft_irq);
}

void FillHostCpu(const Span& s, v1::VcpuUsage* out) {
  out->set_period_ns(s.period_ns);
  const HostSample& a = s.a->host;
  const HostSample& b = s.b->host;
  out->set_error(b.cpu_error);
  if (!b.cpu_error.empty()) return;
  FillCpu(CpuUsageBetween(a.total, b.total), 0, out->mutable_average());
  for (const CpuSample& now : b.per_cpu) {
    auto it = std::find_if(a.per_cpu.begin(), a.per_cpu.end(),
                           [&](const CpuSample& c) { return c.cpu == now.cpu; });
    const CpuTimes& before = it != a.per_cpu.end() ? it->times : now.times;
    FillCpu(CpuUsageBetween(before, now.times), now.cpu, out->add_per_cpu());
  }
  out->set_context_switch_count(
      b.context_switches >= a.context_switches ? b.context_switches - a.context_switches : 0);
}

void FillHostMemoryInfo(const Span& s, v1::MemoryInfo* out) {
  const HostSample& h = s.b->host;
  out->set_period_ns(s.period_ns);
  out->set_error(h.memory_error);
  out->set_memory_total_bytes(h.memory_total_bytes);
  out->set_memory_used_bytes(h.memory_used_bytes);
  out->set_swap_total_bytes(h.swap_total_bytes);
  out->set_swap_used_bytes(h.swap_used_bytes);
}

// Devices that do not answer, then the read problems of those that do.
std::string LostDevices(const Snapshot& s) {
  std::string lost;
  std::string problems;
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    if (!s.devices[d].present) lost += (lost.empty() ? "nd" : ", nd") + std::to_string(d);
    const std::string& error = s.devices[d].error;
    if (s.devices[d].present && !error.empty()) problems += (problems.empty() ? "" : "; ") + error;
  }
  if (!lost.empty()) lost += ": device is not responding";
  return lost.empty() || problems.empty() ? lost + problems : lost + "; " + problems;
}

void FillEcc(const Span& s, v1::HwCounters* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(LostDevices(*s.b));
  out->set_corrected_unavailable(s.b->UnmeasuredReason(Signal::kEccCorrected));
  for (std::size_t d = 0; d < s.b->devices.size(); ++d) {
    const EccCounters& now = s.b->devices[d].ecc;
    const EccCounters e =
        s.reset || d >= s.a->devices.size() ? now : now.Minus(s.a->devices[d].ecc);
    v1::DeviceEcc* dev = out->add_devices();
    dev->set_neuron_device_index(static_cast<std::uint32_t>(d));
    dev->set_mem_ecc_corrected(e.mem_corrected);
    dev->set_mem_ecc_uncorrected(e.mem_uncorrected);
    dev->set_sram_ecc_uncorrected(e.sram_uncorrected);
    dev->set_sram_ecc_corrected(e.sram_corrected);
  }
}

void FillDeviceHealth(const Span& s, v1::DeviceHealthStats* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(LostDevices(*s.b));
  const std::string& corrected = s.b->UnmeasuredReason(Signal::kEccCorrected);
  for (std::size_t d = 0; d < s.b->devices.size(); ++d)
    *out->add_devices() = DeviceHealthOf(*s.a, *s.b, d, s.reset, corrected);
}

void FillHbm(const Span& s, const v1::Inventory& inv, v1::HbmStats* out) {
  out->set_period_ns(s.period_ns);
  out->set_error(LostDevices(*s.b));
  out->set_bandwidth_unavailable(s.b->UnmeasuredReason(Signal::kHbmTraffic));
  const bool bandwidth = out->bandwidth_unavailable().empty();
  const std::uint32_t cores_per_device = CoresPerDevice(inv);
  std::vector<std::uint64_t> used(s.b->devices.size(), 0);
  for (const RuntimeSample& r : s.b->runtimes) {
    for (const CoreMemory& c : r.memory->cores) {
      const std::size_t d = c.core / cores_per_device;
      if (d < used.size()) used[d] += c.Total();
    }
  }
  for (std::size_t d = 0; d < s.b->devices.size(); ++d) {
    const DeviceCounters& e = s.b->devices[d];
    const DeviceCounters zero;
    const DeviceCounters& b = d < s.a->devices.size() ? s.a->devices[d] : zero;
    v1::DeviceHbm* dev = out->add_devices();
    dev->set_neuron_device_index(static_cast<std::uint32_t>(d));
    if (!e.present) {
      dev->set_error("device is not responding");
      continue;
    }
    dev->set_total_bytes(inv.hardware_info().neuron_device_memory_size());
    // The device's own figure when its driver gives one (every category, whoever allocated it,
    // shared devices included); else what its runtimes say they hold.
    std::uint64_t device_used = 0;
    for (std::uint64_t bytes : e.memory.used) device_used += bytes;
    dev->set_used_bytes(e.memory.measured ? device_used : used[d]);
    if (e.memory.measured) {
      for (std::size_t i = 0; i < kDeviceMemoryCategories.size(); ++i) {
        v1::MemoryCategoryUsage* m = dev->add_memory_categories();
        m->set_category(kDeviceMemoryCategories[i]);
        m->set_used_bytes(e.memory.used[i]);
        m->set_peak_bytes(std::max(e.memory.peak[i], e.memory.used[i]));
      }
    } else {
      dev->set_memory_categories_unavailable(
          "not measured (the driver's tree has no stats/memory_usage/device_mem, or the "
          "recording predates them)");
    }
    if (!bandwidth) continue;
    const double read =
        Rate(static_cast<double>(Delta(e.hbm_read_bytes, b.hbm_read_bytes, s.reset)), s);
    const double write =
        Rate(static_cast<double>(Delta(e.hbm_write_bytes, b.hbm_write_bytes, s.reset)), s);
    dev->set_read_bytes_per_second(read);
    dev->set_write_bytes_per_second(write);
    const double peak = d < static_cast<std::size_t>(inv.devices_size())
                            ? inv.devices(static_cast<int>(d)).hbm_peak_bytes_per_second()
                            : 0;
    dev->set_bandwidth_utilization_percent(peak > 0 ? std::min(100.0, 100 * (read + write) / peak)
                                                    : 0);
  }
}

}  // namespace

bool FillPercentiles(const LatencyHistogram& h, v1::Percentiles* out) {
  if (h.empty()) return false;
  out->set_p0(h.Quantile(0));
  out->set_p1(h.Quantile(0.01));
  out->set_p25(h.Quantile(0.25));
  out->set_p50(h.Quantile(0.5));
  out->set_p75(h.Quantile(0.75));
  out->set_p99(h.Quantile(0.99));
  out->set_p100(h.Quantile(1));
  return true;
}

void FillTotals(const Snapshot& s, v1::Totals* out) {
  out->set_epoch(s.epoch);
  out->set_sim_time_ns(
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, s.device_time.count())));
  for (std::size_t c = 0; c < s.cores.size(); ++c) {
    v1::CoreTotals* core = out->add_cores();
    core->set_index(static_cast<std::uint32_t>(c));
    core->set_busy_ns(s.cores[c].busy_ns);
    core->set_flops(s.cores[c].flops);
    core->set_effective_flops(s.cores[c].effective_flops);
    for (std::uint64_t p : s.cores[c].physical_busy_ns) core->add_physical_busy_ns(p);
  }
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    const DeviceCounters& dc = s.devices[d];
    v1::DeviceTotals* dev = out->add_devices();
    dev->set_index(static_cast<std::uint32_t>(d));
    dev->set_hbm_read_bytes(dc.hbm_read_bytes);
    dev->set_hbm_write_bytes(dc.hbm_write_bytes);
    dev->set_mem_ecc_corrected(dc.ecc.mem_corrected);
    dev->set_mem_ecc_uncorrected(dc.ecc.mem_uncorrected);
    dev->set_sram_ecc_corrected(dc.ecc.sram_corrected);
    dev->set_sram_ecc_uncorrected(dc.ecc.sram_uncorrected);
    dev->set_present(dc.present);
  }
  for (const RuntimeSample& r : s.runtimes) {
    v1::RuntimeTotals* rt = out->add_runtimes();
    rt->set_pid(r.pid);
    rt->set_tag(r.tag);
    wire::ExecutionSummariesToProto(r.executions, *rt->mutable_errors(), *rt->mutable_executions());
    rt->set_cpu_user_ns(r.cpu_user_ns);
    rt->set_cpu_system_ns(r.cpu_system_ns);
    auto fill_hist = [](const LatencyHistogram& h, v1::Histogram* out_h) {
      out_h->set_count(h.count());
      out_h->set_sum_seconds(h.sum_seconds());
      for (const auto& [index, n] : h.buckets()) {
        v1::HistogramBucket* b = out_h->add_buckets();
        b->set_index(index);
        b->set_count(n);
      }
    };
    for (std::size_t k = 0; k < r.collectives.size(); ++k) {
      const CollectiveCounters& c = r.collectives[k];
      if (c.count == 0) continue;
      v1::CollectiveTotals* ct = rt->add_collectives();
      ct->set_op(CollectiveOpOf(c.kind));
      ct->set_count(c.count);
      ct->set_bytes(c.bytes);
      ct->set_busy_ns(c.busy_ns);
      fill_hist(c.latency, ct->mutable_latency());
    }
    fill_hist(r.total_latency, rt->mutable_total_latency());
    fill_hist(r.device_latency, rt->mutable_device_latency());
  }
}

// The host in a few figures over the window from `start`: the runtime groups' figures summed or
// averaged over applications.
void FillHostSummary(const Snapshot* start, const ReportInput& in, v1::HostSummary* out) {
  ReportInput runtimes;
  runtimes.inventory = in.inventory;
  runtimes.end = in.end;
  runtimes.subscription = in.subscription;
  for (v1::Group g :
       {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_EXECUTION_STATS, v1::GROUP_COLLECTIVES_STATS}) {
    runtimes.groups.push_back({g, start});
  }
  const v1::Report r = BuildReport(runtimes);
  std::map<std::uint32_t, const v1::Process*> processes;
  for (const v1::Process& p : in.inventory->processes()) processes[p.pid()] = &p;
  double share = 0, p99 = 0, executions = 0, memory = 0;
  int with_collectives = 0, top_cores = -1;
  // A core several applications share is one core: each runtime's figure for it is the core's.
  std::map<std::uint32_t, double> busy;
  for (const v1::RuntimeReport& rt : r.runtimes()) {
    const int n = rt.neuroncore_counters().cores_size();
    for (const v1::CoreCounters& c : rt.neuroncore_counters().cores())
      busy[c.index()] = std::max(busy[c.index()], c.utilization_percent());
    const v1::ExecutionStats& e = rt.execution_stats();
    if (e.period_ns() > 0) {
      executions += static_cast<double>(e.execution_summary().completed()) * 1e9 /
                    static_cast<double>(e.period_ns());
    }
    const v1::CollectivesStats& c = rt.collectives_stats();
    if (c.operations_size() > 0 || c.time_share() > 0) {
      share += c.time_share();
      ++with_collectives;
    }
    for (const v1::CollectiveStats& op : c.operations()) {
      if (op.has_latency()) p99 = std::max(p99, op.latency().p99());
    }
    auto p = processes.find(rt.pid());
    if (p != processes.end() && n > top_cores) {
      top_cores = n;
      out->set_job(p->second->command());
    }
  }
  for (const RuntimeSample& s : in.end->runtimes) {
    if (s.memory && (in.subscription == nullptr || in.subscription->Matches(s.tag)))
      memory += static_cast<double>(s.memory->DeviceTotal());
  }
  const v1::HardwareInfo& hw = in.inventory->hardware_info();
  const double hbm = static_cast<double>(hw.neuron_device_memory_size()) * hw.neuron_device_count();
  double busy_sum = 0;
  for (const auto& [core, percent] : busy) busy_sum += percent;
  out->set_utilization_percent(busy.empty() ? 0 : busy_sum / static_cast<double>(busy.size()));
  out->set_cores_in_use(static_cast<std::uint32_t>(busy.size()));
  out->set_runtimes(static_cast<std::uint32_t>(r.runtimes_size()));
  out->set_executions_per_second(executions);
  out->set_collective_time_share(with_collectives > 0 ? share / with_collectives : 0);
  out->set_collective_p99_seconds(p99);
  out->set_hbm_used_percent(hbm > 0 ? 100 * memory / hbm : 0);
  out->set_device_count(hw.neuron_device_count());
  std::string unavailable;
  for (Signal s : {Signal::kCoreActivity, Signal::kExecutions, Signal::kCollectives}) {
    const std::string& reason = in.end->UnmeasuredReason(s);
    if (reason.empty()) continue;
    unavailable += (unavailable.empty() ? "" : "; ") + std::string(SignalName(s)) + ": " + reason;
  }
  out->set_unavailable(unavailable);
}

v1::Report BuildReport(const ReportInput& in) {
  v1::Report report;
  const Snapshot& end = *in.end;
  report.set_seq(end.seq);
  report.set_wall_time_unix_ns(ToUnixNanos(end.wall));
  report.set_replay(in.replay);
  std::uint64_t window_start = end.seq;
  std::uint64_t longest = 0;
  bool any_runtime_group = false;
  for (const GroupWindow& g : in.groups) {
    report.add_groups(g.group);
    const Span s = MakeSpan(g.start, in.end);
    if (s.reset) report.set_counters_reset(true);
    if (s.period_ns >= longest) {
      longest = s.period_ns;
      window_start = std::min(window_start, g.start->seq);
    }
    any_runtime_group = any_runtime_group || IsRuntimeGroup(g.group);
    switch (g.group) {
      case v1::GROUP_VCPU_USAGE:
        FillHostCpu(s, report.mutable_system()->mutable_vcpu_usage());
        break;
      case v1::GROUP_MEMORY_INFO:
        FillHostMemoryInfo(s, report.mutable_system()->mutable_memory_info());
        break;
      case v1::GROUP_NEURON_HW_COUNTERS:
        FillEcc(s, report.mutable_system()->mutable_neuron_hw_counters());
        break;
      case v1::GROUP_HBM_STATS:
        FillHbm(s, *in.inventory, report.mutable_system()->mutable_hbm_stats());
        break;
      case v1::GROUP_DEVICE_HEALTH:
        FillDeviceHealth(s, report.mutable_system()->mutable_device_health());
        break;
      case v1::GROUP_TOTALS:
        FillTotals(end, report.mutable_totals());
        break;
      case v1::GROUP_HOST_SUMMARY:
        FillHostSummary(g.start, in, report.mutable_host_summary());
        break;
      default:
        break;
    }
  }
  report.set_period_ns(longest);
  report.set_window_start_seq(window_start);
  if (any_runtime_group) {
    // Each runtime's process, looked up once per report rather than once per runtime.
    std::map<std::uint32_t, const v1::Process*> processes;
    for (const v1::Process& p : in.inventory->processes()) processes[p.pid()] = &p;
    for (const RuntimeSample& r : end.runtimes) {
      if (in.subscription != nullptr && !in.subscription->Matches(r.tag)) continue;
      const auto p = processes.find(r.pid);
      FillRuntime(r, in, p == processes.end() ? nullptr : p->second, report.add_runtimes());
    }
  }
  return report;
}

}  // namespace neuronmon::daemon
