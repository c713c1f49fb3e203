#include "daemon/core/metrics_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>

#include "tests/daemon/prometheus_fixture.h"

namespace neuronmon::daemon {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MetricFamily Family(std::string name, MetricType type, std::vector<MetricSample> samples,
                    std::string help = "Some help.") {
  return MetricFamily{std::move(name), std::move(help), type, std::nullopt, std::move(samples)};
}

MetricSample Sample(std::vector<Label> labels, double value) {
  MetricSample s;
  s.labels = std::move(labels);
  s.value = value;
  return s;
}

MetricSample HistogramSample(std::vector<Label> labels, std::vector<HistogramBucket> buckets,
                             double sum, std::uint64_t count) {
  MetricSample s;
  s.labels = std::move(labels);
  s.histogram = HistogramValue{std::move(buckets), sum, count};
  return s;
}

Exposition Build(std::vector<MetricFamily> families) {
  Exposition e;
  for (MetricFamily& f : families) {
    const std::string name = f.name;
    EXPECT_TRUE(e.Add(std::move(f)).ok()) << name;
  }
  return e;
}

// The message Add gives for `family`, or "" when it accepts it.
std::string AddError(MetricFamily family) {
  Exposition e;
  Status s = e.Add(std::move(family));
  EXPECT_EQ(e.families().size(), s.ok() ? 1u : 0u);
  return s.ok() ? "" : s.message();
}

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

MetricFamily LatencyHistogram() {
  return Family(
      "trainium_collective_latency_seconds", MetricType::kHistogram,
      {HistogramSample({{"op", "all_reduce"}}, {{0.005, 1}, {0.1, 4}, {1, 9}}, 2.5, 10),
       HistogramSample({{"op", "all_gather"}}, {{0.005, 0}, {kInf, 1234567}}, 1e3, 1234567)});
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

TEST(ExpositionAdd, RefusesBadNamesWithAClearMessage) {
  EXPECT_EQ(AddError(Family("neuron-monitord_clients", MetricType::kGauge, {})),
            "metric family \"neuron-monitord_clients\": not a valid metric name "
            "(want [a-zA-Z_][a-zA-Z0-9_]*)");
  const std::vector<std::pair<MetricFamily, std::string>> cases = {
      {Family("", MetricType::kGauge, {}), "not a valid metric name"},
      {Family("2xx_requests", MetricType::kGauge, {}), "not a valid metric name"},
      {Family("trainium:hbm_bytes", MetricType::kGauge, {}), "not a valid metric name"},
      {Family("trainium hbm", MetricType::kGauge, {}), "not a valid metric name"},
      {Family("coreUtilization_ratio", MetricType::kGauge, {}), "camelCase"},
      {Family("trainium_ecc_errors", MetricType::kCounter, {}), "must end in \"_total\""},
      {Family("_total", MetricType::kCounter, {}), "nothing is left"},
      {Family("trainium_things_total", MetricType::kGauge, {}), "only counter names"},
      {Family("trainium_exec_error_count", MetricType::kGauge, {}), "\"_count\""},
      {Family("trainium_latency_sum", MetricType::kGauge, {}), "\"_sum\""},
      {Family("trainium_bucket", MetricType::kGauge, {}), "\"_bucket\""},
      {Family("neuron_monitord_build", MetricType::kInfo, {}), "must end in \"_info\""},
      {Family("trainium_latency_histogram", MetricType::kGauge, {}), "type \"histogram\""},
      {Family("trainium_collective_latency_ms", MetricType::kGauge, {}), "abbreviated unit"},
      {Family("trainium_hbm_gb", MetricType::kGauge, {}), "abbreviated unit \"gb\""},
      {Family("trainium_latency_milliseconds", MetricType::kGauge, {}),
       "use base unit \"seconds\" instead of \"milliseconds\""},
      {Family("trainium_link_bits_total", MetricType::kCounter, {}), "base unit \"bytes\""},
      {Family("trainium_up", MetricType::kGauge, {}, ""), "help text is empty"},
      {Family("trainium_up", MetricType::kGauge, {}, " \t "), "help text is empty"},
  };
  for (const auto& [family, want] : cases) {
    EXPECT_NE(AddError(family).find(want), std::string::npos) << family.name << " → " << want;
  }
}

TEST(ExpositionAdd, RefusesBadLabelsUnitsAndValues) {
  const auto gauge = [](std::vector<Label> labels) {
    return Family("trainium_up", MetricType::kGauge, {Sample(std::move(labels), 1)});
  };
  EXPECT_EQ(AddError(gauge({{"coreId", "1"}})),
            "metric family \"trainium_up\": samples[0]: label name \"coreId\" must be snake_case");
  EXPECT_NE(AddError(gauge({{"__name__", "x"}})).find("reserved"), std::string::npos);
  EXPECT_NE(AddError(gauge({{"le", "1"}})).find("reserved"), std::string::npos);
  EXPECT_NE(AddError(gauge({{"quantile", "1"}})).find("reserved"), std::string::npos);
  EXPECT_NE(AddError(gauge({{"a-b", "1"}})).find("not valid"), std::string::npos);
  EXPECT_NE(AddError(gauge({{"", "1"}})).find("not valid"), std::string::npos);
  EXPECT_NE(AddError(gauge({{"a", "1"}, {"a", "2"}})).find("duplicate label name"),
            std::string::npos);

  MetricFamily twins =
      Family("trainium_up", MetricType::kGauge,
             {Sample({{"a", "1"}, {"b", "2"}}, 1), Sample({{"b", "2"}, {"a", "1"}}, 2)});
  EXPECT_EQ(AddError(twins), "metric family \"trainium_up\": samples[1]: duplicate label set");
  // Prometheus reads an empty label value as no label.
  EXPECT_NE(
      AddError(Family("trainium_up", MetricType::kGauge, {Sample({}, 1), Sample({{"a", ""}}, 2)})),
      "");
  // The first problem in sample order is the one reported, duplicate or not.
  EXPECT_EQ(AddError(Family(
                "trainium_up", MetricType::kGauge,
                {Sample({{"a", "1"}}, 1), Sample({{"a", "1"}}, 2), Sample({{"coreId", "1"}}, 3)})),
            "metric family \"trainium_up\": samples[1]: duplicate label set");
  EXPECT_EQ(AddError(Family(
                "trainium_up", MetricType::kGauge,
                {Sample({{"a", "1"}}, 1), Sample({{"coreId", "1"}}, 2), Sample({{"a", "1"}}, 3)})),
            "metric family \"trainium_up\": samples[1]: label name \"coreId\" must be snake_case");
  // A sample repeating the label names before it still has its value checked.
  EXPECT_EQ(
      AddError(Family("trainium_errors_total", MetricType::kCounter,
                      {Sample({{"a", "1"}}, 1), Sample({{"a", "2"}}, -2)})),
      "metric family \"trainium_errors_total\": samples[1]: counter value is negative or NaN");
  // promlint leaves untyped families alone, so AWS's system_vcpu_count can keep its name.
  EXPECT_EQ(AddError(Family("system_vcpu_count", MetricType::kUnknown, {Sample({}, 4)})), "");

  MetricFamily wrong_unit = gauge({});
  wrong_unit.unit = "seconds";
  EXPECT_NE(AddError(wrong_unit).find("must be the name's suffix"), std::string::npos);
  MetricFamily info_unit = Family("trainium_device_info", MetricType::kInfo, {});
  info_unit.unit = "info";
  EXPECT_NE(AddError(info_unit).find("no unit"), std::string::npos);

  EXPECT_NE(AddError(Family("trainium_errors_total", MetricType::kCounter, {Sample({}, -1)})), "");
  EXPECT_NE(AddError(Family("trainium_errors_total", MetricType::kCounter, {Sample({}, kNaN)})),
            "");
  MetricSample created = Sample({}, 1);
  created.created_seconds = 1.7e9;
  EXPECT_NE(AddError(Family("trainium_up", MetricType::kGauge, {created})).find("created"),
            std::string::npos);
}

TEST(ExpositionAdd, RefusesHistogramsThatAreNotCumulative) {
  const auto histogram = [](std::vector<HistogramBucket> buckets, std::uint64_t count) {
    return Family("trainium_latency_seconds", MetricType::kHistogram,
                  {HistogramSample({}, std::move(buckets), 1, count)});
  };
  EXPECT_EQ(AddError(histogram({{0.1, 1}, {0.01, 2}}, 2)),
            "metric family \"trainium_latency_seconds\": samples[0]: bucket bounds must ascend");
  EXPECT_NE(AddError(histogram({{0.1, 1}, {0.1, 2}}, 2)).find("ascend"), std::string::npos);
  EXPECT_NE(AddError(histogram({{0.1, 3}, {1, 2}}, 3)).find("cumulative"), std::string::npos);
  EXPECT_NE(AddError(histogram({{0.1, 3}}, 2)).find("below"), std::string::npos);
  EXPECT_NE(AddError(histogram({{0.1, 1}, {kInf, 2}}, 3)).find("+Inf"), std::string::npos);
  EXPECT_NE(AddError(histogram({{kNaN, 1}}, 1)).find("NaN"), std::string::npos);
  EXPECT_EQ(AddError(histogram({}, 0)), "");
  EXPECT_EQ(AddError(histogram({{-kInf, 0}, {0, 1}, {kInf, 5}}, 5)), "");
}

TEST(ExpositionAdd, RefusesAFamilyWhoseNamesAnotherRenders) {
  Exposition e;
  ASSERT_TRUE(e.Add(Family("trainium_ops_total", MetricType::kCounter, {})).ok());
  ASSERT_TRUE(e.Add(Family("trainium_latency_seconds", MetricType::kHistogram, {})).ok());
  // OpenMetrics would show two families named trainium_ops.
  Status s = e.Add(Family("trainium_ops", MetricType::kGauge, {}));
  EXPECT_EQ(s.message(),
            "metric family \"trainium_ops\": \"trainium_ops\" is already used by another family");
  EXPECT_FALSE(e.Add(Family("trainium_ops_created", MetricType::kGauge, {})).ok());
  EXPECT_FALSE(e.Add(Family("trainium_latency_seconds", MetricType::kGauge, {})).ok());
  EXPECT_FALSE(e.Add(Family("trainium_ops_total", MetricType::kCounter, {})).ok());
  EXPECT_EQ(e.families().size(), 2u);
}

TEST(ContentType, NamesBothFormats) {
  EXPECT_EQ(ContentType(ExpositionFormat::kText), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(ContentType(ExpositionFormat::kOpenMetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(ChooseFormat, PicksOpenMetricsOnlyWhenAskedFor) {
  using enum ExpositionFormat;
  // What Prometheus 2.42 sends.
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;version=1.0.0,application/"
                         "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
                         "*/*;q=0.1"),
            kOpenMetrics);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text"), kOpenMetrics);
  EXPECT_EQ(ChooseFormat("APPLICATION/OpenMetrics-Text ; Version=\"1.0.0\""), kOpenMetrics);
  EXPECT_EQ(ChooseFormat("text/plain;q=0.9, application/openmetrics-text"), kOpenMetrics);
  EXPECT_EQ(ChooseFormat(""), kText);
  EXPECT_EQ(ChooseFormat("*/*"), kText);
  EXPECT_EQ(ChooseFormat("text/plain"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text; version=0.0.1"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;version=2.0.0"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=0"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=abc"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=0.2, text/plain"), kText);
  EXPECT_EQ(ChooseFormat("text/plain, application/openmetrics-text"), kText);
  EXPECT_EQ(ChooseFormat(";;,,=;q=,\"\",application/openmetrics-text;;"), kOpenMetrics);
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
