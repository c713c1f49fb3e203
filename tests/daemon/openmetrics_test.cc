// OpenMetrics 1.0 with literal inputs: number spelling, family names without their type suffix,
// UNIT lines, `_created` samples, integer histogram counts and the closing EOF.
#include "daemon/core/metrics/openmetrics.h"

#include <gtest/gtest.h>

#include <utility>

#include "daemon/core/metrics/exposition_format.h"
#include "daemon/core/metrics/exposition_text.h"
#include "tests/daemon/exposition_fixture.h"

namespace neuronmon::daemon {
namespace {

using testing::Build;
using testing::Family;
using testing::kInf;
using testing::kNaN;
using testing::LatencyHistogram;
using testing::Sample;

TEST(FormatOpenMetricsFloat, AddsPointZeroToWholeNumbers) {
  EXPECT_EQ(FormatOpenMetricsFloat(0), "0.0");
  EXPECT_EQ(FormatOpenMetricsFloat(1), "1.0");
  EXPECT_EQ(FormatOpenMetricsFloat(-1), "-1.0");
  EXPECT_EQ(FormatOpenMetricsFloat(123456), "123456.0");
  EXPECT_EQ(FormatOpenMetricsFloat(0.25), "0.25");
  EXPECT_EQ(FormatOpenMetricsFloat(1e6), "1e+06");
  EXPECT_EQ(FormatOpenMetricsFloat(kNaN), "NaN");
  EXPECT_EQ(FormatOpenMetricsFloat(kInf), "+Inf");
}

TEST(RenderOpenMetrics, HistogramUsesIntegerCountsAndOpenMetricsBounds) {
  MetricFamily f = LatencyHistogram();
  f.unit = "seconds";
  f.samples.resize(1);
  f.samples[0].created_seconds = 1700000000.5;
  EXPECT_EQ(RenderOpenMetrics(Build({std::move(f)})),
            "# HELP trainium_collective_latency_seconds Some help.\n"
            "# TYPE trainium_collective_latency_seconds histogram\n"
            "# UNIT trainium_collective_latency_seconds seconds\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"0.005\"} 1\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"0.1\"} 4\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"1.0\"} 9\n"
            "trainium_collective_latency_seconds_bucket{op=\"all_reduce\",le=\"+Inf\"} 10\n"
            "trainium_collective_latency_seconds_sum{op=\"all_reduce\"} 2.5\n"
            "trainium_collective_latency_seconds_count{op=\"all_reduce\"} 10\n"
            "trainium_collective_latency_seconds_created{op=\"all_reduce\"} 1.7000000005e+09\n"
            "# EOF\n");
}

TEST(RenderOpenMetrics, CounterInfoUnitAndHelpQuotes) {
  MetricSample disconnects = Sample({{"reason", "slow_client"}}, 3);
  disconnects.created_seconds = 1.7e9;
  MetricFamily bytes = Family("trainium_hbm_read_bytes_total", MetricType::kCounter,
                              {Sample({}, 123456789)}, "Bytes \"read\"\\written.");
  bytes.unit = "bytes";
  const Exposition e = Build(
      {Family("neuron_monitord_client_disconnects_total", MetricType::kCounter, {disconnects}),
       std::move(bytes),
       Family("neuron_monitord_build_info", MetricType::kInfo, {Sample({{"version", "0.1"}}, 0)}),
       Family("neuron_monitord_clients", MetricType::kGauge, {Sample({}, 2)}),
       Family("legacy_thing", MetricType::kUnknown, {Sample({}, 7)})});
  EXPECT_EQ(RenderOpenMetrics(e),
            "# HELP neuron_monitord_client_disconnects Some help.\n"
            "# TYPE neuron_monitord_client_disconnects counter\n"
            "neuron_monitord_client_disconnects_total{reason=\"slow_client\"} 3.0\n"
            "neuron_monitord_client_disconnects_created{reason=\"slow_client\"} 1.7e+09\n"
            "# HELP trainium_hbm_read_bytes Bytes \\\"read\\\"\\\\written.\n"
            "# TYPE trainium_hbm_read_bytes counter\n"
            "# UNIT trainium_hbm_read_bytes bytes\n"
            "trainium_hbm_read_bytes_total 1.23456789e+08\n"
            "# HELP neuron_monitord_build Some help.\n"
            "# TYPE neuron_monitord_build info\n"
            "neuron_monitord_build_info{version=\"0.1\"} 1\n"
            "# HELP neuron_monitord_clients Some help.\n"
            "# TYPE neuron_monitord_clients gauge\n"
            "neuron_monitord_clients 2.0\n"
            "# HELP legacy_thing Some help.\n"
            "# TYPE legacy_thing unknown\n"
            "legacy_thing 7.0\n"
            "# EOF\n");
}

TEST(RenderOpenMetrics, EmptyExpositionIsJustEof) {
  EXPECT_EQ(RenderOpenMetrics(Exposition()), "# EOF\n");
  EXPECT_EQ(RenderText(Exposition()), "");
  EXPECT_EQ(Render(Exposition(), ExpositionFormat::kOpenMetrics), "# EOF\n");
}

}  // namespace
}  // namespace neuronmon::daemon
