// The runtime layer against ground truth: the simulator's stream, rendered as AWS neuron-monitor
// documents (our neuron-monitor's own output, the schema AWS's prints), read back by
// ParseMonitorDocument and MonitorIntegrator, must give each runtime's executions, the cores'
// busy time and the runtimes' memory as the simulator's own snapshots have them, document by
// document.
#include <gtest/gtest.h>

#include <chrono>

#include "daemon/core/backend.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/report/subscription.h"
#include "exporter/monitor_json.h"
#include "neurondev/monitor_document.h"
#include "proto/names/names.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"

namespace neuronmon::neurondev {
namespace {

using std::chrono::seconds;

void MonitorRoundTrip(const std::string& device, const std::string& scenario, int from, int to) {
  SCOPED_TRACE(device + " " + scenario);
  // The daemon side, as neuron-monitor (ours) sees it.
  auto backend = daemon::MakeBackend({device, scenario, 1, 1}, MonoTime(seconds(0)));
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  daemon::DaemonCore core({seconds(1), std::chrono::minutes(2), "test"}, std::move(*backend),
                          nullptr);
  v1::Subscribe request;
  for (v1::Group g : AllGroups()) {
    v1::GroupSubscription& group = *request.add_groups();
    group.set_group(g);
    group.set_period_ns(1'000'000'000);
  }
  auto sub = daemon::Subscription::FromRequest(request, seconds(1));
  ASSERT_TRUE(sub.ok());
  // Ground truth: the same instance read at the same times.
  auto spec = simdev::ParseDeviceSpec(device);
  auto loaded = simdev::LoadScenario(scenario);
  ASSERT_TRUE(spec.ok() && loaded.ok());
  auto sim = simdev::Instance::Create(*spec, std::move(*loaded), 1);
  ASSERT_TRUE(sim.ok());

  exporter::MonitorState state;
  MonitorIntegrator integrator;
  Snapshot truth_before;
  std::map<std::uint32_t, CoreCounters> cores_before;
  std::vector<RuntimeSample> runtimes_before;
  std::uint64_t compared = 0, completed = 0, busy_cores = 0;
  for (int t = 0; t <= to; ++t) {
    const std::uint64_t seq = core.Sample(MonoTime(seconds(t)), WallTime(seconds(1767225600 + t)));
    auto report =
        core.ReportAt(*sub, seq, t == 0 ? daemon::ReportScope::kFirst : daemon::ReportScope::kLive);
    if (!report) continue;
    state.Apply(*report);
    state.SetInventory(core.inventory());
    Result<MonitorDocument> doc = ParseMonitorDocument(exporter::RenderMonitorJson(state));
    ASSERT_TRUE(doc.ok()) << doc.status().message();
    integrator.Add(*doc, MonoTime(seconds(t)));
    const Snapshot truth = (*sim)->Read(seconds(t));
    const std::vector<RuntimeSample> runtimes = integrator.Runtimes();
    const std::map<std::uint32_t, CoreCounters> cores = integrator.Cores();
    if (t > from) {
      SCOPED_TRACE("t=" + std::to_string(t));
      ASSERT_EQ(runtimes.size(), truth.runtimes.size());
      for (std::size_t r = 0; r < runtimes.size(); ++r) {
        const RuntimeSample& got = runtimes[r];
        const RuntimeSample& want = truth.runtimes[r];
        EXPECT_EQ(got.pid, want.pid);
        EXPECT_EQ(got.tag, want.tag);
        const RuntimeSample* got_before = nullptr;
        for (const RuntimeSample& b : runtimes_before) {
          if (b.pid == got.pid) got_before = &b;
        }
        const RuntimeSample* want_before = FindRuntime(truth_before, want.pid);
        if (got_before == nullptr || want_before == nullptr) continue;
        const ExecutionCounters g = got.executions.Minus(got_before->executions);
        const ExecutionCounters w = want.executions.Minus(want_before->executions);
        EXPECT_EQ(g.completed, w.completed) << "pid " << got.pid;
        ++compared;
        completed += g.completed;
        EXPECT_EQ(g.Failed(), w.Failed()) << "pid " << got.pid;
        EXPECT_EQ(got.memory->DeviceTotal(), want.memory->DeviceTotal()) << "pid " << got.pid;
        EXPECT_EQ(got.memory->host.Total(), want.memory->host.Total()) << "pid " << got.pid;
      }
      for (const auto& [c, counters] : cores) {
        auto before = cores_before.find(c);
        if (before == cores_before.end() || c >= truth.cores.size()) continue;
        const double got = static_cast<double>(counters.busy_ns - before->second.busy_ns);
        const double want =
            static_cast<double>(truth.cores[c].busy_ns - truth_before.cores[c].busy_ns);
        EXPECT_NEAR(got, want, 1e6) << "core " << c;  // within 0.1 % of the second
        if (want > 0) ++busy_cores;
      }
    }
    truth_before = truth;
    cores_before = cores;
    runtimes_before = runtimes;
  }
  // Not vacuous: runtimes were compared, executed, and kept cores busy.
  EXPECT_GT(compared, 0u);
  EXPECT_GT(completed, 0u);
  EXPECT_GT(busy_cores, 0u);
}

TEST(MonitorRoundTrip, HealthyTraining) {
  MonitorRoundTrip("sim:trn2.48xlarge", "healthy-training", 20, 26);
}

TEST(MonitorRoundTrip, InferenceServing) {
  MonitorRoundTrip("sim:inf2.48xlarge", "inference-serving", 30, 35);
}

TEST(MonitorRoundTrip, EccDegradation) {
  MonitorRoundTrip("sim:trn2.48xlarge", "ecc-degradation", 178, 184);
}

}  // namespace
}  // namespace neuronmon::neurondev
