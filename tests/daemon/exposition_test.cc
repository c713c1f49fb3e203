// Exposition::Add: the promlint rules it enforces, each refusal with a clear message and nothing
// added.
#include "daemon/core/metrics/exposition.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tests/daemon/exposition_fixture.h"

namespace neuronmon::daemon {
namespace {

using testing::Family;
using testing::HistogramSample;
using testing::kInf;
using testing::kNaN;
using testing::Sample;

// The message Add gives for `family`, or "" when it accepts it.
std::string AddError(MetricFamily family) {
  Exposition e;
  Status s = e.Add(std::move(family));
  EXPECT_EQ(e.families().size(), s.ok() ? 1u : 0u);
  return s.ok() ? "" : s.message();
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

}  // namespace
}  // namespace neuronmon::daemon
