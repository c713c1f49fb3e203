// The bottleneck analyzer against ground truth: every built-in scenario must get its declared
// verdict within 10 s of the scripted time and keep it, verdicts follow a change within 10 s, and
// hangs, memory pressure and the kubelet's allocations are named as they are. The generated
// variants are analyzer_variants_test.cc's. Simulated time only; nothing sleeps.
#include "daemon/core/analysis/analyzer.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>

#include "daemon/core/daemon_core.h"
#include "daemon/core/report/report_builder.h"
#include "proto/names/names.h"
#include "simdev/collective_model.h"
#include "simdev/instance.h"
#include "simdev/job.h"
#include "simdev/scenario_library.h"
#include "tests/daemon/analyzer_sim_run.h"

namespace neuronmon::daemon {
namespace {

using sim_run::FalseEvidence;
using sim_run::SimRun;
using sim_run::Verdict;
using std::chrono::seconds;

// which only an instance without applications gets.
TEST(Analyzer, UnjudgedApplicationsAreCollectingDataNotAbsent) {
  for (const char* name : {"healthy-training", "idle"}) {
    simdev::Scenario scenario = *simdev::LoadScenario(name);
    SimRun run(*simdev::FindPreset(scenario.instance), scenario);
    const Analysis& first = run.At(0);
    EXPECT_EQ(first.instance.kind(), v1::FINDING_KIND_UNSPECIFIED) << name;
    v1::Subscribe request;
    request.add_groups()->set_group(v1::GROUP_BOTTLENECK_ANALYSIS);
    auto sub = Subscription::FromRequest(request, seconds(1));
    ASSERT_TRUE(sub.ok());
    auto report = run.core->ReportAt(*sub, run.core->history().newest_seq(), ReportScope::kFirst);
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->findings_size(), 0) << name << ": a finding before any evaluation";
    const Analysis& second = run.At(1);
    EXPECT_EQ(second.instance.kind(), v1::FINDING_KIND_HEALTHY) << name;
    EXPECT_EQ(second.instance.summary(),
              std::string(name) == "idle" ? "no Neuron application is running" : "collecting data")
        << name;
  }
}

// The figures a report over a window shows for one runtime, read the way a user reads them: mean
// core utilization, collective time share, mean HBM bandwidth of its devices, FLOP/s against the
// cores' BF16 peak, failed executions and corrected errors.
std::map<std::string, double> ReportFigures(const v1::Report& report, std::uint32_t pid,
                                            const v1::Inventory& inv) {
  std::map<std::string, double> out;
  const std::uint32_t per = std::max(1u, inv.hardware_info().neuroncore_per_device_count());
  for (const v1::RuntimeReport& r : report.runtimes()) {
    if (r.pid() != pid) continue;
    double busy = 0, flops = 0, peak = 0;
    std::set<std::uint32_t> devices;
    for (const v1::CoreCounters& c : r.neuroncore_counters().cores()) {
      busy += c.utilization_percent();
      flops += c.flops();
      devices.insert(c.index() / per);
      peak += inv.devices(static_cast<int>(c.index() / per)).peak_flops().bf16() / per;
    }
    const double u = busy / std::max(1, r.neuroncore_counters().cores_size());
    out["utilization_percent"] = u;
    out["flops_percent_of_peak"] = 100 * flops / peak;
    double hbm = 0;
    for (std::uint32_t d : devices)
      hbm +=
          report.system().hbm_stats().devices(static_cast<int>(d)).bandwidth_utilization_percent();
    out["hbm_bandwidth_percent"] = hbm / static_cast<double>(devices.size());
    const double share = r.collectives_stats().time_share();
    out["collective_time_share_percent"] = 100 * share;
    out["idle_between_executions_percent"] = 100 * std::max(0.0, 1 - u / 100 - share);
    const v1::ExecutionSummary& e = r.execution_stats().execution_summary();
    out["failed_executions"] = static_cast<double>(
        e.completed_with_err() + e.completed_with_num_err() + e.timed_out() + e.failed_to_queue() +
        e.incorrect_input() + r.execution_stats().error_summary().hardware());
    out["corrected_errors"] = static_cast<double>(r.execution_stats().error_summary().transient());
    out["process_cpus"] = (r.vcpu_usage().user_percent() + r.vcpu_usage().system_percent()) / 100 *
                          std::max(1.0, static_cast<double>(inv.host_vcpu_count()));
    // The fullest device it holds memory on.
    double fullest = 0;
    for (const v1::CoreMemory& m : r.memory_used().cores()) {
      const v1::DeviceHbm& d =
          report.system().hbm_stats().devices(static_cast<int>(m.index() / per));
      const std::uint64_t held = m.constants() + m.model_code() + m.model_shared_scratchpad() +
                                 m.runtime_memory() + m.tensors();
      if (held > 0 && d.total_bytes() > 0) {
        fullest = std::max(fullest, 100 * static_cast<double>(d.used_bytes()) /
                                        static_cast<double>(d.total_bytes()));
      }
    }
    out["hbm_used_percent"] = fullest;
  }
  return out;
}

// The Diagnosis's evidence is the report's figures: for every scenario and evaluation, each
// candidate's evidence equals what a report over the analyzer's window shows for that runtime.
TEST(Analyzer, EvidenceEqualsTheReportOverTheSameWindow) {
  std::size_t compared = 0;
  std::set<std::string> names;
  for (const simdev::BuiltinScenario& b : simdev::BuiltinScenarios()) {
    simdev::Scenario scenario = *simdev::LoadScenario(b.name);
    SimRun run(*simdev::FindPreset(scenario.instance), scenario);
    for (int t = 0; t <= 200; ++t) {  // ecc-degradation fails executions from 3 min on
      run.At(t);
      const Analyzer::Evaluation& e = run.core->analyzer().last_evaluation();
      if (e.candidates.empty()) continue;
      const Snapshot* start = run.core->history().Find(e.start_seq);
      const Snapshot* end = run.core->history().Find(e.end_seq);
      ASSERT_NE(start, nullptr);
      ASSERT_NE(end, nullptr);
      ReportInput in;
      in.inventory = &run.core->inventory();
      in.end = end;
      for (v1::Group g : AllGroups()) in.groups.push_back({g, start});
      const v1::Report report = BuildReport(in);
      for (const auto& [pid, candidate] : e.candidates) {
        // A hang's evidence is about progress since the last completed execution, not a figure
        // of the window's report.
        if (candidate.kind() == v1::FINDING_KIND_HANG) continue;
        const std::map<std::string, double> figures =
            ReportFigures(report, pid, run.core->inventory());
        for (const v1::Evidence& ev : candidate.evidence()) {
          // Idle time is counted from when the runtime stopped, not over the window.
          if (ev.name() == "idle_seconds") continue;
          auto it = figures.find(ev.name());
          ASSERT_NE(it, figures.end()) << "no report figure for evidence " << ev.name();
          EXPECT_DOUBLE_EQ(ev.value(), it->second)
              << b.name << " at " << t << "s, pid " << pid << ": " << ev.name();
          ++compared;
          names.insert(ev.name());
        }
      }
    }
  }
  // Every kind of evidence was compared, many times.
  EXPECT_EQ(names, (std::set<std::string>{
                       "collective_time_share_percent", "corrected_errors", "failed_executions",
                       "flops_percent_of_peak", "hbm_bandwidth_percent", "hbm_used_percent",
                       "idle_between_executions_percent", "process_cpus", "utilization_percent"}));
  EXPECT_GE(compared, 10000u);
}

TEST(Analyzer, EveryScenarioGetsItsDeclaredVerdictAndKeepsIt) {
  std::size_t checked = 0;
  for (const simdev::BuiltinScenario& b : simdev::BuiltinScenarios()) {
    simdev::Scenario scenario = *simdev::LoadScenario(b.name);
    SimRun run(*simdev::FindPreset(scenario.instance), scenario);
    const int end = 300;
    // A segment: one pid expecting one verdict from `from` on.
    struct Segment {
      std::uint32_t pid = 0;
      std::string expected;
      int from = 0;
      int matched_at = -1;
      int misses_after = 0;
      std::string last_wrong;
    };
    std::vector<Segment> segments;
    std::map<std::uint32_t, std::size_t> current;  // pid -> index of its open segment
    for (int t = 0; t <= end; ++t) {
      const Analysis& a = run.At(t);
      std::string example;
      EXPECT_EQ(FalseEvidence(a, &example), 0) << b.name << " at " << t << "s: " << example;
      for (const simdev::ExpectedVerdict& e : run.truth->Expected(seconds(t))) {
        if (e.diagnosis.empty()) continue;
        auto it = current.find(e.pid);
        if (it == current.end() || segments[it->second].expected != e.diagnosis) {
          segments.push_back(Segment{e.pid, e.diagnosis, t, -1, 0, ""});
          current[e.pid] = segments.size() - 1;
        }
        Segment& s = segments[current[e.pid]];
        const std::string v = Verdict(a, e.pid);
        if (v == e.diagnosis) {
          if (s.matched_at < 0) s.matched_at = t;
        } else if (s.matched_at >= 0) {
          ++s.misses_after;
          s.last_wrong = v + " at " + std::to_string(t);
        }
      }
    }
    // Every runtime of the scenario and the instance have an expectation to check.
    EXPECT_GE(segments.size(), run.truth->Expected(seconds(end)).size()) << b.name;
    checked += segments.size();
    for (const Segment& s : segments) {
      const std::string who =
          std::string(b.name) + " pid " + std::to_string(s.pid) + " expecting " + s.expected;
      ASSERT_GE(s.matched_at, 0) << who << ": never reached";
      EXPECT_LE(s.matched_at - s.from, 10) << who << ": reached only at " << s.matched_at;
      EXPECT_EQ(s.misses_after, 0) << who << ": changed away (last: " << s.last_wrong << ")";
    }
  }
  // 11 scenarios: 16 + 1 + 16 + 16 + 16 + 16 + 16 + 18 (ecc: rank 3 twice) + 12 + 16 + 1 runtimes,
  // plus an instance expectation for each.
  EXPECT_GE(checked, 150u);
}

}  // namespace
}  // namespace neuronmon::daemon

namespace neuronmon::daemon {
namespace {

// How fast verdicts follow the workload, at 1 Hz: healthy training runs for a minute, then a fault
// starts at a known time (and, for a slowdown, ends a minute later). The instance verdict must
// change within 10 s of each change, on trn1, trn1n and trn2 — and the healthy minute before must
// not flap (checkpoints and slow steps included).
TEST(Analyzer, VerdictsFollowAChangeWithin10Seconds) {
  struct Change {
    std::string expect;
    simdev::FaultSpec fault;
    bool ends = false;  // the fault ends at 120 s and the verdict must return to healthy
  };
  std::vector<Change> changes;
  simdev::FaultSpec slow;
  slow.type = simdev::FaultType::kSlowdown;
  slow.device = 3;
  slow.factor = 1.35;
  changes.push_back({"straggler", slow, true});
  simdev::FaultSpec nan;
  nan.type = simdev::FaultType::kNanErrors;
  nan.runtime = "train";
  nan.per_second = 0.5;
  changes.push_back({"errors", nan, false});
  simdev::FaultSpec timeouts;
  timeouts.type = simdev::FaultType::kTimeouts;
  timeouts.runtime = "train";
  timeouts.per_second = 0.5;
  changes.push_back({"errors", timeouts, false});
  simdev::FaultSpec hang;
  hang.type = simdev::FaultType::kHang;
  hang.runtime = "train";
  hang.rank = 5;
  changes.push_back({"hang", hang, false});
  // Workload changes: the input pipeline slows (a dataloader lost its workers), the fabric is
  // congested, the kernels move far more bytes (recomputation or smaller tiles after a change),
  // the process stops submitting work while it holds its cores.
  simdev::FaultSpec input;
  input.type = simdev::FaultType::kInputSlowdown;
  input.runtime = "train";
  input.factor = 40;
  changes.push_back({"input_bound", input, true});
  simdev::FaultSpec network;
  network.type = simdev::FaultType::kNetworkSlowdown;
  network.runtime = "train";
  network.factor = 40;
  changes.push_back({"collective_bound", network, true});
  simdev::FaultSpec traffic;
  traffic.type = simdev::FaultType::kHbmTraffic;
  traffic.runtime = "train";
  traffic.factor = 10;
  changes.push_back({"hbm_bound", traffic, true});
  simdev::FaultSpec stall;
  stall.type = simdev::FaultType::kStall;
  stall.runtime = "train";
  changes.push_back({"idle_allocated", stall, true});
  std::string report;
  for (const char* preset : {"trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge"}) {
    for (Change c : changes) {
      simdev::Scenario scenario = *simdev::LoadScenario("healthy-training");
      c.fault.start = seconds(60);
      if (c.ends) c.fault.end = seconds(120);
      scenario.faults.push_back(c.fault);
      SimRun run(*simdev::FindPreset(preset), scenario);
      const std::string who = std::string(preset) + " " + c.expect;
      int onset = -1, recovery = -1;
      std::string stuck;
      for (int t = 0; t <= 180; ++t) {
        const Analysis& a = run.At(t);
        const std::string v = Verdict(a, 0);
        if (v == "hang" && stuck.empty()) stuck = a.instance.straggler();
        if (t >= 60 && onset < 0 && v == c.expect) onset = t - 60;
        if (c.ends && t >= 120 && recovery < 0 && v == "healthy") recovery = t - 120;
        // Healthy until the change shows, then the expected verdict, then (when the fault ends)
        // healthy again: no detour through another verdict, no flapping.
        if (t >= 40 && onset < 0) {
          EXPECT_EQ(v, "healthy") << who << " before the change showed, at " << t;
        } else if (onset >= 0 && (!c.ends || recovery < 0)) {
          EXPECT_EQ(v, c.expect) << who << " flapped at " << t;
        } else if (recovery >= 0) {
          EXPECT_EQ(v, "healthy") << who << " flapped after recovering, at " << t;
        }
      }
      report += "  " + who + ": " + std::to_string(onset) + " s" +
                (c.ends ? ", back to healthy " + std::to_string(recovery) + " s" : "") + "\n";
      EXPECT_GE(onset, 0) << who << ": never reported";
      EXPECT_LE(onset, 10) << who;
      if (c.expect == "hang") {
        // The rank that stopped joining is named: its worker's tag ends in "rank5".
        EXPECT_EQ(stuck.size() >= 5 ? stuck.substr(stuck.size() - 5) : stuck, "rank5") << who;
      }
      if (c.ends) {
        EXPECT_GE(recovery, 0) << who << ": never healthy again";
        EXPECT_LE(recovery, 10) << who << " recovery";
      }
    }
  }
  std::printf("verdict delays at 1 Hz:\n%s", report.c_str());
}

// What must not change a verdict that fast: a checkpoint every 15 steps (2 s of idle cores and a
// busy host, which darkens every 5 s window that holds it) and slow steps (8% step-to-step noise).
// Healthy training stays healthy from 40 s to 4 min on each instance type — while the windows'
// own candidates do dip, which the test counts to show it saw checkpoints.
TEST(Analyzer, CheckpointsAndSlowStepsDoNotChangeAHealthyVerdict) {
  for (const char* preset : {"trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge"}) {
    simdev::Scenario scenario = *simdev::LoadScenario("healthy-training");
    auto& training = std::get<simdev::TrainingSpec>(scenario.runtimes.at(0).workload);
    training.checkpoint_every_steps = 15;
    training.checkpoint_duration = seconds(2);
    training.noise = 0.08;
    SimRun run(*simdev::FindPreset(preset), scenario);
    int dips = 0;
    for (int t = 0; t <= 240; ++t) {
      const Analysis& a = run.At(t);
      if (t < 40) continue;
      EXPECT_EQ(Verdict(a, 0), "healthy") << preset << " at " << t;
      bool dipped = false;
      for (const auto& [pid, candidate] : run.core->analyzer().last_evaluation().candidates)
        dipped = dipped || candidate.kind() != v1::FINDING_KIND_HEALTHY;
      dips += dipped ? 1 : 0;
    }
    EXPECT_GE(dips, 10) << preset << ": no checkpoint darkened a window";
  }
}

// cluster-hang as two of its four daemons see it: node 3, where rank 5 stopped joining, names that
// rank; node 0, where every rank waits, says the stuck rank is on another host. Both within 10 s.
TEST(Analyzer, ClusterHangIsNamedOnTheStuckNodeAndSeenOnTheOthers) {
  for (int node : {0, 3}) {
    simdev::Scenario scenario = *simdev::LoadScenario("cluster-hang");
    scenario.node = node;
    SimRun run(*simdev::FindPreset("trn1.32xlarge"), scenario);
    int onset = -1;
    v1::Finding verdict;
    for (int t = 0; t <= 140; ++t) {
      const Analysis& a = run.At(t);
      if (t >= 40 && t < 120) {
        EXPECT_EQ(Verdict(a, 0), "healthy") << "node " << node << " " << t;
      }
      if (t >= 120 && onset < 0 && Verdict(a, 0) == "hang") {
        onset = t - 120;
        verdict = a.instance;
      }
    }
    ASSERT_GE(onset, 0) << "node " << node;
    EXPECT_LE(onset, 10) << "node " << node;
    EXPECT_EQ(verdict.severity(), v1::SEVERITY_CRITICAL);
    if (node == 3) {
      EXPECT_EQ(verdict.straggler(), "llama3-8b-node3-rank5");
      EXPECT_NE(verdict.summary().find("llama3-8b-node3-rank5 has not joined all_reduce for"),
                std::string::npos)
          << verdict.summary();
    } else {
      EXPECT_EQ(verdict.straggler(), "");
      EXPECT_NE(verdict.summary().find("on another host"), std::string::npos) << verdict.summary();
    }
  }
}

// The hang carries as structure what its summary says of the stuck rank (Finding.hang), on each
// runtime's finding and on the instance summary — what neuron-top's cluster view reads.
TEST(Analyzer, ClusterHangCarriesTheStuckRankAsStructure) {
  for (int node : {0, 3}) {
    simdev::Scenario scenario = *simdev::LoadScenario("cluster-hang");
    scenario.node = node;
    SimRun run(*simdev::FindPreset("trn1.32xlarge"), scenario);
    Analysis hung;
    for (int t = 0; t <= 140 && hung.instance.kind() != v1::FINDING_KIND_HANG; ++t)
      hung = run.At(t);
    const v1::Finding& instance = hung.instance;
    ASSERT_EQ(instance.kind(), v1::FINDING_KIND_HANG) << "node " << node;
    ASSERT_TRUE(instance.has_hang()) << "node " << node;
    EXPECT_EQ(instance.hang().operation(), v1::COLLECTIVE_OP_ALL_REDUCE);
    EXPECT_EQ(instance.hang().stuck_rank(), instance.straggler());
    if (node == 3) {
      EXPECT_EQ(instance.hang().stuck_rank(), "llama3-8b-node3-rank5");
      EXPECT_GE(instance.hang().stuck_seconds(), 3) << "at least hang_min";
      // The words people read say what the structure says.
      EXPECT_NE(instance.summary().find(StuckRankClause(instance.hang())), std::string::npos)
          << instance.summary();
    } else {
      EXPECT_EQ(instance.hang().stuck_seconds(), 0);
    }
    for (const auto& [pid, findings] : hung.runtimes) {
      const v1::Finding& f = findings.front();
      if (f.kind() != v1::FINDING_KIND_HANG) continue;
      EXPECT_EQ(f.hang().operation(), v1::COLLECTIVE_OP_ALL_REDUCE) << f.subject();
      EXPECT_EQ(f.hang().stuck_rank(), f.straggler()) << f.subject();
      EXPECT_EQ(f.hang().stuck_rank().empty(), node == 0) << f.subject();
    }
  }
}

// Memory pressure names the full device, what the runtime holds there and the neighbour holding
// the most besides it; an idle neighbour keeps its own idle_allocated verdict; the pressure
// lifts only once the device is 3 points below the threshold.
TEST(Analyzer, MemoryPressureNamesTheDeviceAndWhoHoldsIt) {
  Result<simdev::Scenario> scenario = simdev::ParseScenario(R"({
    "name": "pressure",
    "instance": "inf2.48xlarge",
    "runtimes": [
      {"name": "serve", "tag": "serve", "pid": 700, "workers": "single", "devices": [0],
       "load": "5s", "inference": {"parameters": 7.0e9, "requests_per_second": 40}},
      {"name": "notebook", "tag": "notebook", "pid": 900, "workers": "single", "devices": [1],
       "load": "5s", "idle": {}}
    ],
    "faults": [{"type": "memory_growth", "runtime": "serve", "start": "20s", "end": "60s",
                "bytes_per_second": 2000000000}]
  })",
                                                            "pressure.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  SimRun run(*simdev::FindPreset("inf2.48xlarge"), *scenario);
  v1::Finding pressure;
  int onset = -1;
  for (int t = 0; t <= 70 && onset < 0; ++t) {
    const Analysis& a = run.At(t);
    if (Verdict(a, 700) == "memory_pressure") {
      onset = t;
      pressure = a.runtimes.at(700).front();
      EXPECT_EQ(Verdict(a, 0), "memory_pressure") << a.instance.summary();
      EXPECT_EQ(Verdict(a, 900), "idle_allocated");
    }
  }
  ASSERT_GE(onset, 0) << "never said";
  EXPECT_EQ(pressure.severity(), v1::SEVERITY_WARNING);
  EXPECT_NE(pressure.summary().find("nd0 HBM "), std::string::npos) << pressure.summary();
  EXPECT_NE(pressure.summary().find("% full ("), std::string::npos) << pressure.summary();
  EXPECT_NE(pressure.summary().find("most of it tensors"), std::string::npos) << pressure.summary();
  EXPECT_NE(pressure.advice().find("free device memory"), std::string::npos);
  ASSERT_FALSE(pressure.evidence().empty());
  bool cited = false;
  for (const v1::Evidence& e : pressure.evidence()) {
    if (e.name() != "hbm_used_percent") continue;
    cited = true;
    EXPECT_GE(e.value(), 90);
    EXPECT_EQ(e.threshold(), 90);
  }
  EXPECT_TRUE(cited);
}

TEST(Analyzer, MemoryPressureNamesTheNeighbourOnTheSameDevice) {
  // Two workers of one server on the two cores of device 0: each names the other.
  Result<simdev::Scenario> scenario = simdev::ParseScenario(R"({
    "name": "pressure",
    "instance": "inf2.48xlarge",
    "runtimes": [
      {"name": "serve", "tag": "serve{rank}", "pid": 700, "workers": "per_core", "devices": [0],
       "load": "5s", "inference": {"parameters": 3.0e9, "requests_per_second": 5}}
    ],
    "faults": [{"type": "memory_growth", "runtime": "serve", "start": "20s",
                "bytes_per_second": 2000000000}]
  })",
                                                            "pressure.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  SimRun run(*simdev::FindPreset("inf2.48xlarge"), *scenario);
  for (int t = 0; t <= 60; ++t) {
    const Analysis& a = run.At(t);
    if (Verdict(a, 700) != "memory_pressure") continue;
    const std::string& summary = a.runtimes.at(700).front().summary();
    EXPECT_NE(summary.find("; pid 701 (serve1) holds "), std::string::npos) << summary;
    return;
  }
  FAIL() << "never said";
}

// Allocated versus used, with the kubelet's allocations in the inventory: an idle pod's runtime
// names its pod, a runtime on devices no pod was allocated gets `unallocated` after its verdict,
// and a pod allocated devices nothing uses is told on its own, after the instance summary.
TEST(Analyzer, KubernetesAllocationsAreComparedWithUse) {
  Result<simdev::Scenario> scenario = simdev::ParseScenario(R"({
    "name": "pods",
    "instance": "inf2.48xlarge",
    "runtimes": [
      {"name": "serve", "tag": "serve", "pid": 700, "workers": "single", "devices": [0],
       "pod": "vllm-0", "namespace": "inference", "container": "vllm",
       "load": "5s", "inference": {"parameters": 7.0e9, "requests_per_second": 5}},
      {"name": "notebook", "tag": "notebook", "pid": 900, "workers": "single", "devices": [1],
       "pod": "notebook-0", "namespace": "research", "container": "jupyter",
       "load": "5s", "idle": {}},
      {"name": "rogue", "tag": "rogue", "pid": 950, "workers": "single", "devices": [2],
       "load": "5s", "inference": {"parameters": 7.0e9, "requests_per_second": 5}}
    ]
  })",
                                                            "pods.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  const auto allocate = [](v1::Inventory& inv) {
    const auto add = [&](const char* ns, const char* pod, std::uint32_t device) {
      v1::PodAllocation* a = inv.add_allocations();
      a->set_namespace_(ns);
      a->set_pod(pod);
      a->set_container("main");
      a->set_resource_name("aws.amazon.com/neuron");
      a->add_device_indices(device);
    };
    add("inference", "vllm-0", 0);
    add("research", "notebook-0", 1);
    add("batch", "forgotten-0", 5);
  };
  SimRun run(*simdev::FindPreset("inf2.48xlarge"), *scenario, 1, allocate);
  const Analysis* a = nullptr;
  for (int t = 0; t <= 40; ++t) a = &run.At(t);
  ASSERT_EQ(Verdict(*a, 900), "idle_allocated");
  EXPECT_NE(
      a->runtimes.at(900).front().summary().find("; pod research/notebook-0 (container jupyter)"),
      std::string::npos)
      << a->runtimes.at(900).front().summary();
  // The rogue process: its verdict, then unallocated.
  const std::vector<v1::Finding>& rogue = a->runtimes.at(950);
  ASSERT_EQ(rogue.size(), 2u);
  EXPECT_EQ(rogue.back().kind(), v1::FINDING_KIND_UNALLOCATED);
  EXPECT_EQ(rogue.back().summary(), "uses nd2, which Kubernetes allocated to no pod");
  for (const v1::Finding& f : a->runtimes.at(700))
    EXPECT_NE(f.kind(), v1::FINDING_KIND_UNALLOCATED);
  ASSERT_EQ(a->allocations.size(), 1u);
  EXPECT_EQ(a->allocations[0].subject(), "pod batch/forgotten-0");
  EXPECT_EQ(a->allocations[0].summary(),
            "pod batch/forgotten-0 (container main) was allocated nd5 but no Neuron application "
            "runs on them");
  // Its `since` holds from one evaluation to the next.
  const std::int64_t since = a->allocations[0].since_unix_ns();
  a = &run.At(41);
  ASSERT_EQ(a->allocations.size(), 1u);
  EXPECT_EQ(a->allocations[0].since_unix_ns(), since);
  std::string example;
  EXPECT_EQ(FalseEvidence(*a, &example), 0) << example;
}

}  // namespace
}  // namespace neuronmon::daemon
