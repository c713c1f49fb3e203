// The neuron-monitor document renderer: golden documents of simulated instances driven by fixed
// clocks and a fixed host, structural compatibility with AWS's own records (tests/testdata/aws,
// copied from reference/neuron-tools.md §1.7: (a) inf1.xlarge, (b) trn1.2xlarge without a
// runtime and (c) trn1n.32xlarge pruned are real captures; (d) trn2.48xlarge is synthesized from
// AWS's documented schema), and literal tests of the format rules.
#include "exporter/monitor_json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "daemon/core/backend.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/host_reader.h"
#include "daemon/core/report/subscription.h"
#include "proto/names/names.h"
#include "tests/daemon/shared_core_backend.h"

namespace neuronmon::exporter {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const WallTime kWallStart{seconds(1767225600)};  // 2026-01-01T00:00:00Z

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compares `document` (plus the file's trailing newline) with the golden file;
// NEURONMON_UPDATE_GOLDEN=1 rewrites the file instead.
void ExpectMatchesGolden(const std::string& document, const std::string& name) {
  const std::string path = std::string(NEURONMON_TESTDATA_DIR) + "/neuron_monitor/" + name;
  const char* update = std::getenv("NEURONMON_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream(path, std::ios::binary) << document << '\n';
    return;
  }
  const std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << "missing " << path
                                 << "; regenerate with NEURONMON_UPDATE_GOLDEN=1";
  const std::string actual = document + "\n";
  if (actual == expected) return;
  // One-line documents are long: show where they part.
  std::size_t at = 0;
  while (at < actual.size() && at < expected.size() && actual[at] == expected[at]) ++at;
  const std::size_t from = at > 80 ? at - 80 : 0;
  ADD_FAILURE() << "differs from " << path << " at byte " << at << "\n  actual:   ..."
                << actual.substr(from, 160) << "\n  expected: ..." << expected.substr(from, 160);
}

// A fixed 4-vCPU host whose /proc counters advance by a fixed pattern per sample.
std::string StatText(int tick) {
  std::string cpus;
  std::uint64_t total[5] = {};
  for (int k = 0; k < 4; ++k) {
    const std::uint64_t t = static_cast<std::uint64_t>(tick);
    const std::uint64_t user = 5000 + (30 + 10 * k) * t + t / 3;
    const std::uint64_t system = 800 + (5 + k) * t;
    const std::uint64_t idle = 90000 + (65 - 11 * k) * t;
    const std::uint64_t iowait = 10 + k * t;
    const std::uint64_t softirq = 3 + t / 4;
    const std::uint64_t fields[5] = {user, system, idle, iowait, softirq};
    for (int f = 0; f < 5; ++f) total[f] += fields[f];
    cpus += "cpu" + std::to_string(k) + " " + std::to_string(user) + " 0 " +
            std::to_string(system) + " " + std::to_string(idle) + " " + std::to_string(iowait) +
            " 0 " + std::to_string(softirq) + " 0 0 0\n";
  }
  return "cpu  " + std::to_string(total[0]) + " 0 " + std::to_string(total[1]) + " " +
         std::to_string(total[2]) + " " + std::to_string(total[3]) + " 0 " +
         std::to_string(total[4]) + " 0 0 0\n" + cpus + "intr 0\nctxt " +
         std::to_string(100000 + 4817 * tick) + "\nbtime 1767225000\nprocesses 1000\n";
}

std::string MeminfoText(int tick) {
  return "MemTotal:       32330276 kB\nMemFree:        20000000 kB\nMemAvailable:   " +
         std::to_string(30000000 - 1024 * tick) +
         " kB\nBuffers:          100000 kB\nCached:          900000 kB\n"
         "SwapTotal:             0 kB\nSwapFree:              0 kB\n";
}

// Every group neuron-monitor can ask for (not the cluster view's HOST_SUMMARY, whose window spans
// the analyzer's).
v1::Subscribe EveryGroupEvery(int seconds_all, int seconds_hw) {
  v1::Subscribe request;
  for (v1::Group g : AllGroups()) {
    if (IsNamedOnlyGroup(g)) continue;
    v1::GroupSubscription& s = *request.add_groups();
    s.set_group(g);
    s.set_period_ns(
        static_cast<std::uint64_t>(g == v1::GROUP_NEURON_HW_COUNTERS ? seconds_hw : seconds_all) *
        1'000'000'000);
  }
  return request;
}

// Samples `backend` every second from t=0 to t=60 and applies every report of `request` to a
// MonitorState, as neuron-monitor does.
MonitorState RunBackend(std::unique_ptr<daemon::Backend> backend, const v1::Subscribe& request) {
  MonitorState state;
  auto tick = std::make_shared<int>(0);
  daemon::DaemonCore core({seconds(1), std::chrono::minutes(2), "test"}, std::move(backend),
                          [tick] {
                            const int t = (*tick)++;
                            return daemon::HostFromText(StatText(t), MeminfoText(t));
                          });
  auto sub = daemon::Subscription::FromRequest(request, seconds(1));
  EXPECT_TRUE(sub.ok());
  for (int t = 0; t <= 60; ++t) {
    const std::uint64_t seq = core.Sample(MonoTime(seconds(t)), kWallStart + seconds(t));
    std::optional<v1::Report> report =
        core.ReportAt(*sub, seq, t == 0 ? daemon::ReportScope::kFirst : daemon::ReportScope::kLive);
    if (report) state.Apply(*report);
  }
  state.SetInventory(core.inventory());
  return state;
}

// RunBackend over `device` running `scenario` (seed 1).
MonitorState RunSimulation(const std::string& device, const std::string& scenario,
                           const v1::Subscribe& request) {
  auto backend = daemon::MakeBackend({device, scenario, 1, 1}, MonoTime(seconds(0)));
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  if (!backend.ok()) return MonitorState{};
  return RunBackend(std::move(*backend), request);
}

MonitorState Trn1SmallIdle() { return RunSimulation("sim:trn1.2xlarge", "idle", {}); }
MonitorState Trn1Training() { return RunSimulation("sim:trn1.32xlarge", "healthy-training", {}); }
// AWS's default cadence (5 s) with hardware counters every second, as in capture (c).
MonitorState Trn2Mixed() {
  return RunSimulation("sim:trn2.48xlarge", "mixed", EveryGroupEvery(5, 1));
}

TEST(MonitorJsonGolden, Trn1_2xlargeIdle) {
  ExpectMatchesGolden(RenderMonitorJson(Trn1SmallIdle()), "trn1.2xlarge_idle.golden");
}

TEST(MonitorJsonGolden, Trn1_32xlargeHealthyTraining) {
  ExpectMatchesGolden(RenderMonitorJson(Trn1Training()), "trn1.32xlarge_healthy-training.golden");
}

TEST(MonitorJsonGolden, Trn2_48xlargeMixed) {
  ExpectMatchesGolden(RenderMonitorJson(Trn2Mixed()), "trn2.48xlarge_mixed.golden");
}

// ---- structure against AWS's records ----

// Group name -> path -> JSON types seen there, with map keys (core indices, cpu numbers, sg_00,
// p-keys, nc_v3.N) as `*` and array elements as `[]`.
using Shape = std::map<std::string, std::map<std::string, std::set<std::string>>>;

bool IsMapKey(std::string_view key) {
  for (std::string_view prefix : {"sg_", "p", "nc_v3."}) {
    if (key.starts_with(prefix) && key.size() > prefix.size()) {
      key.remove_prefix(prefix.size());
      break;
    }
  }
  return !key.empty() && key.find_first_not_of("0123456789") == std::string_view::npos;
}

// Go float64 fields print whole values as integers, so only their being numbers is compared.
std::string TypeOf(const json& v, std::string_view key) {
  static const std::set<std::string_view> kFloatKeys = {"period",   "neuroncore_utilization",
                                                        "user",     "nice",
                                                        "system",   "idle",
                                                        "io_wait",  "irq",
                                                        "soft_irq", "*"};
  if (key.ends_with("_latency") && (v.is_null() || v.is_object())) return "latency|null";
  if (v.is_number())
    return kFloatKeys.contains(key) ? "number" : v.is_number_integer() ? "int" : "float";
  return v.type_name();
}

std::string GroupOf(const std::string& path) {
  const auto segment = [&](std::size_t from) {
    return path.substr(from, path.find_first_of(".[", from) - from);
  };
  const std::string runtime = ".neuron_runtime_data[].report.";
  if (path.starts_with(runtime)) return "runtime." + segment(runtime.size());
  if (path.starts_with(".neuron_runtime_data[]")) return "runtime_entry";
  if (path.starts_with(".system_data.")) return "system." + segment(13);
  if (path.starts_with(".instance_info") || path.starts_with(".neuron_hardware_info")) {
    return segment(1);
  }
  return "document";
}

void Collect(const json& v, const std::string& path, std::string_view key, Shape& out) {
  if (!path.empty()) out[GroupOf(path)][path].insert(TypeOf(v, key));
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) {
      const std::string name = IsMapKey(k) ? "*" : k;
      Collect(child, path + "." + name, name, out);
    }
  } else if (v.is_array()) {
    for (const json& child : v) Collect(child, path + "[]", key, out);
  }
}

Shape ShapeOf(const std::string& text) {
  Shape shape;
  Collect(json::parse(text), "", "", shape);
  return shape;
}

// For every group AWS's record has: no AWS key missing, and no type of ours that AWS's record
// does not have at that key; with `exact`, also no key of ours that AWS's record lacks.
void ExpectCompatible(const std::string& capture, const std::string& ours, bool exact) {
  const Shape aws = ShapeOf(ReadFile(std::string(NEURONMON_TESTDATA_DIR) + "/aws/" + capture));
  const Shape mine = ShapeOf(ours);
  for (const auto& [group, paths] : aws) {
    auto it = mine.find(group);
    ASSERT_NE(it, mine.end()) << capture << ": group " << group << " missing";
    for (const auto& [path, types] : paths) {
      auto at = it->second.find(path);
      if (at == it->second.end()) {
        ADD_FAILURE() << capture << ": " << path << " missing";
        continue;
      }
      for (const std::string& type : at->second) {
        EXPECT_TRUE(types.contains(type)) << capture << ": " << path << " is " << type;
      }
    }
    if (!exact) continue;
    for (const auto& [path, types] : it->second) {
      EXPECT_TRUE(paths.contains(path)) << capture << ": " << path << " is not AWS's";
    }
  }
}

const RenderOptions kAwsOnly{.include_extensions = false};

TEST(MonitorJsonStructure, MatchesInf1FullCapture) {
  ExpectCompatible("inf1_xlarge_full.json", RenderMonitorJson(Trn1Training(), kAwsOnly), false);
}

TEST(MonitorJsonStructure, MatchesTrn1NoRuntimeCaptureExactly) {
  ExpectCompatible("trn1_2xlarge_no_runtime.json", RenderMonitorJson(Trn1SmallIdle(), kAwsOnly),
                   true);
}

TEST(MonitorJsonStructure, MatchesTrn1nPrunedCapture) {
  MonitorState state = Trn1Training();
  v1::Inventory inventory = state.inventory();
  inventory.mutable_instance_info()->set_ultraserver_id("u-cafb07773a569a23");
  state.SetInventory(inventory);
  ExpectCompatible("trn1n_32xlarge_pruned.json", RenderMonitorJson(state, kAwsOnly), false);
}

TEST(MonitorJsonStructure, MatchesSynthesizedTrn2RecordExactly) {
  ExpectCompatible("trn2_48xlarge_synthesized.json", RenderMonitorJson(Trn2Mixed(), kAwsOnly),
                   true);
}

TEST(MonitorJsonStructure, ExtensionsOffRemovesExactlyTheExtensionGroups) {
  const MonitorState state = Trn2Mixed();
  nlohmann::ordered_json full = nlohmann::ordered_json::parse(RenderMonitorJson(state));
  ASSERT_TRUE(full["system_data"].contains("hbm_stats"));
  ASSERT_TRUE(full["system_data"].contains("device_health"));
  ASSERT_TRUE(full["system_data"].contains("bottleneck_analysis"));
  ASSERT_TRUE(full["neuron_runtime_data"][0]["report"].contains("collectives_stats"));
  ASSERT_TRUE(full["neuron_runtime_data"][0]["report"].contains("bottleneck_analysis"));
  ASSERT_TRUE(full["neuron_runtime_data"][0].contains("attribution"));
  full["system_data"].erase("hbm_stats");
  full["system_data"].erase("device_health");
  full["system_data"].erase("bottleneck_analysis");
  for (auto& runtime : full["neuron_runtime_data"]) {
    runtime.erase("attribution");
    runtime["report"].erase("collectives_stats");
    runtime["report"].erase("bottleneck_analysis");
  }
  EXPECT_EQ(full.dump(), nlohmann::ordered_json::parse(RenderMonitorJson(state, kAwsOnly)).dump());
}

// ---- literal documents ----

constexpr char kEmptyInfo[] =
    R"("instance_info":{"instance_name":"","instance_id":"","instance_type":"",)"
    R"("instance_availability_zone":"","instance_availability_zone_id":"","instance_region":"",)"
    R"("ami_id":"","subnet_id":"","error":""},"neuron_hardware_info":{"neuron_device_type":"",)"
    R"("neuron_device_version":"","neuroncore_version":"","neuron_device_count":0,)"
    R"("neuron_device_memory_size":0,"neuroncore_per_device_count":0,)"
    R"("logical_neuroncore_config":0,"error":""}})";

v1::RuntimeReport& AddRuntime(v1::Report& report, std::uint32_t pid, const std::string& tag) {
  v1::RuntimeReport& runtime = *report.add_runtimes();
  runtime.set_pid(pid);
  runtime.set_tag(tag);
  return runtime;
}

v1::CoreCounters& AddCore(v1::RuntimeReport& runtime, std::uint32_t index, double utilization) {
  v1::NeuronCoreCounters& counters = *runtime.mutable_neuroncore_counters();
  counters.set_period_ns(1'000'113'182);
  v1::CoreCounters& core = *counters.add_cores();
  core.set_index(index);
  core.set_utilization_percent(utilization);
  return core;
}

std::string Render(const v1::Report& report, const RenderOptions& options = {}) {
  MonitorState state;
  state.Apply(report);
  return RenderMonitorJson(state, options);
}

TEST(MonitorJson, NoRuntimesIsAnEmptyArrayAndInfoIsAlwaysPresent) {
  MonitorState state;
  EXPECT_FALSE(state.has_data());
  EXPECT_EQ(RenderMonitorJson(state),
            std::string(R"({"neuron_runtime_data":[],"system_data":{},)") + kEmptyInfo);
  state.Apply(v1::Report());
  EXPECT_TRUE(state.has_data());
}

TEST(MonitorJson, KeyOrderOfASmallDocument) {
  v1::Report report;
  report.set_seq(1);
  v1::RuntimeReport& b = AddRuntime(report, 900, "b");
  v1::RuntimeReport& a = AddRuntime(report, 12, "a");
  a.mutable_vcpu_usage()->set_period_ns(1'000'000'000);
  a.mutable_vcpu_usage()->set_user_percent(12.346);
  a.mutable_vcpu_usage()->set_system_percent(1.004);
  for (std::uint32_t c : {2, 10, 1}) AddCore(a, c, c == 10 ? 42.5 : 0);
  b.set_error("gone");
  v1::MemoryInfo& memory = *report.mutable_system()->mutable_memory_info();
  memory.set_period_ns(4'999'728'315);
  memory.set_memory_total_bytes(33110204416);
  memory.set_memory_used_bytes(1284890624);
  MonitorState state;
  state.Apply(report);
  v1::Inventory inventory;
  inventory.mutable_instance_info()->set_instance_type("trn1.2xlarge");
  inventory.mutable_instance_info()->set_ultraserver_id("u-1");
  inventory.mutable_hardware_info()->set_neuron_device_count(1);
  state.SetInventory(inventory);
  EXPECT_EQ(
      RenderMonitorJson(state),
      R"({"neuron_runtime_data":[{"pid":12,"neuron_runtime_tag":"a","error":"","report":{)"
      R"("neuron_runtime_vcpu_usage":{"period":1,"vcpu_usage":{"user":12.35,"system":1},)"
      R"("error":""},"neuroncore_counters":{"period":1.000113182,"neuroncores_in_use":{)"
      R"("1":{"neuroncore_utilization":0,"flops":0,"effective_flops":0},)"
      R"("10":{"neuroncore_utilization":42.5,"flops":0,"effective_flops":0},)"
      R"("2":{"neuroncore_utilization":0,"flops":0,"effective_flops":0}},"error":""}}},)"
      R"({"pid":900,"neuron_runtime_tag":"b","error":"gone","report":{}}],)"
      R"("system_data":{"memory_info":{"period":4.9997283150000005,)"
      R"("memory_total_bytes":33110204416,"memory_used_bytes":1284890624,"swap_total_bytes":0,)"
      R"("swap_used_bytes":0,"error":""}},"instance_info":{"instance_name":"","instance_id":"",)"
      R"("instance_type":"trn1.2xlarge","instance_availability_zone":"",)"
      R"("instance_availability_zone_id":"","instance_region":"","ami_id":"","subnet_id":"",)"
      R"("ultraserver_id":"u-1","error":""},"neuron_hardware_info":{"neuron_device_type":"",)"
      R"("neuron_device_version":"","neuroncore_version":"","neuron_device_count":1,)"
      R"("neuron_device_memory_size":0,"neuroncore_per_device_count":0,)"
      R"("logical_neuroncore_config":0,"error":""}})");
}

TEST(MonitorJson, LatencyIsNullWhenNothingCompleted) {
  v1::Report report;
  v1::ExecutionStats& stats = *AddRuntime(report, 1, "1").mutable_execution_stats();
  EXPECT_NE(Render(report).find(R"("latency_stats":{"total_latency":null,"device_latency":null})"),
            std::string::npos);
  v1::Percentiles& p = *stats.mutable_total_latency();
  p.set_p0(0.0032498836517333984);
  p.set_p50(0.025);
  p.set_p100(1);
  EXPECT_NE(Render(report).find(R"("total_latency":{"p0":0.0032498836517333984,"p1":0,"p100":1,)"
                                R"("p25":0,"p50":0.025,"p75":0,"p99":0},"device_latency":null})"),
            std::string::npos);
}

TEST(MonitorJson, V3dOnlyForCoresWithPhysicalSubCores) {
  v1::Report report;
  v1::RuntimeReport& runtime = AddRuntime(report, 1, "1");
  v1::CoreCounters& logical = AddCore(runtime, 5, 87.31);
  for (std::uint32_t p : {11, 10}) {
    v1::PhysicalCoreUtilization& physical = *logical.add_physical();
    physical.set_index(p);
    physical.set_utilization_percent(p == 10 ? 88.02 : 86.6);
  }
  AddCore(runtime, 6, 1);
  const std::string document = Render(report);
  EXPECT_NE(document.find(R"("5":{"neuroncore_utilization":87.31,"flops":0,"effective_flops":0,)"
                          R"("v3d":{"nc_v3.10":{"neuroncore_utilization":88.02},)"
                          R"("nc_v3.11":{"neuroncore_utilization":86.6}}},)"
                          R"("6":{"neuroncore_utilization":1,"flops":0,"effective_flops":0}})"),
            std::string::npos)
      << document;
}

TEST(MonitorJson, FlopsAreRoundedToIntegers) {
  v1::Report report;
  v1::RuntimeReport& runtime = AddRuntime(report, 1, "1");
  const double flops[] = {1234.5, 0.49, 121773905477631.6, std::nan(""), -5};
  for (std::uint32_t c = 0; c < 5; ++c) {
    v1::CoreCounters& core = AddCore(runtime, c, 0);
    core.set_flops(flops[c]);
    core.set_effective_flops(flops[c] / 2);
  }
  const std::string document = Render(report);
  for (const char* expected :
       {R"("flops":1235,"effective_flops":617)", R"("flops":0,"effective_flops":0})",
        R"("flops":121773905477632,"effective_flops":60886952738816)"}) {
    EXPECT_NE(document.find(expected), std::string::npos) << expected << " in " << document;
  }
  EXPECT_EQ(document.find("null"), std::string::npos) << document;
}

// Two applications on the same NeuronCores: each lists every core it uses with the core's own
// utilization and FLOP/s — the same figures, never a share or a 0 (AWS's per-process shares are
// not ours: docs/json-schema.md).
TEST(MonitorJson, ASharedCoreShowsTheCoresFiguresForEveryRuntime) {
  const json doc = json::parse(RenderMonitorJson(RunBackend(
      daemon::testing::SharedCoreSim("sim:trn1.2xlarge", "healthy-training", MonoTime(seconds(0))),
      {})));
  ASSERT_EQ(doc["neuron_runtime_data"].size(), 2u);
  const json& owner = doc["neuron_runtime_data"][0]["report"]["neuroncore_counters"];
  const json& sharer = doc["neuron_runtime_data"][1]["report"]["neuroncore_counters"];
  EXPECT_EQ(doc["neuron_runtime_data"][1]["neuron_runtime_tag"], "sharer");
  ASSERT_EQ(owner["neuroncores_in_use"].size(), 2u);
  for (const auto& [core, figures] : owner["neuroncores_in_use"].items()) {
    EXPECT_GT(figures["neuroncore_utilization"].get<double>(), 50) << core;
    ASSERT_TRUE(sharer["neuroncores_in_use"].contains(core)) << core;
    EXPECT_EQ(sharer["neuroncores_in_use"][core], figures) << core;
  }
}

TEST(MonitorJson, HostileStringsAreEscapedAsGoDoes) {
  v1::Report report;
  AddRuntime(report, 1, "a\"b\\c\nd<e>&\x01\xff\xe2\x80\xa8 ok").set_error("open /proc/1/stat");
  EXPECT_NE(Render(report).find(R"("neuron_runtime_tag":"a\"b\\c\nd\u003ce\u003e\u0026\u0001)"
                                R"(\ufffd\u2028 ok","error":"open /proc/1/stat")"),
            std::string::npos);
}

TEST(MonitorJson, ExtensionGroupsLayout) {
  v1::Report report;
  v1::RuntimeReport& runtime = AddRuntime(report, 1, "1");
  v1::CollectivesStats& collectives = *runtime.mutable_collectives_stats();
  collectives.set_period_ns(2'000'000'000);
  collectives.set_time_share(0.5);
  for (v1::CollectiveOp op : {v1::COLLECTIVE_OP_ALL_REDUCE, v1::COLLECTIVE_OP_ALL_GATHER}) {
    v1::CollectiveStats& stats = *collectives.add_operations();
    stats.set_op(op);
    stats.set_count(4);
    stats.set_bytes(1024);
    stats.set_operations_per_second(2);
    stats.set_bytes_per_second(512);
    stats.set_mean_message_bytes(256);
    stats.set_time_share(0.25);
  }
  v1::Finding& finding = *report.add_findings();
  finding.set_kind(v1::FINDING_KIND_STRAGGLER);
  finding.set_severity(v1::SEVERITY_CRITICAL);
  finding.set_subject("instance");
  finding.set_confidence(0.75);
  finding.set_since_unix_ns(1767225600'500000000);
  finding.set_straggler("nd5");
  *finding.add_evidence() = v1::Evidence();
  finding.mutable_evidence(0)->set_name("step_time_ratio");
  v1::DeviceHbm& hbm = *report.mutable_system()->mutable_hbm_stats()->add_devices();
  hbm.set_neuron_device_index(3);
  hbm.set_error("device is not responding");
  v1::DeviceHbm& unknown = *report.mutable_system()->mutable_hbm_stats()->add_devices();
  unknown.set_neuron_device_index(4);
  unknown.set_memory_categories_unavailable("not measured");
  v1::DeviceHbm& known = *report.mutable_system()->mutable_hbm_stats()->add_devices();
  known.set_neuron_device_index(5);
  v1::MemoryCategoryUsage& tensors = *known.add_memory_categories();
  tensors.set_category("tensors");
  tensors.set_used_bytes(2048);
  tensors.set_peak_bytes(4096);
  const std::string op = R"({"count":4,"bytes":1024,"operations_per_second":2,)"
                         R"("bytes_per_second":512,"mean_message_bytes":256,"time_share":0.25,)"
                         R"("latency":null})";
  EXPECT_EQ(Render(report),
            R"({"neuron_runtime_data":[{"pid":1,"neuron_runtime_tag":"1","error":"","report":{)"
            R"("collectives_stats":{"period":2,"operations":{"all_gather":)" +
                op + R"(,"all_reduce":)" + op + R"(},"time_share":0.5,"error":""}}}],)" +
                R"("system_data":{"bottleneck_analysis":{"period":0,"findings":[{)"
                R"("kind":"straggler","severity":"critical","subject":"instance","summary":"",)"
                R"("advice":"","confidence":0.75,"evidence":[{"name":"step_time_ratio",)"
                R"("value":0,"unit":"","threshold":0,"comparison":""}],"since":1767225600.5,)"
                R"("straggler":"nd5"}],"error":""},"hbm_stats":{"period":0,"neuron_devices":[{)"
                R"("neuron_device_index":3,"read_bytes_per_second":0,"write_bytes_per_second":0,)"
                R"("bandwidth_utilization_percent":0,"used_bytes":0,"total_bytes":0,)"
                R"("error":"device is not responding"},{"neuron_device_index":4,)"
                R"("read_bytes_per_second":0,"write_bytes_per_second":0,)"
                R"("bandwidth_utilization_percent":0,"used_bytes":0,"total_bytes":0,)"
                R"("error":"memory categories unavailable: not measured"},)"
                R"({"neuron_device_index":5,"read_bytes_per_second":0,"write_bytes_per_second":0,)"
                R"("bandwidth_utilization_percent":0,"used_bytes":0,"total_bytes":0,)"
                R"("memory_categories":{"tensors":{"used_bytes":2048,"peak_bytes":4096}},)"
                R"("error":""}],"error":""}},)" +
                kEmptyInfo);
  EXPECT_EQ(Render(report, kAwsOnly),
            std::string(R"({"neuron_runtime_data":[{"pid":1,"neuron_runtime_tag":"1","error":"",)"
                        R"("report":{}}],"system_data":{},)") +
                kEmptyInfo);
}

TEST(MonitorJson, DeviceHealthLayout) {
  v1::Report report;
  v1::DeviceHealthStats& stats = *report.mutable_system()->mutable_device_health();
  stats.set_period_ns(5'000'000'000);
  v1::DeviceHealth& ok = *stats.add_devices();
  ok.set_neuron_device_index(0);
  ok.set_state(v1::HEALTH_STATE_OK);
  ok.mutable_power()->set_average_percent(18.86);
  ok.mutable_power()->set_min_percent(0.86);
  ok.mutable_power()->set_max_percent(25);
  ok.mutable_power()->set_sampled_unix_ns(1767225600'000000000);
  v1::DeviceHealth& bad = *stats.add_devices();
  bad.set_neuron_device_index(1);
  bad.set_state(v1::HEALTH_STATE_FAILED);
  bad.set_action(v1::HEALTH_ACTION_REPLACE);
  bad.set_advice("replace it");
  v1::HealthReason& reason = *bad.add_reasons();
  reason.set_code("mem_ecc_uncorrected");
  reason.set_text("2 uncorrectable HBM ECC errors since the driver loaded");
  reason.set_state(v1::HEALTH_STATE_FAILED);
  reason.set_action(v1::HEALTH_ACTION_REPLACE);
  bad.mutable_power()->set_unavailable("the driver has no reading yet (POWER_STATUS_NO_DATA)");
  bad.mutable_errors_total()->set_mem_ecc_uncorrected(2);
  bad.mutable_errors_total()->set_kernel_hbm_uncorrectable(2);
  bad.set_errors_unavailable("the driver does not expose health_status/hw_error_event");
  bad.set_kernel_log_unavailable("cannot read /dev/kmsg: Operation not permitted");
  const std::string kernel_zero =
      R"("kernel_sram_uncorrectable":0,"kernel_nc_uncorrectable":0,)"
      R"("kernel_hbm_uncorrectable":0,"kernel_dma":0,"kernel_other":0,"hbm_repairable":0})";
  const std::string zero = R"({"mem_ecc_uncorrected":0,"mem_ecc_repairable":0,)"
                           R"("sram_ecc_uncorrected":0,"nc_uncorrectable":0,"hbm_uncorrectable":0,)"
                           R"("dma_abort":0,"collectives":0,"events":0,)" +
                           kernel_zero;
  const std::string two = R"({"mem_ecc_uncorrected":2,"mem_ecc_repairable":0,)"
                          R"("sram_ecc_uncorrected":0,"nc_uncorrectable":0,"hbm_uncorrectable":0,)"
                          R"("dma_abort":0,"collectives":0,"events":0,)"
                          R"("kernel_sram_uncorrectable":0,"kernel_nc_uncorrectable":0,)"
                          R"("kernel_hbm_uncorrectable":2,"kernel_dma":0,"kernel_other":0,)"
                          R"("hbm_repairable":0})";
  EXPECT_EQ(
      Render(report),
      R"({"neuron_runtime_data":[],"system_data":{"device_health":{"period":5,)"
      R"("neuron_devices":[{"neuron_device_index":0,"state":"ok","action":"none",)"
      R"("advice":"","reasons":[],"power":{"utilization_percent":18.86,"min_percent":0.86,)"
      R"("max_percent":25,"sampled":1767225600,"error":""},"hardware_errors":)" +
          zero + R"(,"hardware_errors_total":)" + zero +
          R"(,"error":"","kernel_log_error":""},{"neuron_device_index":1,"state":"failed","action":"replace",)"
          R"("advice":"replace it","reasons":[{"code":"mem_ecc_uncorrected","text":)"
          R"("2 uncorrectable HBM ECC errors since the driver loaded","state":"failed",)"
          R"("action":"replace"}],"power":{"error":"power unavailable: the driver has no )"
          R"x(reading yet (POWER_STATUS_NO_DATA)"},"hardware_errors":)x" +
          zero + R"(,"hardware_errors_total":)" + two +
          R"(,"error":"hardware errors unavailable: the driver does not expose )"
          R"(health_status/hw_error_event","kernel_log_error":"kernel log unavailable: )"
          R"(cannot read /dev/kmsg: Operation not permitted"}],"error":""}},)" +
          kEmptyInfo);
  EXPECT_EQ(Render(report, kAwsOnly),
            std::string(R"({"neuron_runtime_data":[],"system_data":{},)") + kEmptyInfo);
}

// ---- merging reports ----

std::string Pids(const MonitorState& state) {
  std::string pids;
  for (const MonitorState::Runtime& r : state.runtimes()) {
    pids += (pids.empty() ? "" : ",") + std::to_string(r.report.pid());
  }
  return pids;
}

TEST(MonitorState, GroupsMissingFromALaterReportKeepTheirValueAndPeriod) {
  v1::Report first;
  first.set_seq(1);
  v1::RuntimeReport& runtime = AddRuntime(first, 7, "7");
  runtime.mutable_execution_stats()->set_period_ns(5'000'000'000);
  runtime.mutable_execution_stats()->mutable_execution_summary()->set_completed(38);
  AddCore(runtime, 0, 10);
  first.mutable_system()->mutable_memory_info()->set_period_ns(4'999'728'315);
  first.mutable_system()->mutable_memory_info()->set_memory_used_bytes(123);
  v1::Report second;
  second.set_seq(2);
  AddCore(AddRuntime(second, 7, "7"), 0, 20);
  second.mutable_system()->mutable_vcpu_usage()->set_period_ns(1'000'000'000);
  MonitorState state;
  state.Apply(first);
  state.Apply(second);
  const std::string document = RenderMonitorJson(state);
  EXPECT_NE(document.find(R"("execution_stats":{"period":5,)"), std::string::npos);
  EXPECT_NE(document.find(R"("completed":38,)"), std::string::npos);
  EXPECT_NE(document.find(R"("neuroncore_utilization":20,)"), std::string::npos);
  EXPECT_NE(document.find(R"("memory_info":{"period":4.9997283150000005,"memory_total_bytes":0,)"
                          R"("memory_used_bytes":123,)"),
            std::string::npos);
  EXPECT_NE(document.find(R"("vcpu_usage":{"period":1,)"), std::string::npos);
}

TEST(MonitorState, RuntimeMissingFromAReportWithRuntimesHasExited) {
  v1::Report report;
  report.set_seq(1);
  AddRuntime(report, 2, "2");
  AddRuntime(report, 1, "1");
  MonitorState state;
  state.Apply(report);
  EXPECT_EQ(Pids(state), "1,2");
  report.set_seq(2);
  report.mutable_runtimes()->DeleteSubrange(0, 1);
  state.Apply(report);
  EXPECT_EQ(Pids(state), "1");
  // A report with nothing but runtime groups due, and no runtime, means none is left.
  v1::Report none;
  none.set_seq(3);
  state.Apply(none);
  EXPECT_EQ(Pids(state), "");
}

TEST(MonitorState, ExitIsKnownFromTheGroupsDueWhenSystemGroupsShareTheReport) {
  // Runtime groups every 5 reports, system groups every report: Report.groups says which were due.
  MonitorState state;
  const auto apply = [&](std::uint64_t seq, bool runtime_due, bool with_runtime) {
    v1::Report report;
    report.set_seq(seq);
    report.add_groups(v1::GROUP_MEMORY_INFO);
    report.mutable_system()->mutable_memory_info()->set_period_ns(1'000'000'000);
    if (runtime_due) report.add_groups(v1::GROUP_NEURONCORE_COUNTERS);
    if (with_runtime) AddRuntime(report, 7, "7");
    state.Apply(report);
  };
  for (std::uint64_t seq = 3; seq <= 15; ++seq) apply(seq, seq % 5 == 0, seq % 5 == 0);
  for (std::uint64_t seq = 16; seq <= 19; ++seq) {
    apply(seq, false, false);
    EXPECT_EQ(Pids(state), "7") << "seq " << seq << ": runtime groups were not due";
  }
  apply(20, true, false);
  EXPECT_EQ(Pids(state), "") << "seq 20: due, and the runtime was not reported";
}

TEST(MonitorState, ARuntimeStaysWhileAnySubscriptionReportsIt) {
  v1::Report first;
  first.set_seq(1);
  AddRuntime(first, 1, "train");
  v1::Report second;
  second.set_seq(1);
  AddRuntime(second, 2, "serve");
  MonitorState state;
  state.Apply(first, 0);
  state.Apply(second, 1);
  EXPECT_EQ(Pids(state), "1,2");
  first.set_seq(2);
  state.Apply(first, 0);
  EXPECT_EQ(Pids(state), "1,2") << "subscription 0 never reported pid 2";
  second.set_seq(2);
  second.mutable_runtimes(0)->set_pid(3);
  state.Apply(second, 1);
  EXPECT_EQ(Pids(state), "1,3");
}

}  // namespace
}  // namespace neuronmon::exporter
