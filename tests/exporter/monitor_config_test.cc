#include "exporter/monitor_config.h"

#include <gtest/gtest.h>

namespace neuronmon::exporter {
namespace {

using std::chrono::seconds;

std::string ErrorOf(std::string_view text) {
  Result<MonitorConfig> r = ParseMonitorConfig(text, "monitor.conf");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(MonitorConfig, TheAwsExampleParses) {
  // The example from the neuron-monitor user guide.
  Result<MonitorConfig> c = ParseMonitorConfig(R"({
    "period": "1s",
    "neuron_runtimes": [
      {
        "tag_filter": ".*",
        "metrics": [
          { "type": "neuroncore_counters" },
          { "type": "memory_used" },
          { "type": "neuron_runtime_vcpu_usage" },
          { "type": "execution_stats" }
        ]
      }
    ],
    "system_metrics": [
      { "type": "vcpu_usage" },
      { "type": "memory_info" },
      { "period": "2s", "type": "neuron_hw_counters" }
    ]
  })",
                                               "monitor.conf");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->runtimes.size(), 1u);
  EXPECT_EQ(c->runtimes[0].tag_filter, ".*");
  ASSERT_EQ(c->runtimes[0].metrics.size(), 4u);
  EXPECT_EQ(c->runtimes[0].metrics[0].group, v1::GROUP_NEURONCORE_COUNTERS);
  EXPECT_EQ(c->runtimes[0].metrics[3].period, seconds(1));
  ASSERT_EQ(c->system.size(), 3u);
  EXPECT_EQ(c->system[2].group, v1::GROUP_NEURON_HW_COUNTERS);
  EXPECT_EQ(c->system[2].period, seconds(2));
}

TEST(MonitorConfig, InnermostPeriodWinsDefaultFiveSeconds) {
  Result<MonitorConfig> c = ParseMonitorConfig(R"({
    "neuron_runtimes": [{"period": "3s", "metrics": [{"type": "memory_used"},
                                                     {"type": "neuroncore_counters", "period": "500ms"}]}],
    "system_metrics": [{"type": "hbm_stats"}]
  })",
                                               "m.conf");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->runtimes[0].metrics[0].period, seconds(3));
  EXPECT_EQ(c->runtimes[0].metrics[1].period, std::chrono::milliseconds(500));
  EXPECT_EQ(c->system[0].period, seconds(5));
}

TEST(MonitorConfig, OurExtensionGroupsAreAccepted) {
  Result<MonitorConfig> c = ParseMonitorConfig(R"({"neuron_runtimes": [{"metrics": [
      {"type": "collectives_stats"}, {"type": "bottleneck_analysis"}]}],
      "system_metrics": [{"type": "hbm_stats"}]})",
                                               "m.conf");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->runtimes[0].metrics[1].group, v1::GROUP_BOTTLENECK_ANALYSIS);
}

TEST(MonitorConfig, EachErrorNamesTheField) {
  EXPECT_EQ(
      ErrorOf(R"({"neuron_runtimes": [{"metrics": [{"type": "memory_used"}, {"type": "gpu"}]}]})"),
      "monitor.conf: neuron_runtimes[0].metrics[1].type: unknown metric group \"gpu\" (use "
      "neuroncore_counters, memory_used, neuron_runtime_vcpu_usage, execution_stats, "
      "collectives_stats, bottleneck_analysis)");
  EXPECT_EQ(ErrorOf(R"({"system_metrics": [{"type": "memory_used"}]})"),
            "monitor.conf: system_metrics[0].type: unknown metric group \"memory_used\" (use "
            "vcpu_usage, memory_info, neuron_hw_counters, hbm_stats, device_health)");
  EXPECT_EQ(ErrorOf(R"({"period": "5"})"),
            "monitor.conf: period: \"5\": missing unit (use e.g. \"5s\")");
  EXPECT_EQ(ErrorOf(R"({"period": "1ms"})"),
            "monitor.conf: period: must be between 10ms and 24h (got \"1ms\")");
  EXPECT_EQ(ErrorOf(R"({"neuron_runtimes": [{"tag_filter": "rank[("}]})").substr(0, 77),
            "monitor.conf: neuron_runtimes[0].tag_filter: \"rank[(\" is not a valid regular ");
  EXPECT_EQ(ErrorOf(R"({"neuron_runtimes": [{"metrics": [{"type": "inference_stats"}]}]})"),
            "monitor.conf: neuron_runtimes[0].metrics[0].type: \"inference_stats\" was renamed "
            "\"execution_stats\"");
  EXPECT_EQ(ErrorOf(R"({"neuron_runtime": []})"), "monitor.conf: neuron_runtime: unknown field");
  EXPECT_EQ(ErrorOf(R"({"system_metrics": [{"period": "1s"}]})"),
            "monitor.conf: system_metrics[0].type: required");
  EXPECT_EQ(ErrorOf("{\"period\": \"1s\",}").substr(0, 40),
            "monitor.conf: parse error at line 1, col");
}

TEST(MonitorConfig, SubscriptionsOnePerSelectorSystemOnTheFirst) {
  Result<MonitorConfig> c = ParseMonitorConfig(R"({
    "neuron_runtimes": [{"tag_filter": "^train", "metrics": [{"type": "neuroncore_counters"}]},
                        {"tag_filter": "^serve", "metrics": [{"type": "execution_stats", "period": "1s"}]}],
    "system_metrics": [{"type": "memory_info", "period": "10s"}]})",
                                               "m.conf");
  ASSERT_TRUE(c.ok());
  const std::vector<v1::Subscribe> subs = MonitorSubscriptions(*c);
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].tag_filter(), "^train");
  ASSERT_EQ(subs[0].groups_size(), 2);
  EXPECT_EQ(subs[0].groups(1).group(), v1::GROUP_MEMORY_INFO);
  EXPECT_EQ(subs[0].groups(1).period_ns(), 10'000'000'000u);
  EXPECT_EQ(subs[1].groups(0).period_ns(), 1'000'000'000u);
  EXPECT_EQ(subs[1].groups_size(), 1);
}

TEST(MonitorConfig, DefaultIsEveryGroupEveryFiveSeconds) {
  const std::vector<v1::Subscribe> subs = MonitorSubscriptions(DefaultMonitorConfig());
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(subs[0].groups_size(), 11);
  for (const v1::GroupSubscription& g : subs[0].groups()) EXPECT_EQ(g.period_ns(), 5'000'000'000u);
  EXPECT_TRUE(subs[0].tag_filter().empty());
}

// Tag filters are RE2 (Go's syntax, linear time): a pattern std::regex would backtrack on for
// seconds is fine, one RE2 rejects (backreferences) is an error naming the field, and an
// over-long one is refused without being echoed back whole.
TEST(MonitorConfig, TagFiltersAreRe2AndBounded) {
  Result<MonitorConfig> ok = ParseMonitorConfig(
      R"({"neuron_runtimes": [{"tag_filter": "(.*)*(.*)*X"}, {"tag_filter": "(?i)^llama-\\d+$"}]})",
      "monitor.conf");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ErrorOf(R"({"neuron_runtimes": [{"tag_filter": "(a)\\1"}]})"),
            "monitor.conf: neuron_runtimes[0].tag_filter: \"(a)\\1\" is not a valid regular "
            "expression: invalid escape sequence: \\1");
  const std::string long_filter(300, 'a');
  const std::string error =
      ErrorOf(R"({"neuron_runtimes": [{"tag_filter": ")" + long_filter + R"("}]})");
  EXPECT_EQ(error,
            "monitor.conf: neuron_runtimes[0].tag_filter: is 300 bytes long; the limit is 256 "
            "bytes");
}

// Each selector becomes a connection of its own and a source of the merged documents: 64 at most.
TEST(MonitorConfig, AtMost64Selectors) {
  std::string selectors;
  for (int i = 0; i < 65; ++i) selectors += std::string(i ? "," : "") + "{}";
  EXPECT_EQ(ErrorOf(R"({"neuron_runtimes": [)" + selectors + "]}"),
            "monitor.conf: neuron_runtimes: 65 selectors; at most 64 are supported");
  selectors = selectors.substr(3);  // 64
  EXPECT_TRUE(ParseMonitorConfig(R"({"neuron_runtimes": [)" + selectors + "]}", "m").ok());
}

// The JSON parser's own failures, syntax or a number out of range, are one error, not a crash.
TEST(MonitorConfig, ANumberOutOfRangeIsAnError) {
  EXPECT_EQ(ErrorOf(R"({"period": 1e400})").substr(0, 30), "monitor.conf: number overflow ");
}

// -c names a file that must be a regular file of at most 1 MiB: /dev/zero would never end.
TEST(MonitorConfig, LoadRefusesWhatIsNotASmallRegularFile) {
  EXPECT_EQ(LoadMonitorConfig("/dev/zero").status().message(), "/dev/zero: not a regular file");
  EXPECT_EQ(LoadMonitorConfig("/nonexistent/mon.json").status().message(),
            "/nonexistent/mon.json: cannot open: No such file or directory");
}

}  // namespace
}  // namespace neuronmon::exporter
