#include "tui/model.h"

#include <algorithm>

#include "proto/names/names.h"
#include "proto/wire/terminal_safe.h"

namespace neuronmon::tui {
namespace {

// Copies each group present in `from` over `into`.
void Merge(const v1::RuntimeReport& from, v1::RuntimeReport& into) {
  into.set_pid(from.pid());
  into.set_tag(from.tag());
  into.set_error(from.error());
  if (from.has_neuroncore_counters())
    *into.mutable_neuroncore_counters() = from.neuroncore_counters();
  if (from.has_memory_used()) *into.mutable_memory_used() = from.memory_used();
  if (from.has_vcpu_usage()) *into.mutable_vcpu_usage() = from.vcpu_usage();
  if (from.has_execution_stats()) *into.mutable_execution_stats() = from.execution_stats();
  if (from.has_collectives_stats()) *into.mutable_collectives_stats() = from.collectives_stats();
  if (from.findings_period_ns() != 0 || from.findings_size() > 0) {
    *into.mutable_findings() = from.findings();
    into.set_findings_period_ns(from.findings_period_ns());
  }
}

}  // namespace

void Series::Push(double v) {
  values_.push_back(v);
  while (values_.size() > capacity_) values_.pop_front();
}

double Series::Max() const {
  double m = 0;
  for (double v : values_) m = std::max(m, v);
  return m;
}

void Model::SetWelcome(const v1::Welcome& welcome) {
  inventory_ = welcome.inventory();
  wire::MakeTerminalSafe(inventory_);  // its strings end up on the screen
  has_inventory_ = true;
  device_util_.resize(static_cast<std::size_t>(inventory_.devices_size()));
  device_hbm_.resize(static_cast<std::size_t>(inventory_.devices_size()));
}

void Model::Apply(const v1::Report& daemon_report) {
  // Every string a report carries (tags, errors, model names, findings) ends up on the screen.
  v1::Report report = daemon_report;
  wire::MakeTerminalSafe(report);
  ++reports_;
  last_seq_ = report.seq();
  bool runtime_groups = false;
  for (int g : report.groups()) runtime_groups |= IsRuntimeGroup(static_cast<v1::Group>(g));
  if (runtime_groups) {
    // Runtimes missing from a report that carries runtime groups have exited.
    std::erase_if(runtimes_, [&](const auto& entry) {
      return std::none_of(report.runtimes().begin(), report.runtimes().end(),
                          [&](const v1::RuntimeReport& r) { return r.pid() == entry.first; });
    });
  }
  for (const v1::RuntimeReport& r : report.runtimes()) {
    RuntimeView& view = runtimes_[r.pid()];
    view.pid = r.pid();
    view.tag = r.tag();
    Merge(r, view.latest);
    if (r.has_collectives_stats()) {
      double worst = 0;
      for (const v1::CollectiveStats& op : r.collectives_stats().operations()) {
        if (op.has_latency()) worst = std::max(worst, op.latency().p99());
      }
      view.collective_p99.Push(worst);
    }
  }
  const v1::SystemReport& s = report.system();
  if (s.has_vcpu_usage()) *system_.mutable_vcpu_usage() = s.vcpu_usage();
  if (s.has_memory_info()) *system_.mutable_memory_info() = s.memory_info();
  if (s.has_neuron_hw_counters()) *system_.mutable_neuron_hw_counters() = s.neuron_hw_counters();
  if (s.has_hbm_stats()) *system_.mutable_hbm_stats() = s.hbm_stats();
  const bool findings_due =
      std::count(report.groups().begin(), report.groups().end(), v1::GROUP_BOTTLENECK_ANALYSIS) > 0;
  if (findings_due) {
    instance_findings_.assign(report.findings().begin(), report.findings().end());
  }
  RecordHistory();
}

void Model::RecordHistory() {
  const int devices = inventory_.devices_size();
  if (devices == 0) return;
  const std::uint32_t per = CoresPerDevice(inventory_);
  const std::vector<double> util = CoreUtilization(0);
  device_util_.resize(static_cast<std::size_t>(devices));
  device_hbm_.resize(static_cast<std::size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    device_util_[static_cast<std::size_t>(d)].Push(
        DeviceUtilization(util, static_cast<std::uint32_t>(d), per));
    double hbm = 0;
    if (system_.has_hbm_stats() && d < system_.hbm_stats().devices_size()) {
      hbm = system_.hbm_stats().devices(d).bandwidth_utilization_percent();
    }
    device_hbm_[static_cast<std::size_t>(d)].Push(hbm);
  }
}

template <typename Fold>
std::vector<double> Model::PerCore(std::uint32_t pid, Fold fold) const {
  const int total = inventory_.devices_size() * static_cast<int>(CoresPerDevice(inventory_));
  std::vector<double> out(static_cast<std::size_t>(std::max(0, total)), 0.0);
  for (const auto& [id, r] : runtimes_) {
    if (pid != 0 && id != pid) continue;
    for (const v1::CoreCounters& c : r.latest.neuroncore_counters().cores()) {
      if (c.index() < out.size()) out[c.index()] = fold(out[c.index()], c);
    }
  }
  return out;
}

std::vector<double> Model::CoreUtilization(std::uint32_t pid) const {
  return PerCore(pid, [](double acc, const v1::CoreCounters& c) {
    return std::min(100.0, acc + c.utilization_percent());
  });
}

std::vector<double> Model::CoreFlops(std::uint32_t pid) const {
  return PerCore(pid,
                 [](double acc, const v1::CoreCounters& c) { return acc + c.effective_flops(); });
}

v1::Subscribe TopSubscription(double delay_seconds) {
  v1::Subscribe s;
  const auto period = static_cast<std::uint64_t>(delay_seconds * 1e9);
  for (v1::Group g :
       {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_MEMORY_USED, v1::GROUP_NEURON_RUNTIME_VCPU_USAGE,
        v1::GROUP_EXECUTION_STATS, v1::GROUP_COLLECTIVES_STATS, v1::GROUP_BOTTLENECK_ANALYSIS,
        v1::GROUP_VCPU_USAGE, v1::GROUP_MEMORY_INFO, v1::GROUP_NEURON_HW_COUNTERS,
        v1::GROUP_HBM_STATS}) {
    v1::GroupSubscription* gs = s.add_groups();
    gs->set_group(g);
    gs->set_period_ns(period);
  }
  return s;
}

}  // namespace neuronmon::tui
