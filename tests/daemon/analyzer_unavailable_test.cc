// The analyzer on a backend that cannot measure some signals: it never reads their zeros as
// readings (no hbm_bound without HBM traffic, no idle_allocated without utilization, no
// collective- or input-bound without collectives), its findings say which signals they were
// reached without, and an application no rule can judge gets no verdict, which the instance
// summary names. Simulated time only; nothing sleeps.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "daemon/core/analysis/analyzer.h"
#include "daemon/core/daemon_core.h"
#include "proto/names/names.h"
#include "tests/daemon/unmeasured_backend.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;
using testing::RealHost;
using testing::RealHostReason;

// A DaemonCore over sim:trn2.48xlarge running `scenario`, whose backend does not measure
// `unmeasured`; sampled once per simulated second.
struct UnmeasuredRun {
  UnmeasuredRun(const std::string& scenario, Unmeasured unmeasured) {
    auto made = testing::UnmeasuredSim("sim:trn2.48xlarge", scenario, std::move(unmeasured),
                                       MonoTime(seconds(0)));
    EXPECT_NE(made, nullptr);
    backend = made.get();
    core = std::make_unique<DaemonCore>(CoreOptions{seconds(1), std::chrono::minutes(2), "test"},
                                        std::move(made), nullptr);
  }
  const Analysis& At(int t) {
    core->Sample(MonoTime(seconds(t)), WallTime(seconds(1767225600 + t)));
    return *core->latest_analysis();
  }
  testing::UnmeasuredBackend* backend = nullptr;  // owned by `core`
  std::unique_ptr<DaemonCore> core;
};

std::string Lacks(Signal s) { return std::string(SignalName(s)) + " (" + RealHostReason(s) + ")"; }

bool HasEvidence(const v1::Finding& f, const std::string& name) {
  for (const v1::Evidence& e : f.evidence())
    if (e.name() == name) return true;
  return false;
}

// Every runtime verdict and candidate of the latest evaluation, checked by `check`.
template <typename Check>
void ForEachFinding(const UnmeasuredRun& run, const Analysis& a, Check check) {
  for (const auto& [pid, findings] : a.runtimes)
    for (const v1::Finding& f : findings) check(f);
  for (const auto& [pid, candidate] : run.core->analyzer().last_evaluation().candidates)
    check(candidate);
}

TEST(AnalyzerUnavailable, NoHbmBoundWithoutHbmTrafficAndVerdictsSaySo) {
  UnmeasuredRun run("hbm-bound", RealHost({Signal::kHbmTraffic}));
  for (int t = 0; t <= 90; ++t) {
    const Analysis& a = run.At(t);
    ForEachFinding(run, a, [&](const v1::Finding& f) {
      EXPECT_NE(f.kind(), v1::FINDING_KIND_HBM_BOUND) << "at " << t << "s: " << f.summary();
      EXPECT_FALSE(HasEvidence(f, "hbm_bandwidth_percent")) << "at " << t << "s";
    });
  }
  const Analysis& a = run.At(91);
  ASSERT_FALSE(a.runtimes.empty());
  // FLOP/s are low in this scenario, so the rule needing HBM bandwidth was consulted: every
  // verdict names the signal it went without.
  for (const auto& [pid, findings] : a.runtimes) {
    for (const v1::Finding& f : findings) {
      EXPECT_NE(f.summary().find("; signals unavailable: " + Lacks(Signal::kHbmTraffic)),
                std::string::npos)
          << FindingKindName(f.kind()) << ": " << f.summary();
    }
  }
  EXPECT_NE(a.instance.summary().find("signals unavailable: " + Lacks(Signal::kHbmTraffic)),
            std::string::npos)
      << a.instance.summary();
}

// Unmeasured FLOP/s (a driver before 2.30.2) are not low FLOP/s: no hbm_bound even with HBM
// traffic measured, and a healthy verdict quotes the busy time alone and names what it lacked.
TEST(AnalyzerUnavailable, NoFlopsFigureWithoutFlops) {
  for (const char* scenario : {"hbm-bound", "healthy-training"}) {
    UnmeasuredRun run(scenario, RealHost({Signal::kFlops}));
    for (int t = 0; t <= 90; ++t) {
      const Analysis& a = run.At(t);
      ForEachFinding(run, a, [&](const v1::Finding& f) {
        EXPECT_NE(f.kind(), v1::FINDING_KIND_HBM_BOUND) << scenario << " at " << t << "s";
        EXPECT_FALSE(HasEvidence(f, "flops_percent_of_peak")) << scenario << " at " << t << "s";
        EXPECT_EQ(f.summary().find("FLOP/s"), std::string::npos) << scenario << ": " << f.summary();
      });
    }
    const Analysis& a = run.At(91);
    ASSERT_FALSE(a.runtimes.empty()) << scenario;
    for (const auto& [pid, findings] : a.runtimes) {
      for (const v1::Finding& f : findings) {
        EXPECT_NE(f.summary().find("signals unavailable: " + Lacks(Signal::kFlops)),
                  std::string::npos)
            << scenario << ": " << FindingKindName(f.kind()) << ": " << f.summary();
      }
    }
  }
}

TEST(AnalyzerUnavailable, NotIdleWhenUtilizationIsNotMeasured) {
  UnmeasuredRun run("idle-allocated", RealHost({Signal::kCoreActivity}));
  for (int t = 0; t <= 60; ++t) {
    const Analysis& a = run.At(t);
    EXPECT_TRUE(a.runtimes.empty()) << "at " << t << "s a verdict without utilization";
    ForEachFinding(run, a, [&](const v1::Finding& f) {
      EXPECT_FALSE(HasEvidence(f, "utilization_percent")) << "at " << t << "s";
    });
  }
  const Analysis& a = run.At(61);
  EXPECT_EQ(a.instance.kind(), v1::FINDING_KIND_HEALTHY);  // the neutral "no verdict" summary
  EXPECT_EQ(a.instance.severity(), v1::SEVERITY_INFO);
  EXPECT_EQ(a.instance.confidence(), 0);
  EXPECT_NE(a.instance.summary().find("no verdict for "), std::string::npos)
      << a.instance.summary();
  EXPECT_NE(a.instance.summary().find(": signals unavailable: " + Lacks(Signal::kCoreActivity)),
            std::string::npos)
      << a.instance.summary();
}

// Without the process's CPU figures, idle cores cannot be told from cores waiting for a busy host:
// idle_allocated rests on the cores alone, says so, and shows no CPU evidence.
TEST(AnalyzerUnavailable, IdleWithoutProcessCpuSaysSo) {
  UnmeasuredRun run("idle-allocated", RealHost({Signal::kRuntimeCpu}));
  for (int t = 0; t <= 30; ++t) {
    const Analysis& a = run.At(t);
    ForEachFinding(run, a, [&](const v1::Finding& f) {
      EXPECT_FALSE(HasEvidence(f, "process_cpus")) << "at " << t << "s";
    });
  }
  const Analysis& a = run.At(31);
  EXPECT_EQ(a.instance.kind(), v1::FINDING_KIND_IDLE_ALLOCATED) << a.instance.summary();
  EXPECT_NE(a.instance.summary().find("; signals unavailable: " + Lacks(Signal::kRuntimeCpu)),
            std::string::npos)
      << a.instance.summary();
}

TEST(AnalyzerUnavailable, NeitherCollectiveNorInputBoundWithoutCollectives) {
  for (const char* scenario : {"collective-bound", "input-bound", "straggler"}) {
    UnmeasuredRun run(scenario, RealHost({Signal::kCollectives}));
    for (int t = 0; t <= 90; ++t) {
      const Analysis& a = run.At(t);
      ForEachFinding(run, a, [&](const v1::Finding& f) {
        EXPECT_NE(f.kind(), v1::FINDING_KIND_COLLECTIVE_BOUND) << scenario << " at " << t << "s";
        EXPECT_NE(f.kind(), v1::FINDING_KIND_INPUT_BOUND) << scenario << " at " << t << "s";
        EXPECT_NE(f.kind(), v1::FINDING_KIND_STRAGGLER) << scenario << " at " << t << "s";
        EXPECT_FALSE(HasEvidence(f, "collective_time_share_percent")) << scenario;
      });
    }
    const Analysis& a = run.At(91);
    EXPECT_NE(a.instance.summary().find("signals unavailable: " + Lacks(Signal::kCollectives)),
              std::string::npos)
        << scenario << ": " << a.instance.summary();
  }
}

TEST(AnalyzerUnavailable, ErrorsAreFoundFromWhatIsMeasured) {
  // Failed executions are measured; nothing else the rules read is.
  UnmeasuredRun run("ecc-degradation",
                    RealHost({Signal::kHbmTraffic, Signal::kCoreActivity, Signal::kCollectives}));
  bool errors = false;
  for (int t = 0; t <= 220; ++t) {
    const Analysis& a = run.At(t);
    for (const auto& [pid, findings] : a.runtimes) {
      for (const v1::Finding& f : findings) {
        EXPECT_EQ(f.kind(), v1::FINDING_KIND_ERRORS) << "at " << t << "s: " << f.summary();
        errors = errors || f.kind() == v1::FINDING_KIND_ERRORS;
      }
    }
  }
  EXPECT_TRUE(errors);
}

TEST(AnalyzerUnavailable, VerdictsWithoutExecutionsSayTheyCouldNotRuleOutErrors) {
  UnmeasuredRun run("healthy-training", RealHost({Signal::kExecutions}));
  const Analysis* a = nullptr;
  for (int t = 0; t <= 60; ++t) a = &run.At(t);
  ASSERT_FALSE(a->runtimes.empty());
  for (const auto& [pid, findings] : a->runtimes) {
    for (const v1::Finding& f : findings) {
      EXPECT_EQ(f.kind(), v1::FINDING_KIND_HEALTHY) << f.summary();
      EXPECT_NE(f.summary().find("signals unavailable: " + Lacks(Signal::kExecutions)),
                std::string::npos)
          << f.summary();
    }
  }
  EXPECT_NE(
      a->instance.summary().find("healthy; signals unavailable: " + Lacks(Signal::kExecutions)),
      std::string::npos)
      << a->instance.summary();
}

TEST(AnalyzerUnavailable, AVerdictIsDroppedWhenItsSignalsStopBeingMeasured) {
  UnmeasuredRun run("collective-bound", RealHost({Signal::kCollectives}));
  run.backend->MeasureAll(true);
  for (int t = 0; t <= 60; ++t) run.At(t);
  ASSERT_EQ(FindingKindName(run.core->latest_analysis()->instance.kind()),
            std::string("collective_bound"));
  run.backend->MeasureAll(false);
  const Analysis& a = run.At(61);
  EXPECT_TRUE(a.runtimes.empty()) << "a collective_bound verdict without collective figures";
  EXPECT_NE(a.instance.summary().find("no verdict for "), std::string::npos)
      << a.instance.summary();
  // Measured again: a verdict comes back after the usual agreeing evaluations.
  run.backend->MeasureAll(true);
  for (int t = 62; t <= 70; ++t) run.At(t);
  EXPECT_EQ(FindingKindName(run.core->latest_analysis()->instance.kind()),
            std::string("collective_bound"));
}

}  // namespace
}  // namespace neuronmon::daemon
