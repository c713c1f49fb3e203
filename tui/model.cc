#include "tui/model.h"

#include <algorithm>

#include "proto/names/names.h"
#include "proto/wire/terminal_safe.h"

namespace neuronmon::tui {
namespace {

// Records, per report with collectives_stats, the worst operation's p99 for the latency graph.
class CollectiveHistory final : public client::ReportAccumulator::Observer {
 public:
  explicit CollectiveHistory(std::map<std::uint32_t, Series>& series) : series_(series) {}
  void Stored(v1::Group group, v1::RuntimeReport& runtime) override {
    // Unmeasured collectives (an error) have no latency: no point rather than a 0.
    if (group != v1::GROUP_COLLECTIVES_STATS || !runtime.collectives_stats().error().empty())
      return;
    double worst = 0;
    for (const v1::CollectiveStats& op : runtime.collectives_stats().operations()) {
      if (op.has_latency()) worst = std::max(worst, op.latency().p99());
    }
    series_[runtime.pid()].Push(worst);
  }
  void Dropped(std::uint32_t pid) override { series_.erase(pid); }

 private:
  std::map<std::uint32_t, Series>& series_;
};

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
  events_at_connect_ = welcome.newest_event_seq();
  device_util_.resize(static_cast<std::size_t>(inventory_.devices_size()));
  device_hbm_.resize(static_cast<std::size_t>(inventory_.devices_size()));
}

void Model::AddEvent(const v1::Event& daemon_event) {
  v1::Event event = daemon_event;
  wire::MakeTerminalSafe(event);
  if (event.seq() > events_at_connect_) last_notice = event.summary();
  events_.push_back(std::move(event));
  while (events_.size() > kMaxEvents) events_.pop_front();
}

void Model::Apply(const v1::Report& daemon_report) {
  // Every string a report carries (tags, errors, model names, findings) ends up on the screen.
  v1::Report report = daemon_report;
  wire::MakeTerminalSafe(report);
  last_seq_ = report.seq();
  CollectiveHistory history(collective_p99_);
  merged_.Apply(report, 0, &history);
  RecordHistory();
}

const Series& Model::collective_p99(std::uint32_t pid) const {
  static const Series kNone;
  auto it = collective_p99_.find(pid);
  return it == collective_p99_.end() ? kNone : it->second;
}

bool Model::CoreActivityMeasured() const {
  bool any = false;
  for (const RuntimeView& r : merged_.runtimes()) {
    if (!r.report.has_neuroncore_counters()) continue;
    if (r.report.neuroncore_counters().error().empty()) return true;
    any = true;
  }
  return !any;  // no runtime: idle cores, measured or not
}

void Model::RecordHistory() {
  const int devices = inventory_.devices_size();
  if (devices == 0) return;
  const std::uint32_t per = CoresPerDevice(inventory_);
  const std::vector<double> util = CoreUtilization(0);
  device_util_.resize(static_cast<std::size_t>(devices));
  device_hbm_.resize(static_cast<std::size_t>(devices));
  // What the backend cannot measure gets no point: a 0 would read as a measurement.
  const v1::SystemReport& system = merged_.system().groups;
  const bool cores = CoreActivityMeasured();
  const bool bandwidth = system.hbm_stats().bandwidth_unavailable().empty();
  for (int d = 0; d < devices; ++d) {
    if (cores) {
      device_util_[static_cast<std::size_t>(d)].Push(
          DeviceUtilization(util, static_cast<std::uint32_t>(d), per));
    }
    if (!bandwidth) continue;
    double hbm = 0;
    if (system.has_hbm_stats() && d < system.hbm_stats().devices_size()) {
      hbm = system.hbm_stats().devices(d).bandwidth_utilization_percent();
    }
    device_hbm_[static_cast<std::size_t>(d)].Push(hbm);
  }
}

template <typename Fold>
std::vector<double> Model::PerCore(std::uint32_t pid, Fold fold) const {
  const int total = inventory_.devices_size() * static_cast<int>(CoresPerDevice(inventory_));
  std::vector<double> out(static_cast<std::size_t>(std::max(0, total)), 0.0);
  for (const RuntimeView& r : merged_.runtimes()) {
    if (pid != 0 && r.report.pid() != pid) continue;
    for (const v1::CoreCounters& c : r.report.neuroncore_counters().cores()) {
      if (c.index() < out.size()) out[c.index()] = fold(out[c.index()], c);
    }
  }
  return out;
}

std::vector<double> Model::CoreUtilization(std::uint32_t pid) const {
  return PerCore(pid, [](double acc, const v1::CoreCounters& c) {
    return std::min(100.0, std::max(acc, c.utilization_percent()));
  });
}

std::vector<std::optional<double>> Model::CoreFlops(std::uint32_t pid) const {
  const std::vector<double> flops = PerCore(pid, [](double acc, const v1::CoreCounters& c) {
    return std::max(acc, c.effective_flops());
  });
  std::vector<std::optional<double>> out(flops.begin(), flops.end());
  for (const RuntimeView& r : merged_.runtimes()) {
    if (pid != 0 && r.report.pid() != pid) continue;
    if (r.report.neuroncore_counters().flops_unavailable().empty()) continue;
    for (const v1::CoreCounters& c : r.report.neuroncore_counters().cores()) {
      if (c.index() < out.size()) out[c.index()].reset();
    }
  }
  return out;
}

v1::Subscribe TopSubscription(double delay_seconds) {
  v1::Subscribe s;
  const auto period = static_cast<std::uint64_t>(delay_seconds * 1e9);
  for (v1::Group g :
       {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_MEMORY_USED, v1::GROUP_NEURON_RUNTIME_VCPU_USAGE,
        v1::GROUP_EXECUTION_STATS, v1::GROUP_COLLECTIVES_STATS, v1::GROUP_BOTTLENECK_ANALYSIS,
        v1::GROUP_VCPU_USAGE, v1::GROUP_MEMORY_INFO, v1::GROUP_NEURON_HW_COUNTERS,
        v1::GROUP_HBM_STATS, v1::GROUP_DEVICE_HEALTH}) {
    v1::GroupSubscription* gs = s.add_groups();
    gs->set_group(g);
    gs->set_period_ns(period);
  }
  // The events the daemon kept, for the event list (e), then each new one on the notice row.
  s.mutable_events()->set_after_seq(0);
  return s;
}

}  // namespace neuronmon::tui
