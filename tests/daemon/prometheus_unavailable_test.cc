// "Unavailable is not zero" in /metrics: a signal the backend cannot measure has no series — not
// a 0 — its group still counts as read, neuron_unavailable_signal_info says why, and promtool
// accepts the result. The newest snapshot of a simulated instance stands in for a real host's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>

#include "daemon/core/metrics/exposition_text.h"
#include "daemon/core/metrics/prometheus.h"
#include "proto/names/names.h"
#include "tests/daemon/prometheus_fixture.h"
#include "tests/daemon/unmeasured_backend.h"

namespace neuronmon::daemon {
namespace {

using testing::Family;
using testing::LabelOf;
using testing::SimCore;
using testing::Value;

// BuildMetrics over the window ending in `sim`'s newest snapshot, as a backend that does not
// measure `unmeasured` would have read it.
Exposition WithUnmeasured(SimCore& sim, const Unmeasured& unmeasured) {
  Snapshot end = *sim.core().history().newest();
  testing::MarkUnmeasured(end, std::make_shared<Unmeasured>(unmeasured));
  return sim.Build(&end);
}

TEST(PrometheusUnavailable, NoSeriesForWhatIsNotMeasured) {
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  const Exposition measured = sim.Build();
  // Every family below exists when the backend measures everything.
  for (const char* name :
       {"neuroncore_utilization_ratio", "neuron_runtime_vcpu_usage_ratio", "execution_errors_total",
        "execution_status_total", "execution_latency_seconds", "neuron_collective_operations_total",
        "neuron_collective_latency_seconds", "neuron_hbm_read_bytes_total",
        "neuron_hbm_write_bytes_total", "neuron_hbm_bandwidth_utilization_ratio"}) {
    EXPECT_NE(Family(measured, name), nullptr) << name;
  }
  EXPECT_EQ(Family(measured, "neuron_unavailable_signal_info"), nullptr);

  const Exposition e = WithUnmeasured(sim, testing::NothingButMemory());
  for (const char* name :
       {"neuroncore_utilization_ratio", "neuron_runtime_vcpu_usage_ratio", "execution_errors_total",
        "execution_status_total", "execution_latency_seconds", "neuron_collective_operations_total",
        "neuron_collective_bytes_total", "neuron_collective_busy_seconds_total",
        "neuron_collective_latency_seconds", "neuron_hbm_read_bytes_total",
        "neuron_hbm_write_bytes_total", "neuron_hbm_bandwidth_utilization_ratio"}) {
    EXPECT_EQ(Family(e, name), nullptr) << name << " is not measured";
  }
  // What is measured stays: HBM in use and capacity, memory, uncorrected ECC.
  for (const char* name : {"neuron_hbm_used_bytes", "neuron_hbm_total_bytes",
                           "neuron_runtime_memory_used_bytes", "neuroncore_memory_usage_tensors"}) {
    EXPECT_NE(Family(e, name), nullptr) << name;
  }
  const MetricFamily* ecc = Family(e, "hardware_ecc_events_total");
  ASSERT_NE(ecc, nullptr);
  EXPECT_EQ(ecc->samples.size(), 2u * 16);  // mem and sram uncorrected per device
  for (const MetricSample& s : ecc->samples) {
    EXPECT_NE(LabelOf(s, "event_type").find("_uncorrected"), std::string::npos)
        << LabelOf(s, "event_type");
  }
}

TEST(PrometheusUnavailable, UnmeasuredGroupsStillCountAsReadAndSayWhy) {
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  const Exposition e = WithUnmeasured(sim, testing::NothingButMemory());
  for (const char* group : {"neuroncore_counters", "neuron_runtime_vcpu_usage", "execution_stats",
                            "collectives_stats", "neuron_hw_counters", "hbm_stats"}) {
    EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", group}}), 1) << group;
  }
  const MetricFamily* info = Family(e, "neuron_unavailable_signal_info");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->samples.size(), static_cast<std::size_t>(kSignals));
  EXPECT_EQ(Value(e, "neuron_unavailable_signal_info",
                  {{"signal", "hbm_traffic"},
                   {"reason", testing::RealHostReason(Signal::kHbmTraffic)},
                   {"instance_type", "trn2.48xlarge"}}),
            1);
}

TEST(PrometheusUnavailable, OnlyLatencyUnmeasuredKeepsTheExecutionCounters) {
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  const Exposition e = WithUnmeasured(sim, testing::RealHost({Signal::kLatency}));
  EXPECT_EQ(Family(e, "execution_latency_seconds"), nullptr);
  EXPECT_NE(Family(e, "execution_status_total"), nullptr);
  EXPECT_NE(Family(e, "neuron_hbm_read_bytes_total"), nullptr);
  ASSERT_NE(Family(e, "neuron_unavailable_signal_info"), nullptr);
  EXPECT_EQ(Family(e, "neuron_unavailable_signal_info")->samples.size(), 1u);
}

// FLOPs unmeasured while busy time is (a driver before 2.30.2): utilization keeps its series,
// no FLOPs series is made up, and the info series names the signal.
TEST(PrometheusUnavailable, OnlyFlopsUnmeasuredKeepsUtilizationAndSaysWhy) {
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  const Exposition e = WithUnmeasured(sim, testing::RealHost({Signal::kFlops}));
  EXPECT_NE(Family(e, "neuroncore_utilization_ratio"), nullptr);
  for (const MetricFamily& f : e.families()) {
    EXPECT_EQ(f.name.find("flop"), std::string::npos) << f.name;
  }
  ASSERT_NE(Family(e, "neuron_unavailable_signal_info"), nullptr);
  EXPECT_EQ(Family(e, "neuron_unavailable_signal_info")->samples.size(), 1u);
  EXPECT_EQ(Value(e, "neuron_unavailable_signal_info",
                  {{"signal", "flops"}, {"reason", testing::RealHostReason(Signal::kFlops)}}),
            1);
}

// A runtime whose device memory is known only in part has no neuron_device total (a part would
// read as the whole); its host figure and per-core series stay.
TEST(PrometheusUnavailable, APartialDeviceMemoryHasNoTotal) {
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  Snapshot end = *sim.core().history().newest();
  ASSERT_FALSE(end.runtimes.empty());
  const std::size_t before =
      Family(sim.Build(&end), "neuron_runtime_memory_used_bytes")->samples.size();
  auto partial = std::make_shared<RuntimeMemory>(*end.runtimes[0].memory);
  partial->device_unavailable = "ND2 is shared";
  end.runtimes[0].memory = partial;
  const Exposition e = sim.Build(&end);
  const MetricFamily* used = Family(e, "neuron_runtime_memory_used_bytes");
  ASSERT_NE(used, nullptr);
  EXPECT_EQ(used->samples.size(), before - 1);
  EXPECT_NE(Family(e, "neuroncore_memory_usage_tensors"), nullptr);
}

TEST(PrometheusUnavailable, PromtoolAcceptsARealHostExposition) {
  if (access(testing::kPromtool, X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  Unmeasured unmeasured = testing::NothingButMemory();
  unmeasured.Set(Signal::kLatency, "a \"quoted\" reason\\ with\na newline");  // escaped in labels
  const std::string text = RenderText(WithUnmeasured(sim, unmeasured));
  std::string output;
  EXPECT_EQ(testing::RunPromtool(text, &output), 0) << output;
  EXPECT_EQ(output, "");
  EXPECT_EQ(text.find("neuron_hbm_read_bytes_total"), std::string::npos);
}

}  // namespace
}  // namespace neuronmon::daemon
