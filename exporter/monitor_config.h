// MonitorConfig: AWS neuron-monitor's configuration file (`neuron-monitor -c FILE`, reference
// neuron-tools.md §1.3) — a root `period`, `neuron_runtimes[]` selectors (a `tag_filter` regex and
// the runtime-level `metrics[]` groups), and `system_metrics[]`; `period` may appear at the root,
// on a runtime selector and on a group, the innermost winning, default 5 s. Our additive groups are
// accepted too: collectives_stats and bottleneck_analysis (runtime), hbm_stats and
// device_health (system). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon::exporter {

struct MetricGroupConfig {
  v1::Group group = v1::GROUP_UNSPECIFIED;
  Nanos period{0};
};

struct RuntimeSelector {
  std::string tag_filter;  // empty: every runtime
  std::vector<MetricGroupConfig> metrics;
};

struct MonitorConfig {
  std::vector<RuntimeSelector> runtimes;
  std::vector<MetricGroupConfig> system;
};

inline constexpr Nanos kDefaultMonitorPeriod = std::chrono::seconds(5);

// No config file: every group (ours included) every 5 s for every runtime.
MonitorConfig DefaultMonitorConfig();

// Parses a config file's text; `source` names it in errors, which read
// "SOURCE: FIELD: what is wrong" (e.g. `mon.conf: neuron_runtimes[0].metrics[1].type: unknown
// metric group "gpu_counters" ...`). Comments are allowed.
Result<MonitorConfig> ParseMonitorConfig(std::string_view text, const std::string& source);
// Reads `path` and parses it. Errors name the file: it does not exist, is not a regular file (a
// FIFO or /dev/zero would never end), or is larger than 1 MiB.
Result<MonitorConfig> LoadMonitorConfig(const std::string& path);

// The daemon subscriptions that implement `config`: one per runtime selector, the system groups
// riding on the first (or alone when there is no selector).
std::vector<v1::Subscribe> MonitorSubscriptions(const MonitorConfig& config);

}  // namespace neuronmon::exporter
