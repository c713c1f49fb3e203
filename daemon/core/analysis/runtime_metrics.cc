#include "daemon/core/analysis/runtime_metrics.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "daemon/core/report/report_builder.h"

namespace neuronmon::daemon::analysis_internal {
namespace {

// One runtime's device memory, by device.
struct Held {
  std::map<int, double> bytes;                            // by device
  std::map<int, std::pair<double, const char*>> largest;  // by device: category and its size
};

// What each runtime of the newest snapshot holds (by pid), and its tag.
struct Holders {
  std::map<std::uint32_t, Held> held;
  std::map<std::uint32_t, std::string> tags;
};

void AddCategories(const CoreMemory& c, std::map<const char*, double>& cat) {
  cat["tensors"] += static_cast<double>(c.tensors);
  cat["constants"] += static_cast<double>(c.constants);
  cat["model code"] += static_cast<double>(c.model_code);
  cat["scratchpad"] += static_cast<double>(c.model_shared_scratchpad);
  cat["runtime memory"] += static_cast<double>(c.runtime_memory);
  cat["driver and other"] += static_cast<double>(c.other);
}

Holders HoldersOf(const Snapshot& end, std::uint32_t per) {
  Holders out;
  for (const RuntimeSample& r : end.runtimes) {
    out.tags[r.pid] = r.tag;
    if (!r.memory) continue;
    Held& h = out.held[r.pid];
    std::map<int, std::map<const char*, double>> categories;
    for (const CoreMemory& c : r.memory->cores) {
      const int d = static_cast<int>(c.core / per);
      h.bytes[d] += static_cast<double>(c.Total());
      AddCategories(c, categories[d]);
    }
    for (const auto& [d, cat] : categories) {
      auto top = std::max_element(cat.begin(), cat.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      h.largest[d] = {top->second, top->first};
    }
  }
  return out;
}

// "pid 812 (serve) holds 2.7 GiB": who besides `pid` holds the most on device `d` ("": nobody).
std::string BiggestOtherHolder(Holders& holders, std::uint32_t pid, int d) {
  double top = 0;
  std::string out;
  for (const auto& [other_pid, other] : holders.held) {
    const auto it = other.bytes.find(d);
    if (other_pid == pid || it == other.bytes.end() || it->second <= top) continue;
    top = it->second;
    out = "pid " + std::to_string(other_pid) + " (" + holders.tags[other_pid] + ") holds " +
          GiB(it->second);
  }
  return out;
}

// Makes device `d`, on which `m` holds `own` bytes, the one its memory pressure is judged on.
void TakeDevice(RuntimeMetrics& m, int d, double own, const v1::DeviceHbm& dev, double percent,
                const Held& mine) {
  m.memory_device = d;
  m.memory_percent = percent;
  m.memory_used = static_cast<double>(dev.used_bytes());
  m.memory_total = static_cast<double>(dev.total_bytes());
  m.memory_own = own;
  const auto largest = mine.largest.find(d);
  m.memory_category = largest == mine.largest.end()
                          ? ""
                          : std::string(largest->second.second) + " " + GiB(largest->second.first);
}

// The per-core figures: utilization, FLOP/s against peak, devices and their utilization.
void MeasureCores(const v1::RuntimeReport& r, const v1::Inventory& inv, RuntimeMetrics& m) {
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
}

// Why each signal could not be measured (empty: it was). A runtime's device error makes its
// groups' errors too; the errors rule reads that first.
void MeasureSignals(const v1::RuntimeReport& r, const v1::HbmStats& hbm_stats, RuntimeMetrics& m) {
  const auto set = [&](Signal s, const std::string& reason) {
    m.unavailable[static_cast<std::size_t>(s)] = reason;
  };
  const v1::NeuronCoreCounters& cores = r.neuroncore_counters();
  set(Signal::kCoreActivity, cores.error());
  set(Signal::kFlops, cores.error().empty() ? cores.flops_unavailable() : cores.error());
  set(Signal::kExecutions, r.execution_stats().error());
  set(Signal::kCollectives, r.collectives_stats().error());
  set(Signal::kHbmTraffic, hbm_stats.bandwidth_unavailable());
  set(Signal::kRuntimeCpu, r.vcpu_usage().error());
}

}  // namespace

std::string Fmt(const char* format, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

std::string DeviceName(int d) { return "nd" + std::to_string(d); }

std::string GiB(double bytes) { return Fmt("%.1f GiB", bytes / (1024.0 * 1024 * 1024)); }

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

const Snapshot* WindowStart(const History& history, const Snapshot& end, Nanos length,
                            Nanos period) {
  const std::uint64_t back = static_cast<std::uint64_t>(std::max<std::int64_t>(1, length / period));
  return history.AtOrBefore(end.seq > back ? end.seq - back : 0);
}

void MeasureMemory(std::vector<RuntimeMetrics>& all, const Snapshot& end, const v1::HbmStats& hbm,
                   const v1::Inventory& inv) {
  Holders holders = HoldersOf(end, CoresPerDevice(inv));
  for (RuntimeMetrics& m : all) {
    const Held& mine = holders.held[m.pid];
    for (const auto& [d, own] : mine.bytes) {
      if (own <= 0 || d >= hbm.devices_size() || !hbm.devices(d).error().empty()) continue;
      const v1::DeviceHbm& dev = hbm.devices(d);
      if (dev.total_bytes() == 0) continue;
      const double percent =
          100 * static_cast<double>(dev.used_bytes()) / static_cast<double>(dev.total_bytes());
      if (m.memory_device >= 0 && percent <= m.memory_percent) continue;
      TakeDevice(m, d, own, dev, percent, mine);
      m.memory_neighbour = BiggestOtherHolder(holders, m.pid, d);
    }
  }
}

RuntimeMetrics Measure(const v1::RuntimeReport& r, const v1::HbmStats& hbm_stats,
                       const RuntimeSample& now, const RuntimeSample& before,
                       const v1::Inventory& inv) {
  RuntimeMetrics m;
  m.pid = r.pid();
  m.tag = r.tag();
  m.device_error = r.error();
  m.loading =
      now.memory && before.memory && now.memory->DeviceTotal() > before.memory->DeviceTotal();
  MeasureCores(r, inv, m);
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
  MeasureSignals(r, hbm_stats, m);
  m.process_cpus = (r.vcpu_usage().user_percent() + r.vcpu_usage().system_percent()) / 100 *
                   std::max(1.0, static_cast<double>(inv.host_vcpu_count()));
  return m;
}

}  // namespace neuronmon::daemon::analysis_internal
