// Model: everything neuron-top knows, merged from the daemon's stream — the inventory, each
// runtime's latest groups, the system groups, findings (merged by client::ReportAccumulator's
// rules, as neuron-monitor merges them), and bounded history rings for the graphs. Pure:
// no I/O, no clocks (the app passes times in). Not thread-safe; the UI thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/report_accumulator.h"
#include "neuronmon/v1/envelope.pb.h"

namespace neuronmon::tui {

enum class ConnectionState { kConnecting, kLive, kReconnecting, kEmbedded, kStopped };

// A bounded series, oldest first.
class Series {
 public:
  explicit Series(std::size_t capacity = 600) : capacity_(capacity) {}
  void Push(double v);
  const std::deque<double>& values() const { return values_; }
  std::vector<double> Vector() const { return {values_.begin(), values_.end()}; }
  bool empty() const { return values_.empty(); }
  double Max() const;

 private:
  std::size_t capacity_;
  std::deque<double> values_;
};

// One application as merged (client/report_accumulator.h): `report` holds every group's last value.
using RuntimeView = client::ReportAccumulator::Runtime;

class Model {
 public:
  void SetWelcome(const v1::Welcome& welcome);
  // Keeps `event` (terminal-safe) among the recent ones; one newer than the daemon's newest when
  // this client connected (not one it kept from before) also becomes the notice row's text.
  void AddEvent(const v1::Event& event);
  // The recent events, oldest first: at most kMaxEvents.
  static constexpr std::size_t kMaxEvents = 200;
  const std::deque<v1::Event>& events() const { return events_; }
  // Merges a report; replays (history at start-up) fill the graphs the same way.
  void Apply(const v1::Report& report);

  const v1::Inventory& inventory() const { return inventory_; }
  bool has_inventory() const { return has_inventory_; }
  bool has_data() const { return merged_.reports() > 0; }
  std::uint64_t reports() const { return merged_.reports(); }
  std::uint64_t last_seq() const { return last_seq_; }
  // Ascending pid.
  const std::vector<RuntimeView>& runtimes() const { return merged_.runtimes(); }
  // The runtime with `pid`, or null.
  const RuntimeView* runtime(std::uint32_t pid) const { return merged_.Find(pid); }
  const v1::SystemReport& system() const { return merged_.system().groups; }
  const google::protobuf::RepeatedPtrField<v1::Finding>& instance_findings() const {
    return merged_.system().findings;
  }
  // The worst collective operation's p99 latency (seconds) of each report with collectives_stats,
  // for runtime `pid`; empty for a runtime without any.
  const Series& collective_p99(std::uint32_t pid) const;
  // Utilization (percent) and HBM bandwidth (percent of peak) per device, one point per report.
  const std::vector<Series>& device_utilization() const { return device_util_; }
  const std::vector<Series>& device_hbm() const { return device_hbm_; }

  // Connection facts shown in the title.
  ConnectionState connection = ConnectionState::kConnecting;
  std::string endpoint;  // "unix:/run/neuron-monitor/neuron-monitord.sock"
  double reconnect_in_seconds = 0;
  std::string last_notice;  // the latest notice or error text, shown briefly
  // Bumped with each notice neuron-top raises itself (a signal refused or sent), so that the same
  // text twice in a row shows twice.
  std::uint64_t notice_count = 0;
  std::string info;  // how the client connected, when it fell back (printed on stderr)

  // Per logical core utilization for the runtimes selected by `pid` (0: all); cores without data
  // are 0. Each runtime's figure for a core is the core's own (report.proto), so runtimes sharing
  // a core are not summed as AWS's "all" tab sums its per-process shares: the core counts once.
  std::vector<double> CoreUtilization(std::uint32_t pid) const;
  // Effective FLOP/s per logical core, as CoreUtilization; nullopt for a core of a runtime whose
  // FLOPs are unmeasured (flops_unavailable), never a 0.
  std::vector<std::optional<double>> CoreFlops(std::uint32_t pid) const;

 private:
  void RecordHistory();
  // False when every runtime with core counters has an error (no utilization figures at all).
  bool CoreActivityMeasured() const;
  // Per logical core, `fold(accumulated, core)` over the selected runtimes' cores.
  template <typename Fold>
  std::vector<double> PerCore(std::uint32_t pid, Fold fold) const;

  v1::Inventory inventory_;
  bool has_inventory_ = false;
  client::ReportAccumulator merged_;
  std::map<std::uint32_t, Series> collective_p99_;  // by pid
  std::vector<Series> device_util_;
  std::vector<Series> device_hbm_;
  std::uint64_t last_seq_ = 0;
  std::deque<v1::Event> events_;
  std::uint64_t events_at_connect_ = 0;  // Welcome.newest_event_seq
};

// What neuron-top subscribes to: every group the Model shows (all but the cumulative totals), each
// every `delay_seconds`.
v1::Subscribe TopSubscription(double delay_seconds);

}  // namespace neuronmon::tui
