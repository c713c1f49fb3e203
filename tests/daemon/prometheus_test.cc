// BuildMetrics over the deterministic simulator: promtool accepts the output for three presets,
// a golden file pins trn2.48xlarge, AWS's families keep their names, types, HELP and labels,
// counters are the cumulative counters, exited runtimes vanish, hostile tags are escaped, and a
// failing group loses only its own families. DaemonCores are sampled at fixed simulated times
// with fixed host data; nothing sleeps.
#include "daemon/core/metrics/prometheus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "daemon/core/daemon_core.h"
#include "daemon/core/metrics/exposition_text.h"
#include "tests/daemon/prometheus_fixture.h"

namespace neuronmon::daemon {
namespace {

using testing::Family;
using testing::LabelNames;
using testing::LabelOf;
using testing::RunPromtool;
using testing::SimCore;
using testing::Value;

constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;

class PromtoolPresets : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(PromtoolPresets, CheckMetricsPassesWithNoFindings) {
  if (access(testing::kPromtool, X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  const auto [preset, scenario] = GetParam();
  SimCore sim(preset, scenario, {40, 45});
  const std::string text = RenderText(sim.Build());
  std::string output;
  EXPECT_EQ(RunPromtool(text, &output), 0) << output;
  EXPECT_EQ(output, "");
  EXPECT_NE(text.find("neuroncore_utilization_ratio{"), std::string::npos);
  if (std::string(scenario) == "healthy-training") {
    EXPECT_NE(text.find("neuron_collective_latency_seconds_bucket{"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, PromtoolPresets,
                         ::testing::Values(std::pair{"trn1.2xlarge", "healthy-training"},
                                           std::pair{"trn2.48xlarge", "healthy-training"},
                                           std::pair{"inf2.48xlarge", "inference-serving"}));

TEST(PrometheusGolden, Trn2_48xlargeHealthyTraining) {
  SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  const std::string text = RenderText(sim.Build());
  const std::filesystem::path golden =
      std::filesystem::path(NEURONMON_TESTDATA_DIR) / "prometheus" / "trn2.48xlarge.golden";
  if (std::getenv("NEURONMON_UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(golden.parent_path());
    std::ofstream(golden) << text;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden << " is missing; regenerate with NEURONMON_UPDATE_GOLDEN=1";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_TRUE(want.str() == text) << "differs from " << golden
                                  << "; regenerate with NEURONMON_UPDATE_GOLDEN=1 if intended";
}

// AWS's neuron-monitor-prometheus.py: name, type, HELP and the labels besides the instance's.
struct AwsFamily {
  const char* name;
  MetricType type;
  const char* help;
  std::set<std::string> labels;
};

const AwsFamily kAwsFamilies[] = {
    {"neuroncore_utilization_ratio",
     kGauge,
     "NeuronCore utilization ratio",
     {"runtime_tag", "neuroncore"}},
    {"neuron_runtime_vcpu_usage_ratio",
     kGauge,
     "Runtime vCPU utilization ratio",
     {"runtime_tag", "usage_type"}},
    {"neuron_runtime_memory_used_bytes",
     kGauge,
     "Runtime memory used bytes",
     {"runtime_tag", "memory_location"}},
    {"neuroncore_memory_usage_constants",
     kGauge,
     "NeuronCore memory utilization for constants",
     {"runtime_tag", "memory_location", "neuroncore"}},
    {"neuroncore_memory_usage_model_code",
     kGauge,
     "NeuronCore memory utilization for model_code",
     {"runtime_tag", "memory_location", "neuroncore"}},
    {"neuroncore_memory_usage_model_shared_scratchpad",
     kGauge,
     "NeuronCore memory utilization for model_shared_scratchpad",
     {"runtime_tag", "memory_location", "neuroncore"}},
    {"neuroncore_memory_usage_runtime_memory",
     kGauge,
     "NeuronCore memory utilization for runtime_memory",
     {"runtime_tag", "memory_location", "neuroncore"}},
    {"neuroncore_memory_usage_tensors",
     kGauge,
     "NeuronCore memory utilization for tensors",
     {"runtime_tag", "memory_location", "neuroncore"}},
    {"execution_errors_total", kCounter, "Execution errors total", {"runtime_tag", "error_type"}},
    {"execution_status_total", kCounter, "Execution status total", {"runtime_tag", "status_type"}},
    {"execution_latency_seconds",
     kGauge,
     "Execution latency in seconds",
     {"runtime_tag", "percentile"}},
    {"hardware_ecc_events_total",
     kCounter,
     "Hardware ecc events total",
     {"event_type", "neuron_device_index"}},
    // A gauge in AWS's exporter; untyped here because promlint refuses "_count" on a gauge.
    {"system_vcpu_count", MetricType::kUnknown, "System vCPU count", {}},
    {"system_vcpu_usage_ratio", kGauge, "System CPU utilization ratio", {"usage_type"}},
    {"system_memory_total_bytes", kGauge, "System memory total_bytes bytes", {}},
    {"system_memory_used_bytes", kGauge, "System memory used_bytes bytes", {}},
    {"system_swap_total_bytes", kGauge, "System swap total_bytes bytes", {}},
    {"system_swap_used_bytes", kGauge, "System swap used_bytes bytes", {}},
    {"instance_info", MetricType::kInfo, "EC2 instance information", {}},
    {"neuron_hardware_info",
     MetricType::kInfo,
     "Neuron Hardware Information",
     {"neuron_device_count", "neuron_device_memory_size", "neuroncore_per_device_count"}},
};

TEST(AwsCompatibility, EveryFamilyKeepsItsNameTypeHelpAndLabels) {
  SimCore sim("trn1.32xlarge", "healthy-training", {40, 45});
  const Exposition e = sim.Build();
  const std::set<std::string> instance = {"availability_zone", "instance_id", "instance_name",
                                          "instance_type",     "region",      "subnet_id"};
  for (const AwsFamily& want : kAwsFamilies) {
    SCOPED_TRACE(want.name);
    const MetricFamily* f = Family(e, want.name);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->type, want.type);
    EXPECT_EQ(f->help, want.help);
    ASSERT_FALSE(f->samples.empty());
    std::set<std::string> labels = instance;
    labels.insert(want.labels.begin(), want.labels.end());
    for (const MetricSample& s : f->samples) EXPECT_EQ(LabelNames(s), labels);
  }
  const MetricFamily* util = Family(e, "neuroncore_utilization_ratio");
  EXPECT_EQ(util->samples.size(), 32u) << "16 workers x 2 cores";
  for (const MetricSample& s : util->samples) {
    EXPECT_GT(s.value, 0.5) << "healthy training keeps cores busy";
    EXPECT_LE(s.value, 1.0) << "a ratio, not percent";
  }
  EXPECT_EQ(LabelOf(Family(e, "neuroncore_memory_usage_tensors")->samples[0], "memory_location"),
            "None");
  EXPECT_EQ(Family(e, "execution_latency_seconds")->samples.size(), 16u * 7);
  EXPECT_EQ(Value(e, "system_vcpu_count", {}), 4) << "from the fixed /proc/stat";
}

TEST(AwsCompatibility, CountersAreTheCumulativeCounters) {
  SimCore sim("trn2.48xlarge", "ecc-degradation", {200, 205});
  const Exposition e = sim.Build();
  const Snapshot& end = *sim.core().history().newest();
  for (const RuntimeSample& r : end.runtimes) {
    EXPECT_EQ(
        Value(e, "execution_status_total", {{"runtime_tag", r.tag}, {"status_type", "completed"}}),
        static_cast<double>(r.executions.completed));
    EXPECT_EQ(
        Value(e, "execution_errors_total", {{"runtime_tag", r.tag}, {"error_type", "transient"}}),
        static_cast<double>(r.executions.transient));
    const CollectiveCounters& ar = r.collectives[0];
    EXPECT_EQ(Value(e, "neuron_collective_operations_total",
                    {{"runtime_tag", r.tag}, {"operation", "all_reduce"}}),
              static_cast<double>(ar.count));
  }
  const DeviceCounters& nd3 = end.devices[3];
  EXPECT_GT(nd3.ecc.mem_corrected, 0u);
  EXPECT_EQ(Value(e, "hardware_ecc_events_total",
                  {{"neuron_device_index", "3"}, {"event_type", "mem_ecc_corrected"}}),
            static_cast<double>(nd3.ecc.mem_corrected));
  EXPECT_EQ(Value(e, "neuron_hbm_read_bytes_total", {{"neuron_device_index", "3"}}),
            static_cast<double>(nd3.hbm_read_bytes));
}

TEST(AwsCompatibility, SeriesOfAnExitedRuntimeDisappear) {
  const std::string scenario = testing::ExitingScenario();
  SimCore sim("trn1.32xlarge", scenario, {10, 30});
  std::filesystem::remove(scenario);
  const Snapshot& start = *sim.core().history().Find(1);
  ASSERT_TRUE(std::any_of(start.runtimes.begin(), start.runtimes.end(),
                          [](const RuntimeSample& r) { return r.tag == "short-lived"; }));
  const std::string text = RenderText(sim.Build());
  EXPECT_EQ(text.find("short-lived"), std::string::npos) << "exited at 20 s";
  EXPECT_NE(text.find("runtime_tag=\"long-lived\""), std::string::npos);
}

TEST(Prometheus, HostileRuntimeTagsAreEscaped) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  Snapshot end = *sim.core().history().newest();
  ASSERT_FALSE(end.runtimes.empty());
  end.runtimes[0].tag = "a\"b\\c\nd}";
  const std::string text = RenderText(sim.Build(&end));
  EXPECT_NE(text.find("runtime_tag=\"a\\\"b\\\\c\\nd}\""), std::string::npos);
  if (access(testing::kPromtool, X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  std::string output;
  EXPECT_EQ(RunPromtool(text, &output), 0) << output;
}

// Runtime series carry who runs them (dcgm-exporter's label names), only where it is known: the
// mixed scenario's vLLM replicas run in a pod, its training job is Slurm job 4242.
TEST(Prometheus, RuntimeSeriesAreLabelledWithPodAndSlurmJob) {
  SimCore sim("trn2.48xlarge", "mixed", {100, 105});
  const std::string text = RenderText(sim.Build());
  // Labels are in name order.
  EXPECT_NE(text.find("container=\"vllm\",instance_id=\"i-sim"), std::string::npos);
  EXPECT_NE(text.find("namespace=\"inference\",pod=\"vllm-llama2-7b-0\",region=\"us-east-2\","
                      "runtime_tag=\"vllm-replica0\","),
            std::string::npos);
  EXPECT_NE(text.find("runtime_tag=\"llama3-8b-rank0\",slurm_job_id=\"4242\","), std::string::npos);
  SimCore plain("trn1.2xlarge", "healthy-training", {40, 45});
  const std::string none = RenderText(plain.Build());
  EXPECT_EQ(none.find("pod="), std::string::npos);
  EXPECT_EQ(none.find("slurm_job_id="), std::string::npos);
  if (access(testing::kPromtool, X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  std::string output;
  EXPECT_EQ(RunPromtool(text, &output), 0) << output;
}

// Each live job's counters, labelled neuron_job (never `job`, Prometheus' target label) and with
// the Slurm job label its runtimes carry: the figures the job accounting holds.
TEST(Prometheus, JobCountersAreLabelledNeuronJob) {
  std::vector<int> seconds;
  for (int t = 0; t <= 60; ++t) seconds.push_back(t);
  SimCore sim("trn2.48xlarge", "two-jobs", seconds);
  const Exposition e = sim.Build();
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  sim.core().jobs().Fill(jobs);
  ASSERT_EQ(jobs.size(), 2);
  for (const v1::JobReport& j : jobs) {
    const std::map<std::string, std::string> labels = {
        {"neuron_job", j.id()}, {"slurm_job_id", j.attribution().slurm_job_id()}};
    EXPECT_DOUBLE_EQ(Value(e, "neuron_job_held_core_seconds_total", labels), j.core_seconds_held());
    EXPECT_DOUBLE_EQ(Value(e, "neuron_job_busy_core_seconds_total", labels), j.core_seconds_busy());
    for (const v1::VerdictTime& v : j.verdicts()) {
      std::map<std::string, std::string> with = labels;
      with["verdict"] = FindingKindName(v.kind());
      EXPECT_DOUBLE_EQ(Value(e, "neuron_job_verdict_seconds_total", with), v.seconds());
    }
    std::map<std::string, std::string> info = labels;
    info["kind"] = "slurm";
    EXPECT_EQ(Value(e, "neuron_job_info", info), 1);
  }
  for (const char* name : {"neuron_job_info", "neuron_job_held_core_seconds_total",
                           "neuron_job_verdict_seconds_total"}) {
    const MetricFamily* f = Family(e, name);
    ASSERT_NE(f, nullptr) << name;
    for (const MetricSample& s : f->samples) EXPECT_EQ(LabelOf(s, "job"), "") << name;
  }
  if (access(testing::kPromtool, X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  std::string output;
  EXPECT_EQ(RunPromtool(RenderText(e), &output), 0) << output;
}

// Device health as a state set (one series per state, 1 for the current one), the reasons with
// their actions, power and the driver's error counters: ecc-degradation's device 3 has failed.
TEST(Prometheus, DeviceHealthIsAStateSetWithItsReasons) {
  SimCore sim("trn2.48xlarge", "ecc-degradation", {200, 205});
  const Exposition e = sim.Build();
  const auto health = [&](const char* device, const char* state) {
    return Value(e, "neuron_device_health", {{"neuron_device_index", device}, {"state", state}});
  };
  EXPECT_EQ(health("3", "failed"), 1);
  EXPECT_EQ(health("3", "degraded"), 0);
  EXPECT_EQ(health("3", "ok"), 0);
  EXPECT_EQ(health("2", "ok"), 1);
  EXPECT_EQ(health("2", "failed"), 0);
  EXPECT_EQ(Value(e, "neuron_device_health_reason",
                  {{"neuron_device_index", "3"}, {"code", "mem_ecc_uncorrected"}}),
            1);
  const MetricFamily* reasons = Family(e, "neuron_device_health_reason");
  ASSERT_NE(reasons, nullptr);
  for (const MetricSample& s : reasons->samples) {
    EXPECT_EQ(LabelOf(s, "neuron_device_index"), "3") << "only the unhealthy device has reasons";
    if (LabelOf(s, "code") == "mem_ecc_uncorrected") {
      EXPECT_EQ(LabelOf(s, "action"), "replace");
    }
  }
  const DeviceCounters& nd3 = sim.core().history().newest()->devices[3];
  EXPECT_EQ(Value(e, "neuron_device_hardware_errors_total",
                  {{"neuron_device_index", "3"}, {"type", "events"}}),
            static_cast<double>(nd3.errors.events));
  EXPECT_NEAR(Value(e, "neuron_device_power_utilization_ratio", {{"neuron_device_index", "3"}}),
              nd3.power.average_percent / 100, 1e-12);
  // The driver's NEURON_HW_ERR kernel log events, by type; unknown (not 0) when the log cannot
  // be read, while the driver's counters stay.
  ASSERT_GT(nd3.errors.kernel_hbm_uncorrectable, 0u);
  EXPECT_EQ(Value(e, "neuron_device_hardware_errors_total",
                  {{"neuron_device_index", "3"}, {"type", "kernel_hbm_uncorrectable"}}),
            static_cast<double>(nd3.errors.kernel_hbm_uncorrectable));
  Snapshot unread = *sim.core().history().newest();
  for (DeviceCounters& d : unread.devices) d.kernel_log_unavailable = "cannot read /dev/kmsg";
  const Exposition without = sim.Build(&unread);
  const MetricFamily* errors = Family(without, "neuron_device_hardware_errors_total");
  ASSERT_NE(errors, nullptr);
  for (const MetricSample& s : errors->samples) {
    EXPECT_EQ(LabelOf(s, "type").rfind("kernel_", 0), std::string::npos) << LabelOf(s, "type");
  }
  EXPECT_EQ(Value(without, "neuron_device_hardware_errors_total",
                  {{"neuron_device_index", "3"}, {"type", "events"}}),
            static_cast<double>(nd3.errors.events));
  // A driver without health_status/hw_error_event (before 2.28): that type alone is left out;
  // every counter it has is still exported.
  Snapshot older = *sim.core().history().newest();
  for (DeviceCounters& d : older.devices) {
    d.errors_unavailable = "the driver does not expose health_status/hw_error_event (driver 2.28+)";
    for (std::size_t i = 0; i < kHardwareErrorFields.size(); ++i) {
      if (kHardwareErrorFields[i].member == &HardwareErrors::events) d.errors_missing |= 1u << i;
    }
  }
  const Exposition old_driver = sim.Build(&older);
  const MetricFamily* kept = Family(old_driver, "neuron_device_hardware_errors_total");
  ASSERT_NE(kept, nullptr);
  bool dma_abort = false;
  for (const MetricSample& s : kept->samples) {
    EXPECT_NE(LabelOf(s, "type"), "events");
    dma_abort = dma_abort || LabelOf(s, "type") == "dma_abort";
  }
  EXPECT_TRUE(dma_abort);
  if (access(testing::kPromtool, X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  std::string output;
  EXPECT_EQ(RunPromtool(RenderText(e), &output), 0) << output;
}

// Device memory by the driver's categories, with high-water marks: the KV cache of
// memory-pressure grows the tensors category; a device whose categories are unknown has none.
TEST(Prometheus, DeviceMemoryByCategoryWithPeaks) {
  SimCore sim("trn2.48xlarge", "memory-pressure", {100, 105});
  const Exposition e = sim.Build();
  const DeviceCounters& nd0 = sim.core().history().newest()->devices[0];
  ASSERT_TRUE(nd0.memory.measured);
  const std::size_t tensors = DeviceMemoryCategory("tensors");
  EXPECT_GT(nd0.memory.used[tensors], 10ull << 30);
  EXPECT_EQ(Value(e, "neuron_device_memory_used_bytes",
                  {{"neuron_device_index", "0"}, {"category", "tensors"}}),
            static_cast<double>(nd0.memory.used[tensors]));
  EXPECT_EQ(Value(e, "neuron_device_memory_peak_bytes",
                  {{"neuron_device_index", "0"}, {"category", "tensors"}}),
            static_cast<double>(nd0.memory.peak[tensors]));
  EXPECT_GE(nd0.memory.peak[tensors], nd0.memory.used[tensors]);
  EXPECT_EQ(Value(e, "neuron_device_memory_used_bytes",
                  {{"neuron_device_index", "9"}, {"category", "driver_memory"}}),
            0);
  Snapshot unknown = *sim.core().history().newest();
  unknown.devices[0].memory = DeviceMemory{};
  const Exposition without = sim.Build(&unknown);
  EXPECT_TRUE(std::isnan(Value(without, "neuron_device_memory_used_bytes",
                               {{"neuron_device_index", "0"}, {"category", "tensors"}})));
  EXPECT_FALSE(std::isnan(Value(without, "neuron_device_memory_used_bytes",
                                {{"neuron_device_index", "1"}, {"category", "tensors"}})));
}

TEST(Prometheus, TwoRuntimesWithOneTagStayApart) {
  SimCore sim("trn1.32xlarge", "healthy-training", {40, 45});
  Snapshot end = *sim.core().history().newest();
  for (RuntimeSample& r : end.runtimes) r.tag = "job";
  const Exposition e = sim.Build(&end);
  const MetricFamily* util = Family(e, "neuroncore_utilization_ratio");
  ASSERT_NE(util, nullptr) << "duplicate series would have refused the family";
  std::set<std::string> tags;
  for (const MetricSample& s : util->samples) tags.insert(LabelOf(s, "runtime_tag"));
  EXPECT_EQ(tags.size(), end.runtimes.size());
  EXPECT_EQ(tags.count("job"), 1u);
}

TEST(Prometheus, UnreadableProcStatFailsOnlyTheVcpuGroup) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  Snapshot end = *sim.core().history().newest();
  end.host.cpu_error = "open /proc/stat: permission denied";
  const Exposition e = sim.Build(&end);
  EXPECT_EQ(Family(e, "system_vcpu_count"), nullptr);
  EXPECT_EQ(Family(e, "system_vcpu_usage_ratio"), nullptr);
  EXPECT_NE(Family(e, "system_memory_total_bytes"), nullptr);
  EXPECT_NE(Family(e, "neuroncore_utilization_ratio"), nullptr);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "vcpu_usage"}}), 0);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "memory_info"}}), 1);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "neuroncore_counters"}}), 1);
}

TEST(Prometheus, ALostDeviceLosesItsHbmSeriesOnly) {
  SimCore sim("trn1.32xlarge", "healthy-training", {40, 45});
  Snapshot end = *sim.core().history().newest();
  end.devices[2].present = false;
  const Exposition e = sim.Build(&end);
  const MetricFamily* read = Family(e, "neuron_hbm_read_bytes_total");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->samples.size(), 15u);
  for (const MetricSample& s : read->samples) EXPECT_NE(LabelOf(s, "neuron_device_index"), "2");
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "hbm_stats"}}), 0);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "neuron_hw_counters"}}), 0);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "memory_info"}}), 1);
}

TEST(Prometheus, AFailedDeviceReadKeepsHostAndDaemonFamilies) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  Snapshot end = *sim.core().history().newest();
  end.error = "driver: ioctl failed";
  const Exposition e = sim.Build(&end);
  EXPECT_EQ(Family(e, "neuroncore_utilization_ratio"), nullptr);
  EXPECT_EQ(Family(e, "neuron_hbm_read_bytes_total"), nullptr);
  EXPECT_NE(Family(e, "system_memory_used_bytes"), nullptr);
  EXPECT_NE(Family(e, "neuron_monitord_build_info"), nullptr);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "neuroncore_counters"}}), 0);
}

// A real host's sources: what they refused or left out, each family only where its source is
// read (the simulator's golden exposition has none of them).
TEST(Prometheus, WhatARealHostsSourcesRefusedIsCounted) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  EXPECT_EQ(Family(sim.Build(), "neuron_monitord_kernel_log_refused_total"), nullptr);
  sim.stats().sources = SourceStats{
      .kernel_log_refused = 13385,
      .kernel_log_unattributed = 2,
      .processes_unexamined = {{"unreadable", 0},
                               {"omitted", 0},
                               {"fd_limited", 1},
                               {"uid_limited", 7}},
      .runtimes_dropped = std::nullopt,
      .busy_readings_clamped = 4,
  };
  Exposition e = sim.Build();
  EXPECT_EQ(Value(e, "neuron_monitord_kernel_log_refused_total", {}), 13385);
  EXPECT_EQ(Value(e, "neuron_monitord_kernel_log_unattributed_total", {}), 2);
  EXPECT_EQ(Value(e, "neuron_monitord_processes_unexamined", {{"reason", "uid_limited"}}), 7);
  EXPECT_EQ(Value(e, "neuron_monitord_processes_unexamined", {{"reason", "fd_limited"}}), 1);
  EXPECT_EQ(Family(e, "neuron_monitord_runtimes_dropped_total"), nullptr);  // no neuron-monitor
  EXPECT_EQ(Value(e, "neuron_monitord_busy_readings_clamped_total", {}), 4);
  sim.stats().sources->runtimes_dropped = 3;
  sim.stats().sources->kernel_log_refused.reset();  // kernel_log.enabled false
  e = sim.Build();
  EXPECT_EQ(Value(e, "neuron_monitord_runtimes_dropped_total", {}), 3);
  EXPECT_EQ(Family(e, "neuron_monitord_kernel_log_refused_total"), nullptr);
  if (access(testing::kPromtool, X_OK) == 0) {
    std::string output;
    EXPECT_EQ(RunPromtool(RenderText(e), &output), 0) << output;
  }
}

TEST(Prometheus, OneSnapshotHasCountersButNoRatios) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40});
  const Exposition e = sim.Build();
  EXPECT_EQ(Family(e, "neuroncore_utilization_ratio"), nullptr);
  EXPECT_EQ(Family(e, "execution_latency_seconds"), nullptr);
  EXPECT_NE(Family(e, "execution_status_total"), nullptr);
  EXPECT_NE(Family(e, "neuron_hbm_used_bytes"), nullptr);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "neuroncore_counters"}}), 1);
}

}  // namespace
}  // namespace neuronmon::daemon
