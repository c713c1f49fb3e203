// neuron-monitor's documents as ParseMonitorDocument reads them — our golden outputs and AWS's
// captures, groups missing or carrying errors, malformed content, garbage and oversize input —
// and the cumulative counters MonitorIntegrator makes of a stream of them.
#include "neurondev/monitor_document.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace neuronmon::neurondev {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string ReadTestData(const std::string& relative) {
  std::ifstream in(std::string(NEURONMON_TESTDATA_DIR) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << relative;
  return text.str();
}

MonitorDocument Parse(std::string_view text, const MonitorLimits& limits = {}) {
  Result<MonitorDocument> doc = ParseMonitorDocument(text, limits);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : MonitorDocument{};
}

std::string ParseError(std::string_view text, const MonitorLimits& limits = {}) {
  Result<MonitorDocument> doc = ParseMonitorDocument(text, limits);
  EXPECT_FALSE(doc.ok());
  return doc.ok() ? "" : doc.status().message();
}

MonitorDocument Golden(const std::string& name) {
  return Parse(ReadTestData("neuron_monitor/" + name + ".golden"));
}

// A runtime entry with one core's utilization and a count of completed executions.
json Runtime(int pid, double period, double utilization, int completed, int core = 0) {
  return {{"pid", pid},
          {"neuron_runtime_tag", ""},
          {"error", ""},
          {"report",
           {{"neuroncore_counters",
             {{"period", period},
              {"neuroncores_in_use",
               {{std::to_string(core), {{"neuroncore_utilization", utilization}}}}},
              {"error", ""}}},
            {"execution_stats",
             {{"period", period},
              {"execution_summary", {{"completed", completed}}},
              {"latency_stats", {{"total_latency", nullptr}, {"device_latency", nullptr}}},
              {"error", ""}}}}}};
}

std::string Document(const std::vector<json>& runtimes) {
  return json{{"neuron_runtime_data", runtimes}}.dump();
}

void ExpectInBucketOf(double value, double expected) {
  const int bucket = LatencyHistogram::BucketFor(expected);
  EXPECT_GE(value, LatencyHistogram::LowerEdge(bucket)) << expected;
  EXPECT_LE(value, LatencyHistogram::UpperEdge(bucket)) << expected;
}

TEST(MonitorDocument, ReadsEveryGroupOfOurTrainingGolden) {
  const MonitorDocument doc = Golden("trn1.32xlarge_healthy-training");
  EXPECT_TRUE(doc.problems.empty());
  ASSERT_EQ(doc.runtimes.size(), 16u);
  const MonitorRuntime& r = doc.runtimes[0];
  EXPECT_EQ(r.pid, 41200u);
  EXPECT_EQ(r.tag, "llama3-8b-rank0");
  EXPECT_EQ(r.error, "");
  ASSERT_TRUE(r.neuroncore_counters && r.execution_stats && r.memory_used &&
              r.neuron_runtime_vcpu_usage && r.collectives_stats);

  const NeuroncoreCounters& nc = *r.neuroncore_counters;
  EXPECT_EQ(nc.period, 1.0);
  ASSERT_EQ(nc.cores.size(), 2u);
  EXPECT_EQ(nc.cores[1].core, 1u);
  EXPECT_EQ(nc.cores[1].utilization, 91.9490657);
  EXPECT_EQ(nc.cores[1].flops, 49970974470332.0);
  EXPECT_EQ(nc.cores[1].effective_flops, 48471870873403.0);
  EXPECT_TRUE(nc.cores[1].physical.empty());

  const ExecutionStats& ex = *r.execution_stats;
  EXPECT_EQ(ex.counts.completed, 1u);
  EXPECT_EQ(ex.counts.Failed(), 0u);
  ASSERT_TRUE(ex.total_latency && ex.device_latency);
  EXPECT_EQ(ex.total_latency->p0, 2.097152);
  EXPECT_EQ(ex.total_latency->p100, 2.2869604725744104);

  const MemoryUsed& mem = *r.memory_used;
  EXPECT_EQ(mem.host_bytes, 2771596083u);
  EXPECT_EQ(mem.device_bytes, 4830935456u);
  EXPECT_EQ(mem.memory.host.application_memory, 2469606195u);
  EXPECT_EQ(mem.memory.host.Total(), mem.host_bytes);
  ASSERT_EQ(mem.memory.cores.size(), 2u);
  EXPECT_EQ(mem.memory.cores[0].tensors, 1608728475u);
  EXPECT_EQ(mem.memory.DeviceTotal(), mem.device_bytes);
  ASSERT_EQ(mem.memory.models.size(), 1u);
  const LoadedModel& model = mem.memory.models[0];
  EXPECT_EQ(model.uuid, "1cc64203356b0f6877944b3e1447e912");
  EXPECT_EQ(model.model_id, 10001u);
  EXPECT_TRUE(model.is_running);
  ASSERT_EQ(model.subgraphs.size(), 2u);
  EXPECT_EQ(model.subgraphs[0].name, "sg_00");
  EXPECT_EQ(model.subgraphs[0].host.dma_buffers, 524288u);
  EXPECT_EQ(model.subgraphs[0].constants, 142428786u);
  EXPECT_EQ(model.subgraphs[0].model_code, 13773917u);
  EXPECT_EQ(model.subgraphs[1].core, 1u);

  EXPECT_EQ(r.neuron_runtime_vcpu_usage->user, 1.14);
  EXPECT_EQ(r.neuron_runtime_vcpu_usage->system, 0.04);

  const CollectivesStats& cs = *r.collectives_stats;
  EXPECT_EQ(cs.time_share, 0.041926198);
  ASSERT_EQ(cs.operations.size(), 3u);  // in CollectiveKind order
  EXPECT_EQ(cs.operations[0].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(cs.operations[0].count, 30u);
  EXPECT_EQ(cs.operations[0].bytes, 2013265920u);
  EXPECT_EQ(cs.operations[0].mean_message_bytes, 67108864.0);
  EXPECT_EQ(cs.operations[0].time_share, 0.040498505);
  ASSERT_TRUE(cs.operations[0].latency);
  EXPECT_EQ(cs.operations[0].latency->p50, 0.0013880591959163416);
  EXPECT_EQ(cs.operations[1].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(cs.operations[2].kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(cs.operations[2].count, 9u);
}

TEST(MonitorDocument, ReadsTrn2PhysicalCores) {
  const MonitorDocument doc = Golden("trn2.48xlarge_mixed");
  ASSERT_EQ(doc.runtimes.size(), 12u);
  const CoreUtilization& core = doc.runtimes[6].neuroncore_counters->cores[1];
  EXPECT_EQ(core.core, 25u);
  ASSERT_EQ(core.physical.size(), 2u);
  EXPECT_EQ(core.physical[0].index, 50u);
  EXPECT_EQ(core.physical[0].utilization, 89.9550519);
  EXPECT_EQ(core.physical[1].index, 51u);
  EXPECT_TRUE(doc.runtimes[6].collectives_stats->operations.empty());
  EXPECT_TRUE(Golden("trn1.2xlarge_idle").runtimes.empty());
}

TEST(MonitorDocument, ReadsAwsCaptures) {
  const MonitorDocument inf1 = Parse(ReadTestData("aws/inf1_xlarge_full.json"));
  ASSERT_EQ(inf1.runtimes.size(), 1u);
  const MonitorRuntime& old = inf1.runtimes[0];
  EXPECT_EQ(old.tag, "15439");
  EXPECT_FALSE(old.collectives_stats);  // AWS's neuron-monitor has no such group
  EXPECT_EQ(old.neuroncore_counters->cores.size(), 4u);
  EXPECT_EQ(old.neuroncore_counters->cores[0].flops, std::nullopt);  // before Neuron 2.7
  EXPECT_EQ(old.execution_stats->counts.completed, 14u);
  EXPECT_EQ(old.execution_stats->period, 0.062386649);
  EXPECT_EQ(old.memory_used->memory.models[0].name, "1.13.5.0+7dcf000a6-/tmp/tmpg0xeg0mi");

  const MonitorDocument trn1n = Parse(ReadTestData("aws/trn1n_32xlarge_pruned.json"));
  ASSERT_EQ(trn1n.runtimes.size(), 2u);
  const MonitorRuntime& exited = trn1n.runtimes[0];
  EXPECT_EQ(exited.pid, 784315u);
  EXPECT_EQ(exited.tag, "535");
  EXPECT_EQ(exited.neuron_runtime_vcpu_usage->error,
            "open /proc/784315/stat: no such file or directory");
  EXPECT_EQ(exited.execution_stats->total_latency, std::nullopt);  // null: nothing executed
  EXPECT_EQ(exited.execution_stats->error, "");

  const MonitorDocument trn2 = Parse(ReadTestData("aws/trn2_48xlarge_synthesized.json"));
  ASSERT_EQ(trn2.runtimes.size(), 1u);
  EXPECT_EQ(trn2.runtimes[0].neuroncore_counters->cores[3].physical[1].index, 7u);
  EXPECT_EQ(trn2.runtimes[0].memory_used->device_bytes, 61203283968u);
  EXPECT_EQ(trn2.runtimes[0].memory_used->memory.cores.size(), 4u);

  EXPECT_TRUE(Parse(ReadTestData("aws/trn1_2xlarge_no_runtime.json")).runtimes.empty());
}

TEST(MonitorDocument, AbsentGroupsAndErrorsAreKept) {
  const MonitorDocument doc = Parse(R"({"neuron_runtime_data":[
    {"pid":7,"neuron_runtime_tag":"a","error":"","report":{
      "execution_stats":{"period":1,"error":"nrt: timed out"}}},
    {"pid":8,"neuron_runtime_tag":"b","error":"cannot attach to runtime"},
    {"pid":9}]})");
  EXPECT_TRUE(doc.problems.empty());
  ASSERT_EQ(doc.runtimes.size(), 3u);
  const MonitorRuntime& a = doc.runtimes[0];
  EXPECT_FALSE(a.neuroncore_counters || a.memory_used || a.neuron_runtime_vcpu_usage);
  ASSERT_TRUE(a.execution_stats);
  EXPECT_EQ(a.execution_stats->error, "nrt: timed out");
  EXPECT_EQ(a.execution_stats->counts.completed, 0u);
  EXPECT_EQ(doc.runtimes[1].error, "cannot attach to runtime");
  EXPECT_EQ(doc.runtimes[2].tag, "");
  // A document without neuron_runtime_data (only system data) has no runtimes.
  EXPECT_TRUE(Parse(R"({"system_data":{}})").runtimes.empty());
}

TEST(MonitorDocument, MalformedGroupBecomesAnErrorAndLosesOnlyItself) {
  const MonitorDocument doc = Parse(R"({"neuron_runtime_data":[{"pid":7,"report":{
      "execution_stats":{"period":1,"execution_summary":{"completed":"many"},"error":""},
      "neuron_runtime_vcpu_usage":{"period":1,"vcpu_usage":{"user":-3,"system":1},"error":"x"},
      "neuroncore_counters":{"period":"1s","neuroncores_in_use":{"zero":{},"1":{}},"error":""},
      "memory_used":7,
      "collectives_stats":{"period":1,"operations":{"all_reduce":{"count":2},
                                                    "broadcast":{"count":1}},"error":""}}}]})");
  ASSERT_EQ(doc.runtimes.size(), 1u);
  const MonitorRuntime& r = doc.runtimes[0];
  const std::string at = "neuron_runtime_data[0].report.";
  EXPECT_EQ(
      r.execution_stats->error,
      "malformed: " + at + "execution_stats.execution_summary.completed: expected an integer");
  EXPECT_EQ(r.execution_stats->counts.completed, 0u);
  EXPECT_EQ(r.execution_stats->period, 1.0);
  EXPECT_EQ(
      r.neuron_runtime_vcpu_usage->error,
      "x; malformed: " + at +
          "neuron_runtime_vcpu_usage.vcpu_usage.user: must be between 0.0 and 1000000.0 (got -3)");
  EXPECT_EQ(r.neuroncore_counters->error,
            "malformed: " + at + "neuroncore_counters.period: expected a number (and 1 more)");
  EXPECT_EQ(r.neuroncore_counters->period, std::nullopt);
  EXPECT_TRUE(r.neuroncore_counters->cores.empty());
  EXPECT_EQ(r.memory_used->error, "malformed: " + at + "memory_used: expected an object");
  // An operation this build does not know is not an error.
  EXPECT_EQ(r.collectives_stats->error, "");
  ASSERT_EQ(r.collectives_stats->operations.size(), 1u);
  EXPECT_EQ(r.collectives_stats->operations[0].count, 2u);
}

TEST(MonitorDocument, EntriesWithoutAUsablePidAreLeftOutAndReported) {
  const MonitorDocument doc = Parse(R"({"neuron_runtime_data":[
      {"neuron_runtime_tag":"no pid"}, {"pid":"12"}, {"pid":-1}, {"pid":0}, 5, {"pid":3},
      {"pid":3,"neuron_runtime_tag":"again"}, {"pid":4,"report":[]}]})");
  ASSERT_EQ(doc.runtimes.size(), 2u);
  EXPECT_EQ(doc.runtimes[0].pid, 3u);
  EXPECT_EQ(doc.runtimes[1].pid, 4u);
  EXPECT_EQ(doc.problems,
            (std::vector<std::string>{
                "neuron_runtime_data[0].pid: missing",
                "neuron_runtime_data[1].pid: expected an integer",
                "neuron_runtime_data[2].pid: must be between 1 and 2147483647 (got -1)",
                "neuron_runtime_data[3].pid: must be between 1 and 2147483647 (got 0)",
                "neuron_runtime_data[4]: expected an object",
                "neuron_runtime_data[6]: pid 3 listed twice",
                "neuron_runtime_data[7].report: expected an object",
            }));
}

TEST(MonitorDocument, BoundsAreCheckedBeforeTheWork) {
  MonitorLimits small;
  small.max_document_bytes = 64;
  EXPECT_EQ(ParseError(std::string(65, ' ') + "{}", small),
            "document of 67 bytes is larger than the limit of 64 bytes");
  EXPECT_EQ(ParseError(std::string(100, '[') + std::string(100, ']')),
            "document nested deeper than 32 levels");
  // Brackets inside strings are text, not nesting.
  EXPECT_TRUE(ParseMonitorDocument(R"({"x":")" + std::string(100, '[') + R"("})").ok());

  MonitorLimits few;
  few.max_runtimes = 2;
  few.max_cores_per_runtime = 1;
  EXPECT_EQ(
      ParseError(Document({Runtime(1, 1, 0, 0), Runtime(2, 1, 0, 0), Runtime(3, 1, 0, 0)}), few),
      "neuron_runtime_data: 3 entries, more than the limit of 2");
  json two_cores = Runtime(1, 1, 50, 0);
  two_cores["report"]["neuroncore_counters"]["neuroncores_in_use"]["1"] = {
      {"neuroncore_utilization", 1}};
  const MonitorDocument doc = Parse(Document({two_cores}), few);
  EXPECT_EQ(doc.runtimes[0].neuroncore_counters->error.substr(0, 16), "malformed: neuro");
  EXPECT_NE(doc.runtimes[0].neuroncore_counters->error.find(
                "neuroncores_in_use: 2 entries, more than the limit of 1"),
            std::string::npos);
  EXPECT_EQ(doc.runtimes[0].execution_stats->error, "");

  MonitorLimits short_strings;
  short_strings.max_string_bytes = 5;
  json tagged = Runtime(1, 1, 50, 0);
  tagged["neuron_runtime_tag"] = "abcd\u00e9\u00e9";  // cut inside the first é: "abcd"
  EXPECT_EQ(Parse(Document({tagged}), short_strings).runtimes[0].tag, "abcd");

  json far_core = Runtime(1, 1, 50, 0, 70000);  // above max_core_index
  EXPECT_NE(Parse(Document({far_core}))
                .runtimes[0]
                .neuroncore_counters->error.find("neuroncores_in_use.70000: not a core index"),
            std::string::npos);
}

TEST(MonitorDocument, GarbageIsAnErrorNeverACrash) {
  EXPECT_EQ(ParseError("").substr(0, 44), "not JSON: parse error at line 1, column 1: s");
  EXPECT_EQ(ParseError("[]"), "not a JSON object");
  EXPECT_EQ(ParseError("42"), "not a JSON object");
  EXPECT_EQ(ParseError(R"({"neuron_runtime_data":5})"), "neuron_runtime_data: expected an array");
  for (const char* bad : {"not json", "{", R"({"neuron_runtime_data":[)", "{}{}", "\x1b[2J",
                          R"({"a":1e999})", R"({"a":"\ud800"})"}) {
    EXPECT_EQ(ParseError(bad).substr(0, 9), "not JSON:") << bad;
  }
  // Invalid UTF-8 inside a string: refused, and the message itself stays printable ASCII.
  const std::string message = ParseError("{\"neuron_runtime_tag\":\"\xff\xfe\x1b\"}");
  EXPECT_EQ(message.substr(0, 9), "not JSON:");
  for (char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << message;
}

// --- MonitorIntegrator ---

const MonoTime kStart = MonoTime{} + 1000s;

MonitorIntegrator Integrate(const std::vector<std::string>& documents,
                            IntegratorOptions options = {}) {
  MonitorIntegrator integrator(options);
  MonoTime now = kStart;
  for (const std::string& text : documents) {
    integrator.Add(Parse(text), now);
    now += 5s;
  }
  return integrator;
}

TEST(MonitorIntegrator, GoldenDocumentsAddUpExactly) {
  const std::string golden = ReadTestData("neuron_monitor/trn2.48xlarge_mixed.golden");
  IntegratorOptions options;
  options.host_vcpus = 192;
  const MonitorIntegrator integrator = Integrate({golden, golden}, options);
  EXPECT_TRUE(integrator.errors().empty());

  const std::vector<RuntimeSample> runtimes = integrator.Runtimes();
  ASSERT_EQ(runtimes.size(), 12u);
  const RuntimeSample& r = runtimes[0];
  EXPECT_EQ(r.pid, 41200u);
  EXPECT_EQ(r.tag, "llama3-8b-rank0");
  EXPECT_EQ(r.cores, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.executions.completed, 2u);
  EXPECT_EQ(r.total_latency.count(), 2u);
  EXPECT_EQ(r.device_latency.count(), 2u);
  EXPECT_EQ(r.cpu_user_ns, 2 * 7392000000u);  // 0.77 % × 5 s × 192 vCPUs, twice
  EXPECT_EQ(r.cpu_system_ns, 2 * 288000000u);
  const CollectiveCounters& all_reduce = r.collectives[0];
  EXPECT_EQ(all_reduce.kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(all_reduce.count, 828u);
  EXPECT_EQ(all_reduce.bytes, 2 * 27783069696u);
  EXPECT_EQ(all_reduce.busy_ns, 2 * 218118223u);  // time_share 0.0436236446 × 5 s
  EXPECT_EQ(all_reduce.latency.count(), 828u);
  EXPECT_EQ(r.collectives[1].count, 446u);  // all_gather
  EXPECT_EQ(r.collectives[2].count, 0u);
  ASSERT_NE(r.memory, nullptr);
  EXPECT_EQ(r.memory->DeviceTotal(), 30121948400u);
  EXPECT_EQ(r.memory->models[0].subgraphs.size(), 4u);
  EXPECT_TRUE(integrator.Statuses()[0].collectives_available());
  EXPECT_EQ(integrator.Statuses()[6].pid, 88100u);

  const std::map<std::uint32_t, CoreCounters> cores = integrator.Cores();
  ASSERT_EQ(cores.size(), 48u);
  const CoreCounters& core0 = cores.at(0);
  EXPECT_EQ(core0.busy_ns, 2 * 4635064886u);  // 92.70129772 % of 5 s, twice
  EXPECT_EQ(core0.flops, 2 * 455135126450480.0);
  EXPECT_EQ(core0.effective_flops, 2 * 441481192656960.0);
  EXPECT_EQ(core0.physical_busy_ns, (std::vector<std::uint64_t>{2 * 4617639726u, 2 * 4652490047u}));
}

TEST(MonitorIntegrator, LatencyApproximationKeepsTheDocumentsPercentiles) {
  const MonitorDocument doc = Golden("trn2.48xlarge_mixed");
  const LatencyPercentiles& p = *doc.runtimes[6].execution_stats->total_latency;
  MonitorIntegrator integrator;
  integrator.Add(doc, kStart);
  const std::vector<RuntimeSample> runtimes = integrator.Runtimes();
  const RuntimeSample& r = runtimes[6];
  ASSERT_EQ(r.total_latency.count(), 351u);
  ExpectInBucketOf(r.total_latency.Quantile(0), p.p0);
  ExpectInBucketOf(r.total_latency.Quantile(0.01), p.p1);
  ExpectInBucketOf(r.total_latency.Quantile(0.25), p.p25);
  ExpectInBucketOf(r.total_latency.Quantile(0.5), p.p50);
  ExpectInBucketOf(r.total_latency.Quantile(0.75), p.p75);
  ExpectInBucketOf(r.total_latency.Quantile(0.99), p.p99);
  ExpectInBucketOf(r.total_latency.Quantile(1), p.p100);
  // One execution goes to the median point.
  const RuntimeSample& one = runtimes[0];
  ASSERT_EQ(one.total_latency.count(), 1u);
  ExpectInBucketOf(one.total_latency.Quantile(0.5),
                   doc.runtimes[0].execution_stats->total_latency->p50);
}

TEST(MonitorIntegrator, AwsDocumentHasNoCollectivesAndNamesTheCoresInUse) {
  MonitorIntegrator integrator;
  integrator.Add(Parse(ReadTestData("aws/inf1_xlarge_full.json")), kStart);
  const RuntimeSample r = integrator.Runtimes().at(0);
  EXPECT_EQ(r.tag, "15439");
  EXPECT_EQ(r.cores, std::vector<std::uint32_t>{0});  // 1-3 are listed, idle and empty
  EXPECT_EQ(r.executions.completed, 14u);
  EXPECT_EQ(r.cpu_user_ns, 2500952u);  // 4 % of 0.062523811 s
  for (const CollectiveCounters& c : r.collectives) EXPECT_EQ(c.count, 0u);
  const RuntimeStatus status = integrator.Statuses().at(0);
  EXPECT_FALSE(status.collectives_available());
  EXPECT_EQ(status.collectives_stats.error, "");
  EXPECT_TRUE(status.execution_stats.available);
  EXPECT_EQ(integrator.Cores().at(0).busy_ns, 55603628u);  // 89.018... % of 0.062463159 s
  EXPECT_EQ(integrator.Cores().at(0).flops, 0.0);
  EXPECT_EQ(integrator.Cores().size(), 4u);

  // trn1n: each runtime lists every core; each uses the one holding its memory. The inf1
  // document's runtime is not listed any more: gone.
  integrator.Add(Parse(ReadTestData("aws/trn1n_32xlarge_pruned.json")), kStart + 1s);
  ASSERT_EQ(integrator.Runtimes().size(), 2u);
  EXPECT_EQ(integrator.Runtimes().at(0).pid, 784315u);
  EXPECT_EQ(integrator.Runtimes().at(0).cores, std::vector<std::uint32_t>{0});
  EXPECT_EQ(integrator.Runtimes().at(1).cores, std::vector<std::uint32_t>{1});
}

TEST(MonitorIntegrator, GroupAndEntryErrorsAddNothingAndSayWhy) {
  const std::string capture = ReadTestData("aws/trn1n_32xlarge_pruned.json");
  json entry_error = Runtime(9, 1, 50, 3);
  entry_error["error"] = "lost connection to runtime";
  MonitorIntegrator integrator = Integrate({capture, Document({entry_error})});
  // The second document does not list the first two: they have gone.
  const std::vector<RuntimeSample> runtimes = integrator.Runtimes();
  ASSERT_EQ(runtimes.size(), 1u);
  EXPECT_EQ(runtimes[0].pid, 9u);
  EXPECT_EQ(runtimes[0].error, "lost connection to runtime");
  EXPECT_EQ(runtimes[0].executions.completed, 0u);
  EXPECT_EQ(integrator.Cores().count(0), 1u);  // from the capture; nothing from pid 9
  EXPECT_EQ(integrator.Cores().at(0).busy_ns, 0u);
  EXPECT_EQ(integrator.errors(), std::vector<std::string>{"pid 9: lost connection to runtime"});

  integrator = Integrate({capture});
  EXPECT_EQ(integrator.errors(),
            (std::vector<std::string>{
                "pid 784315 neuron_runtime_vcpu_usage: open /proc/784315/stat: no such file or "
                "directory",
                "pid 784318 neuron_runtime_vcpu_usage: open /proc/784318/stat: no such file or "
                "directory"}));
  const RuntimeStatus status = integrator.Statuses()[0];
  EXPECT_FALSE(status.neuron_runtime_vcpu_usage.available);
  EXPECT_EQ(status.neuron_runtime_vcpu_usage.error,
            "open /proc/784315/stat: no such file or directory");
  EXPECT_TRUE(status.memory_used.available);
}

TEST(MonitorIntegrator, GroupsWithoutASanePeriodAreSkippedWithAReason) {
  json zero = Runtime(1, 0, 50, 3);
  json negative = Runtime(2, -1, 50, 3);
  json hours = Runtime(3, 7200, 50, 3);
  json missing = Runtime(4, 1, 50, 3);
  missing["report"]["execution_stats"].erase("period");
  json fine = Runtime(5, 2, 50, 3, 1);
  const MonitorIntegrator integrator =
      Integrate({Document({zero, negative, hours, missing, fine})});
  EXPECT_EQ(integrator.errors(),
            (std::vector<std::string>{
                "pid 1 neuroncore_counters: period 0 is not in (0, 3600] seconds; figures skipped",
                "pid 1 execution_stats: period 0 is not in (0, 3600] seconds; figures skipped",
                "pid 2 neuroncore_counters: period -1 is not in (0, 3600] seconds; figures "
                "skipped",
                "pid 2 execution_stats: period -1 is not in (0, 3600] seconds; figures skipped",
                "pid 3 neuroncore_counters: period 7200 is not in (0, 3600] seconds; figures "
                "skipped",
                "pid 3 execution_stats: period 7200 is not in (0, 3600] seconds; figures skipped",
                "pid 4 execution_stats: period missing; figures skipped"}));
  const std::vector<RuntimeSample> runtimes = integrator.Runtimes();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(runtimes[i].executions.completed, 0u) << i;
  EXPECT_EQ(runtimes[4].executions.completed, 3u);
  EXPECT_EQ(integrator.Cores().at(0).busy_ns, 500000000u);  // pid 4's core counters were fine
  EXPECT_EQ(integrator.Cores().at(1).busy_ns, 1000000000u);
  EXPECT_EQ(integrator.Statuses()[0].execution_stats.error,
            "period 0 is not in (0, 3600] seconds; figures skipped");
}

// A runtime the newest document does not list has exited, and its pid may be another process's
// by now: it leaves the reports at once, and a later runtime with that pid starts from zero.
TEST(MonitorIntegrator, RuntimeTheNewestDocumentDoesNotListIsDroppedAtOnce) {
  MonitorIntegrator integrator;
  integrator.Add(Parse(Document({Runtime(10, 5, 20, 1), Runtime(11, 5, 40, 2, 1)})), kStart);
  ASSERT_EQ(integrator.Runtimes().size(), 2u);
  integrator.Add(Parse(Document({Runtime(11, 5, 40, 2, 1)})), kStart + 5s);
  ASSERT_EQ(integrator.Runtimes().size(), 1u);
  EXPECT_EQ(integrator.Runtimes()[0].pid, 11u);
  EXPECT_EQ(integrator.Runtimes()[0].executions.completed, 4u);
  EXPECT_EQ(integrator.Statuses().size(), 1u);
  // The cores' counters stay: they only grow.
  EXPECT_EQ(integrator.Cores().at(0).busy_ns, 1000000000u);
  EXPECT_EQ(integrator.Cores().at(1).busy_ns, 4000000000u);
  integrator.Add(Parse(Document({Runtime(10, 5, 20, 3)})), kStart + 10s);
  ASSERT_EQ(integrator.Runtimes().size(), 1u);
  EXPECT_EQ(integrator.Runtimes()[0].pid, 10u);
  EXPECT_EQ(integrator.Runtimes()[0].executions.completed, 3u);  // not 1 + 3
  integrator.Add(Parse(Document({})), kStart + 15s);
  EXPECT_TRUE(integrator.Runtimes().empty());
}

// A child that lists new pids in every document grows nothing: what is tracked is what the newest
// document lists, at most max_runtimes of it (the lowest pids), the rest counted.
TEST(MonitorIntegrator, ANewPidFloodIsBoundedAndCounted) {
  IntegratorOptions options;
  options.max_runtimes = 3;
  MonitorIntegrator integrator(options);
  for (std::uint32_t k = 0; k < 50; ++k) {
    std::vector<json> runtimes;
    for (std::uint32_t i = 0; i < 5; ++i)
      runtimes.push_back(Runtime(static_cast<int>(1000 + 5 * k + i), 1, 10, 1));
    integrator.Add(Parse(Document(runtimes)), kStart + k * 1s);
    ASSERT_EQ(integrator.Runtimes().size(), 3u) << k;
    EXPECT_EQ(integrator.Runtimes()[0].pid, 1000 + 5 * k) << k;
  }
  EXPECT_EQ(integrator.dropped(), 100u);
  EXPECT_EQ(integrator.Statuses().size(), 3u);
}

// A runtime entry listing `utilization` per core: the cores of the host neuron-monitor lists for
// every runtime, most at 0 (AWS's capture trn1n_32xlarge_pruned).
json RuntimeOnCores(int pid, double period, const std::map<int, double>& utilization) {
  json cores = json::object();
  for (const auto& [core, percent] : utilization) {
    cores[std::to_string(core)] = {{"neuroncore_utilization", percent},
                                   {"flops", percent * 1e12},
                                   {"effective_flops", percent * 1e12}};
  }
  return {{"pid", pid},
          {"neuron_runtime_tag", std::to_string(pid)},
          {"error", ""},
          {"report",
           {{"neuroncore_counters",
             {{"period", period}, {"neuroncores_in_use", cores}, {"error", ""}}}}}};
}

// Two runtimes on one core (50 % and 25 % of it): the core is 75 % busy — their sum, whichever
// order neuron-monitor lists them in; and a runtime listing 0 for a core another keeps busy
// (neuron-monitor lists every core for every runtime) takes nothing from it.
TEST(MonitorIntegrator, RuntimesSharingACoreAddUpAndAZeroTakesNothing) {
  for (bool reversed : {false, true}) {
    std::vector<json> runtimes = {RuntimeOnCores(100, 2, {{0, 50}, {1, 80}, {2, 0}}),
                                  RuntimeOnCores(200, 2, {{0, 25}, {1, 0}, {2, 0}})};
    if (reversed) std::swap(runtimes[0], runtimes[1]);
    const MonitorIntegrator integrator = Integrate({Document(runtimes), Document(runtimes)});
    const std::map<std::uint32_t, CoreCounters> cores = integrator.Cores();
    // Two documents of 2 s each.
    EXPECT_EQ(cores.at(0).busy_ns, 3'000'000'000u) << "75 % of 4 s; reversed " << reversed;
    EXPECT_EQ(cores.at(1).busy_ns, 3'200'000'000u) << "80 % of 4 s; reversed " << reversed;
    EXPECT_EQ(cores.at(2).busy_ns, 0u);
    EXPECT_DOUBLE_EQ(cores.at(0).flops, 75e12 * 4);
    EXPECT_DOUBLE_EQ(cores.at(1).effective_flops, 80e12 * 4);
  }
}

// neuron-monitor before Neuron 2.7 (AWS's inf1 capture) has no flops, before 2.9 no
// effective_flops: its cores' FLOPs are not measured, not 0.
TEST(MonitorIntegrator, DocumentsWithoutFlopsSaySo) {
  EXPECT_FALSE(Integrate({Document({Runtime(1, 1, 50, 0)})}).flops_reported());
  EXPECT_TRUE(Integrate({Document({RuntimeOnCores(1, 1, {{0, 50}})})}).flops_reported());
  json no_effective = RuntimeOnCores(1, 1, {{0, 50}});
  no_effective["report"]["neuroncore_counters"]["neuroncores_in_use"]["0"].erase("effective_flops");
  EXPECT_FALSE(Integrate({Document({no_effective})}).flops_reported());
  // The latest document decides.
  EXPECT_TRUE(Integrate({Document({Runtime(1, 1, 50, 0)}), Document({RuntimeOnCores(1, 1, {})})})
                  .flops_reported());
  MonitorIntegrator aws;
  aws.Add(Parse(ReadTestData("aws/inf1_xlarge_full.json")), kStart);
  EXPECT_FALSE(aws.flops_reported());
}

TEST(MonitorIntegrator, CoreListedByTwoRuntimesIsCappedAtItsPeriod) {
  const MonitorIntegrator integrator =
      Integrate({Document({Runtime(1, 2, 70, 0), Runtime(2, 1, 80, 0), Runtime(3, 1, 130, 0, 1)})});
  // 70 % of 2 s + 80 % of 1 s = 2.2 s: capped at the longer period.
  EXPECT_EQ(integrator.Cores().at(0).busy_ns, 2000000000u);
  EXPECT_EQ(integrator.Cores().at(1).busy_ns, 1000000000u);  // 130 % is read as 100 %
}

}  // namespace
}  // namespace neuronmon::neurondev
