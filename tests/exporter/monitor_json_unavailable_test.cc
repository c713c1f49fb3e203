// "Unavailable is not zero" in the neuron-monitor document: a figure the backend cannot measure
// has no key (or AWS's null for absent latency) and its group's `error` says why — literal groups
// for each rule, then a whole simulated trn2.48xlarge whose backend measures nothing but memory.
// The simulator's own goldens (monitor_json_test.cc) pin that nothing changes when every signal
// is measured.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/core/daemon_core.h"
#include "daemon/core/host_reader.h"
#include "daemon/core/report/subscription.h"
#include "exporter/monitor_json.h"
#include "proto/names/names.h"
#include "tests/daemon/unmeasured_backend.h"

namespace neuronmon::exporter {
namespace {

using daemon::testing::RealHostReason;
using nlohmann::json;
using std::chrono::seconds;

// The document of `report` alone.
std::string Rendered(const v1::Report& report) {
  MonitorState state;
  state.Apply(report);
  return RenderMonitorJson(state);
}

std::string Between(const std::string& text, const std::string& from, const std::string& to) {
  const std::size_t a = text.find(from);
  if (a == std::string::npos) return "";
  const std::size_t b = text.find(to, a + from.size());
  return text.substr(a, b == std::string::npos ? std::string::npos : b + to.size() - a);
}

TEST(MonitorJsonUnavailable, HbmWithoutBandwidthKeepsMemoryAndSaysWhy) {
  v1::Report report;
  v1::HbmStats& hbm = *report.mutable_system()->mutable_hbm_stats();
  hbm.set_period_ns(1'000'000'000);
  hbm.set_bandwidth_unavailable("no HBM traffic counter");
  v1::DeviceHbm& dev = *hbm.add_devices();
  dev.set_neuron_device_index(0);
  dev.set_used_bytes(5);
  dev.set_total_bytes(10);
  const std::string expected =
      R"("hbm_stats":{"period":1,"neuron_devices":[{"neuron_device_index":0,"used_bytes":5,)"
      R"("total_bytes":10,"error":""}],"error":"bandwidth unavailable: no HBM traffic counter"})";
  EXPECT_NE(Rendered(report).find(expected), std::string::npos) << Rendered(report);
  // The group's own error comes first.
  hbm.set_error("nd1 is not responding");
  EXPECT_NE(Rendered(report).find(R"("error":"nd1 is not responding; bandwidth unavailable: )"
                                  R"(no HBM traffic counter"})"),
            std::string::npos)
      << Rendered(report);
}

TEST(MonitorJsonUnavailable, HwCountersWithoutCorrectedEccKeepUncorrected) {
  v1::Report report;
  v1::HwCounters& hw = *report.mutable_system()->mutable_neuron_hw_counters();
  hw.set_period_ns(1'000'000'000);
  hw.set_corrected_unavailable("only uncorrected ECC is counted");
  v1::DeviceEcc& dev = *hw.add_devices();
  dev.set_neuron_device_index(2);
  dev.set_mem_ecc_uncorrected(1);
  EXPECT_NE(Rendered(report).find(
                R"("neuron_hw_counters":{"period":1,"neuron_devices":[{"neuron_device_index":2,)"
                R"("mem_ecc_uncorrected":1,"sram_ecc_uncorrected":0}],)"
                R"("error":"corrected ECC counts unavailable: only uncorrected ECC is counted"})"),
            std::string::npos)
      << Rendered(report);
}

TEST(MonitorJsonUnavailable, UnmeasuredLatencyIsAbsentLatencyWithTheReason) {
  v1::Report report;
  v1::RuntimeReport& runtime = *report.add_runtimes();
  runtime.set_pid(1);
  runtime.set_tag("1");
  v1::ExecutionStats& stats = *runtime.mutable_execution_stats();
  stats.set_period_ns(1'000'000'000);
  stats.mutable_execution_summary()->set_completed(7);
  stats.set_latency_unavailable("needs neuron-monitor");
  const std::string group = Between(Rendered(report), R"("execution_stats":)", R"("error":")");
  EXPECT_NE(group.find(R"("completed":7,)"), std::string::npos) << group;
  EXPECT_NE(Rendered(report).find(R"("latency_stats":{"total_latency":null,)"
                                  R"("device_latency":null},)"
                                  R"("error":"latency unavailable: needs neuron-monitor"})"),
            std::string::npos)
      << Rendered(report);
}

TEST(MonitorJsonUnavailable, CoresWithoutFlopsKeepUtilizationAndSayWhy) {
  v1::Report report;
  v1::RuntimeReport& runtime = *report.add_runtimes();
  runtime.set_pid(1);
  runtime.set_tag("1");
  v1::NeuronCoreCounters& counters = *runtime.mutable_neuroncore_counters();
  counters.set_period_ns(1'000'000'000);
  counters.set_flops_unavailable("flop_count moves only when a process exits");
  v1::CoreCounters& core = *counters.add_cores();
  core.set_index(3);
  core.set_utilization_percent(42.5);
  EXPECT_NE(Rendered(report).find(
                R"("neuroncore_counters":{"period":1,"neuroncores_in_use":{"3":)"
                R"({"neuroncore_utilization":42.5}},)"
                R"("error":"flops unavailable: flop_count moves only when a process exits"})"),
            std::string::npos)
      << Rendered(report);
}

TEST(MonitorJsonUnavailable, RuntimeGroupsWithAnErrorPrintNoFigures) {
  v1::Report report;
  v1::RuntimeReport& runtime = *report.add_runtimes();
  runtime.set_pid(1);
  runtime.set_tag("1");
  runtime.mutable_neuroncore_counters()->set_period_ns(1'000'000'000);
  runtime.mutable_neuroncore_counters()->set_error("no core counters");
  runtime.mutable_vcpu_usage()->set_period_ns(1'000'000'000);
  runtime.mutable_vcpu_usage()->set_error("no cpu");
  runtime.mutable_execution_stats()->set_period_ns(1'000'000'000);
  runtime.mutable_execution_stats()->set_error("no executions");
  runtime.mutable_collectives_stats()->set_period_ns(1'000'000'000);
  runtime.mutable_collectives_stats()->set_error("no collectives");
  const std::string document = Rendered(report);
  for (const char* expected : {
           R"("neuroncore_counters":{"period":1,"neuroncores_in_use":{},)"
           R"("error":"no core counters"})",
           R"("neuron_runtime_vcpu_usage":{"period":1,"error":"no cpu"})",
           R"("execution_stats":{"period":1,"latency_stats":{"total_latency":null,)"
           R"("device_latency":null},"error":"no executions"})",
           R"("collectives_stats":{"period":1,"operations":{},"error":"no collectives"})",
       }) {
    EXPECT_NE(document.find(expected), std::string::npos) << expected << "\nin " << document;
  }
}

// A runtime whose device memory is known only in part (a device it shares) says so in the group's
// error, where readers of neuron-monitor's document look; the part is still printed.
TEST(MonitorJsonUnavailable, PartialDeviceMemorySaysWhyInTheGroupError) {
  v1::Report report;
  v1::RuntimeReport& runtime = *report.add_runtimes();
  runtime.set_pid(1);
  runtime.set_tag("1");
  v1::MemoryUsed& memory = *runtime.mutable_memory_used();
  memory.set_period_ns(1'000'000'000);
  memory.set_device_bytes(300);
  memory.set_device_unavailable("ND2 is shared");
  v1::CoreMemory& core = *memory.add_cores();
  core.set_tensors(100);
  core.set_other(200);  // in device_bytes, not in AWS's five keys
  const std::string document = Rendered(report);
  EXPECT_NE(document.find(R"("neuron_device":300,)"), std::string::npos) << document;
  EXPECT_NE(document.find(R"("0":{"constants":0,"model_code":0,"model_shared_scratchpad":0,)"
                          R"("runtime_memory":0,"tensors":100}})"),
            std::string::npos)
      << document;
  EXPECT_NE(document.find(R"("loaded_models":[],"error":"ND2 is shared"})"), std::string::npos)
      << document;
}

// ---- whole documents from backends that cannot measure some signals ----

MonitorState RunUnmeasured(const Unmeasured& unmeasured) {
  MonitorState state;
  auto backend = daemon::testing::UnmeasuredSim("sim:trn2.48xlarge", "healthy-training", unmeasured,
                                                MonoTime(seconds(0)));
  EXPECT_NE(backend, nullptr);
  if (backend == nullptr) return state;
  daemon::DaemonCore core({seconds(1), std::chrono::minutes(2), "test"}, std::move(backend),
                          nullptr);
  v1::Subscribe request;
  for (v1::Group g : AllGroups()) {  // every 5 s: a window with completed training steps
    v1::GroupSubscription& group = *request.add_groups();
    group.set_group(g);
    group.set_period_ns(5'000'000'000);
  }
  auto sub = daemon::Subscription::FromRequest(request, seconds(1));
  EXPECT_TRUE(sub.ok());
  for (int t = 0; t <= 60; ++t) {
    const std::uint64_t seq = core.Sample(MonoTime(seconds(t)), WallTime(seconds(1767225600 + t)));
    auto report =
        core.ReportAt(*sub, seq, t == 0 ? daemon::ReportScope::kFirst : daemon::ReportScope::kLive);
    if (report) state.Apply(*report);
  }
  state.SetInventory(core.inventory());
  return state;
}

TEST(MonitorJsonUnavailable, ARealHostDocumentShowsNoUnmeasuredFigure) {
  const json doc =
      json::parse(RenderMonitorJson(RunUnmeasured(daemon::testing::NothingButMemory())));
  const auto reason = [](Signal s) { return RealHostReason(s); };
  const json& hbm = doc["system_data"]["hbm_stats"];
  EXPECT_EQ(hbm["error"], "bandwidth unavailable: " + reason(Signal::kHbmTraffic));
  ASSERT_FALSE(hbm["neuron_devices"].empty());
  for (const json& dev : hbm["neuron_devices"]) {
    EXPECT_FALSE(dev.contains("read_bytes_per_second")) << dev;
    EXPECT_FALSE(dev.contains("write_bytes_per_second")) << dev;
    EXPECT_FALSE(dev.contains("bandwidth_utilization_percent")) << dev;
    EXPECT_TRUE(dev.contains("used_bytes") && dev.contains("total_bytes")) << dev;
  }
  const json& hw = doc["system_data"]["neuron_hw_counters"];
  EXPECT_EQ(hw["error"], "corrected ECC counts unavailable: " + reason(Signal::kEccCorrected));
  for (const json& dev : hw["neuron_devices"]) {
    EXPECT_FALSE(dev.contains("mem_ecc_corrected") || dev.contains("sram_ecc_corrected")) << dev;
    EXPECT_TRUE(dev.contains("mem_ecc_uncorrected")) << dev;
  }
  ASSERT_FALSE(doc["neuron_runtime_data"].empty());
  for (const json& runtime : doc["neuron_runtime_data"]) {
    const json& report = runtime["report"];
    EXPECT_EQ(report["neuroncore_counters"]["error"], reason(Signal::kCoreActivity));
    EXPECT_TRUE(report["neuroncore_counters"]["neuroncores_in_use"].empty());
    EXPECT_EQ(report["neuron_runtime_vcpu_usage"]["error"], reason(Signal::kRuntimeCpu));
    EXPECT_FALSE(report["neuron_runtime_vcpu_usage"].contains("vcpu_usage"));
    EXPECT_EQ(report["execution_stats"]["error"], reason(Signal::kExecutions));
    EXPECT_FALSE(report["execution_stats"].contains("execution_summary"));
    EXPECT_TRUE(report["execution_stats"]["latency_stats"]["total_latency"].is_null());
    EXPECT_EQ(report["collectives_stats"]["error"], reason(Signal::kCollectives));
    EXPECT_TRUE(report["collectives_stats"]["operations"].empty());
    EXPECT_FALSE(report["collectives_stats"].contains("time_share"));
    // Memory is measured: still there.
    EXPECT_EQ(report["memory_used"]["error"], "");
    EXPECT_GT(report["memory_used"]["neuron_runtime_used_bytes"]["neuron_device"], 0);
  }
}

// A driver before 2.30.2 without AWS's neuron-monitor: utilization from pe_cntrs, no FLOPs.
TEST(MonitorJsonUnavailable, OnlyFlopsUnmeasuredKeepsTheUtilization) {
  const json doc =
      json::parse(RenderMonitorJson(RunUnmeasured(daemon::testing::RealHost({Signal::kFlops}))));
  ASSERT_FALSE(doc["neuron_runtime_data"].empty());
  double utilization = 0;
  for (const json& runtime : doc["neuron_runtime_data"]) {
    const json& counters = runtime["report"]["neuroncore_counters"];
    EXPECT_EQ(counters["error"], "flops unavailable: " + RealHostReason(Signal::kFlops));
    ASSERT_FALSE(counters["neuroncores_in_use"].empty());
    for (const auto& [index, core] : counters["neuroncores_in_use"].items()) {
      EXPECT_FALSE(core.contains("flops")) << index << ": " << core;
      EXPECT_FALSE(core.contains("effective_flops")) << index << ": " << core;
      utilization += core["neuroncore_utilization"].get<double>();
    }
  }
  EXPECT_GT(utilization, 0);
  EXPECT_EQ(doc["system_data"]["hbm_stats"]["error"], "");
}

TEST(MonitorJsonUnavailable, OnlyLatencyUnmeasuredKeepsTheExecutionCounts) {
  const json doc =
      json::parse(RenderMonitorJson(RunUnmeasured(daemon::testing::RealHost({Signal::kLatency}))));
  ASSERT_FALSE(doc["neuron_runtime_data"].empty());
  std::uint64_t completed = 0;
  for (const json& runtime : doc["neuron_runtime_data"]) {
    const json& stats = runtime["report"]["execution_stats"];
    EXPECT_EQ(stats["error"], "latency unavailable: " + RealHostReason(Signal::kLatency));
    EXPECT_TRUE(stats["latency_stats"]["total_latency"].is_null());
    EXPECT_TRUE(stats["latency_stats"]["device_latency"].is_null());
    completed += stats["execution_summary"]["completed"].get<std::uint64_t>();
  }
  EXPECT_GT(completed, 0u);
  EXPECT_EQ(doc["system_data"]["hbm_stats"]["error"], "");
  EXPECT_TRUE(
      doc["system_data"]["hbm_stats"]["neuron_devices"][0].contains("read_bytes_per_second"));
}

}  // namespace
}  // namespace neuronmon::exporter
