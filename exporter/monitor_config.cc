#include "exporter/monitor_config.h"

#include "exporter/monitor_json.h"
#include "proto/common/file_reader.h"
#include "proto/common/json_reader.h"
#include "proto/common/tag_filter.h"
#include "proto/names/names.h"

namespace neuronmon::exporter {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxMonitorConfigBytes = 1 << 20;
constexpr std::size_t kMaxSelectors = MonitorState::kMaxSources;

// The groups a config may name at one level: the runtime-level or the system-level ones (totals
// and the groups asked for by name are ours, not neuron-monitor metrics).
std::vector<v1::Group> Groups(bool runtime) {
  std::vector<v1::Group> out;
  for (v1::Group g : AllGroups()) {
    if (g != v1::GROUP_TOTALS && !IsNamedOnlyGroup(g) && IsRuntimeGroup(g) == runtime)
      out.push_back(g);
  }
  return out;
}

std::string Names(const std::vector<v1::Group>& groups) {
  std::string out;
  for (v1::Group g : groups) out += (out.empty() ? "" : ", ") + std::string(GroupName(g));
  return out;
}

Nanos Period(JsonReader& r, Nanos inherited) {
  return r.Duration("period", inherited, std::chrono::milliseconds(10), std::chrono::hours(24));
}

std::vector<MetricGroupConfig> ParseGroups(JsonReader& parent, const char* key,
                                           const std::vector<v1::Group>& known, Nanos period,
                                           std::vector<std::string>* problems) {
  std::vector<MetricGroupConfig> out;
  const json* list = parent.Array(key);
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonReader r((*list)[i], parent.PathOf(key, i), problems);
    const std::string type = r.String("type");
    MetricGroupConfig g;
    g.period = Period(r, period);
    for (v1::Group k : known) {
      if (type == GroupName(k)) g.group = k;
    }
    if (type.empty()) {
      r.Problem("type", "required");
    } else if (type == "inference_stats") {
      r.Problem("type", "\"inference_stats\" was renamed \"execution_stats\"");
    } else if (type == "hw_counters") {
      r.Problem("type", "\"hw_counters\" is now the system metric \"neuron_hw_counters\"");
    } else if (g.group == v1::GROUP_UNSPECIFIED) {
      r.Problem("type", "unknown metric group \"" + type + "\" (use " + Names(known) + ")");
    }
    r.Finish();
    if (g.group != v1::GROUP_UNSPECIFIED) out.push_back(g);
  }
  return out;
}

}  // namespace

MonitorConfig DefaultMonitorConfig() {
  MonitorConfig c;
  RuntimeSelector all;
  for (v1::Group g : Groups(/*runtime=*/true)) all.metrics.push_back({g, kDefaultMonitorPeriod});
  c.runtimes.push_back(all);
  for (v1::Group g : Groups(/*runtime=*/false)) c.system.push_back({g, kDefaultMonitorPeriod});
  return c;
}

Result<MonitorConfig> ParseMonitorConfig(std::string_view text, const std::string& source) {
  Result<json> doc = ParseJsonWithComments(text, source);
  if (!doc.ok()) return doc.status();
  std::vector<std::string> problems;
  MonitorConfig config;
  JsonReader root(*doc, "", &problems);
  const Nanos root_period = Period(root, kDefaultMonitorPeriod);
  if (const json* list = root.Array("neuron_runtimes")) {
    // Each selector is a connection to the daemon and a source in the documents' merge.
    if (list->size() > kMaxSelectors) {
      return Status::InvalidArgument(source + ": neuron_runtimes: " + std::to_string(list->size()) +
                                     " selectors; at most " + std::to_string(kMaxSelectors) +
                                     " are supported");
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      JsonReader r((*list)[i], root.PathOf("neuron_runtimes", i), &problems);
      RuntimeSelector sel;
      sel.tag_filter = r.String("tag_filter");
      if (!sel.tag_filter.empty()) {
        // The daemon compiles it the same way; checking here names the file and field.
        auto filter = TagFilter::Compile(sel.tag_filter, kDefaultMaxTagFilterBytes);
        if (!filter.ok()) r.Problem("tag_filter", filter.status().message());
      }
      (void)r.String("address");  // Runtime 1.x selected runtimes by address; accepted and unused
      const Nanos period = Period(r, root_period);
      sel.metrics = ParseGroups(r, "metrics", Groups(/*runtime=*/true), period, &problems);
      r.Finish();
      config.runtimes.push_back(std::move(sel));
    }
  }
  config.system =
      ParseGroups(root, "system_metrics", Groups(/*runtime=*/false), root_period, &problems);
  root.Finish();
  if (!problems.empty()) return Status::InvalidArgument(source + ": " + problems.front());
  return config;
}

Result<MonitorConfig> LoadMonitorConfig(const std::string& path) {
  Result<std::string> text = ReadRegularFile(path, kMaxMonitorConfigBytes);
  if (!text.ok()) return text.status();
  return ParseMonitorConfig(*text, path);
}

std::vector<v1::Subscribe> MonitorSubscriptions(const MonitorConfig& config) {
  std::vector<v1::Subscribe> out;
  auto add = [](v1::Subscribe& s, const MetricGroupConfig& g) {
    v1::GroupSubscription* gs = s.add_groups();
    gs->set_group(g.group);
    gs->set_period_ns(static_cast<std::uint64_t>(g.period.count()));
  };
  for (const RuntimeSelector& sel : config.runtimes) {
    v1::Subscribe s;
    s.set_tag_filter(sel.tag_filter);
    for (const MetricGroupConfig& g : sel.metrics) add(s, g);
    out.push_back(std::move(s));
  }
  if (out.empty()) out.emplace_back();
  for (const MetricGroupConfig& g : config.system) add(out.front(), g);
  // A subscription with no group would mean "everything" to the daemon: ask for nothing due.
  for (v1::Subscribe& s : out) {
    if (s.groups().empty()) add(s, {v1::GROUP_MEMORY_INFO, std::chrono::hours(24)});
  }
  return out;
}

}  // namespace neuronmon::exporter
