// Prometheus text format 0.0.4 with literal inputs: numbers as client_golang spells them, escaping,
// every family type, histograms, and `promtool check metrics` over what the writer renders.
#include "daemon/core/metrics/exposition_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <limits>
#include <string>
#include <utility>

#include "tests/daemon/exposition_fixture.h"
#include "tests/daemon/prometheus_fixture.h"

namespace neuronmon::daemon {
namespace {

using testing::Build;
using testing::Family;
using testing::kInf;
using testing::kNaN;
using testing::LatencyHistogram;
using testing::Sample;

TEST(FormatTextFloat, SpellsNumbersAsClientGolang) {
  EXPECT_EQ(FormatTextFloat(0), "0");
  EXPECT_EQ(FormatTextFloat(-0.0), "0");
  EXPECT_EQ(FormatTextFloat(1), "1");
  EXPECT_EQ(FormatTextFloat(-1), "-1");
  EXPECT_EQ(FormatTextFloat(0.5), "0.5");
  EXPECT_EQ(FormatTextFloat(-3.25), "-3.25");
  EXPECT_EQ(FormatTextFloat(42), "42");
  EXPECT_EQ(FormatTextFloat(123456), "123456");
  EXPECT_EQ(FormatTextFloat(123456.789), "123456.789");
  EXPECT_EQ(FormatTextFloat(1e6), "1e+06");
  EXPECT_EQ(FormatTextFloat(1234567), "1.234567e+06");
  EXPECT_EQ(FormatTextFloat(8.253997056e9), "8.253997056e+09");
  EXPECT_EQ(FormatTextFloat(1e21), "1e+21");
  EXPECT_EQ(FormatTextFloat(0.0001), "0.0001");
  EXPECT_EQ(FormatTextFloat(0.000123), "0.000123");
  EXPECT_EQ(FormatTextFloat(0.00001), "1e-05");
  EXPECT_EQ(FormatTextFloat(1.5e-7), "1.5e-07");
  EXPECT_EQ(FormatTextFloat(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatTextFloat(4.9997283150000005), "4.9997283150000005");
  EXPECT_EQ(FormatTextFloat(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(FormatTextFloat(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(FormatTextFloat(kNaN), "NaN");
  EXPECT_EQ(FormatTextFloat(kInf), "+Inf");
  EXPECT_EQ(FormatTextFloat(-kInf), "-Inf");
}

TEST(RenderText, GaugeWithEscapedHelpAndLabels) {
  const Exposition e = Build({Family("trainium_neuroncore_utilization_ratio", MetricType::kGauge,
                                     {Sample({{"device", "0"}, {"core", "1"}}, 0.75),
                                      Sample({{"device", "0"}, {"core", "2"}}, kNaN)},
                                     "Busy share.\nA \\ is \"kept\".")});
  EXPECT_EQ(RenderText(e),
            "# HELP trainium_neuroncore_utilization_ratio Busy share.\\nA \\\\ is \"kept\".\n"
            "# TYPE trainium_neuroncore_utilization_ratio gauge\n"
            "trainium_neuroncore_utilization_ratio{device=\"0\",core=\"1\"} 0.75\n"
            "trainium_neuroncore_utilization_ratio{device=\"0\",core=\"2\"} NaN\n");
}

TEST(RenderText, HostileLabelValuesAreEscaped) {
  const Exposition e = Build({Family(
      "neuron_runtime_up", MetricType::kGauge,
      {Sample({{"tag", "a\"b\\c\nd"}}, 1), Sample({{"tag", "ñ 日本 🚀"}}, 1),
       Sample({{"tag", "bad\xff\xfe|\xe6\x97|\xed\xa0\x80"}}, -kInf), Sample({{"tag", ""}}, 2)})});
  EXPECT_EQ(RenderText(e),
            "# HELP neuron_runtime_up Some help.\n"
            "# TYPE neuron_runtime_up gauge\n"
            "neuron_runtime_up{tag=\"a\\\"b\\\\c\\nd\"} 1\n"
            "neuron_runtime_up{tag=\"ñ 日本 🚀\"} 1\n"
            "neuron_runtime_up{tag=\"bad\uFFFD\uFFFD|\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD\"} -Inf\n"
            "neuron_runtime_up{tag=\"\"} 2\n");
}

TEST(RenderText, CounterInfoAndUnknownFamiliesInAddOrder) {
  MetricSample disconnects = Sample({{"reason", "slow_client"}}, 3);
  disconnects.created_seconds = 1.7e9;
  MetricFamily bytes =
      Family("trainium_hbm_read_bytes_total", MetricType::kCounter, {Sample({}, 123456789)});
  bytes.unit = "bytes";
  const Exposition e = Build(
      {Family("neuron_monitord_client_disconnects_total", MetricType::kCounter, {disconnects}),
       std::move(bytes),
       Family("neuron_monitord_build_info", MetricType::kInfo,
              {Sample({{"version", "0.1.0"}, {"commit", "abc123"}}, 0)}),
       Family("legacy_thing", MetricType::kUnknown, {Sample({}, 7)})});
  EXPECT_EQ(RenderText(e),
            "# HELP neuron_monitord_client_disconnects_total Some help.\n"
            "# TYPE neuron_monitord_client_disconnects_total counter\n"
            "neuron_monitord_client_disconnects_total{reason=\"slow_client\"} 3\n"
            "# HELP trainium_hbm_read_bytes_total Some help.\n"
            "# TYPE trainium_hbm_read_bytes_total counter\n"
            "trainium_hbm_read_bytes_total 1.23456789e+08\n"
            "# HELP neuron_monitord_build_info Some help.\n"
            "# TYPE neuron_monitord_build_info gauge\n"
            "neuron_monitord_build_info{version=\"0.1.0\",commit=\"abc123\"} 1\n"
            "# HELP legacy_thing Some help.\n"
            "# TYPE legacy_thing untyped\n"
            "legacy_thing 7\n");
}

TEST(RenderText, HistogramIsCumulativeWithInfSumAndCount) {
  EXPECT_EQ(RenderText(Build({LatencyHistogram()})),
            "# HELP trainium_collective_latency_seconds Some help.\n"
            "# TYPE trainium_collective_latency_seconds histogram\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"0.005\"} 1\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"0.1\"} 4\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"1\"} 9\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"+Inf\"} 10\n"
            "trainium_collective_latency_seconds_sum{op=\"all_reduce\"} 2.5\n"
            "trainium_collective_latency_seconds_count{op=\"all_reduce\"} 10\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_gather\",le=\"0.005\"} 0\n"
            // client_golang's text writer passes counts through float64, hence the exponent.
            "trainium_collective_latency_seconds_bucket{op=\"all_gather\",le=\"+Inf\"} "
            "1.234567e+06\n"
            "trainium_collective_latency_seconds_sum{op=\"all_gather\"} 1000\n"
            "trainium_collective_latency_seconds_count{op=\"all_gather\"} 1.234567e+06\n");
}

using testing::kPromtool;
using testing::RunPromtool;

TEST(Promtool, AcceptsWhatTheWriterRenders) {
  if (access(kPromtool, X_OK) != 0) GTEST_SKIP() << kPromtool << " is not installed";
  MetricSample disconnects = Sample({{"reason", "slow \"client\"\\\n"}}, 3);
  disconnects.created_seconds = 1.7e9;
  const Exposition e = Build(
      {Family("trainium_neuroncore_utilization_ratio", MetricType::kGauge,
              {Sample({{"device", "0"}, {"core", "1"}}, 0.75), Sample({{"core", "ñ🚀\xff"}}, kNaN)},
              "Busy share.\nSecond \\ line \"quoted\"."),
       Family("neuron_monitord_client_disconnects_total", MetricType::kCounter, {disconnects}),
       LatencyHistogram(),
       Family("neuron_monitord_build_info", MetricType::kInfo,
              {Sample({{"version", "0.1.0"}, {"commit", "abc123"}}, 0)})});
  std::string output;
  EXPECT_EQ(RunPromtool(RenderText(e), &output), 0) << output << RenderText(e);
  EXPECT_EQ(output, "");
}

TEST(Promtool, WriterRefusesANameThatPromtoolRejects) {
  if (access(kPromtool, X_OK) != 0) GTEST_SKIP() << kPromtool << " is not installed";
  Exposition e;
  ASSERT_TRUE(e.Add(Family("neuron_monitord_clients", MetricType::kGauge, {Sample({}, 2)})).ok());
  Status refused = e.Add(Family("neuron-monitord_clients", MetricType::kGauge, {Sample({}, 2)}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  std::string output;
  EXPECT_EQ(RunPromtool(RenderText(e), &output), 0) << output;
  // The line a writer without the check would have appended makes promtool fail.
  output.clear();
  EXPECT_NE(RunPromtool(RenderText(e) + "neuron-monitord_clients 2\n", &output), 0);
  output.clear();
  EXPECT_NE(RunPromtool(RenderText(e) + "trainium_latency_ms 2\n", &output), 0);
  EXPECT_NE(output.find("abbreviated units"), std::string::npos) << output;
}

}  // namespace
}  // namespace neuronmon::daemon
