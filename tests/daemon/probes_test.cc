// Probes: /healthz is alive while sampling keeps its schedule (with a start-up grace before the
// first sample); /readyz also wants a first sample, a backend that answers and two samples of
// history. Text and JSON say which check failed and why.
#include "daemon/core/probes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace neuronmon::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Snapshot At(std::uint64_t seq, MonoTime mono, std::string error = "") {
  Snapshot s;
  s.seq = seq;
  s.mono = mono;
  s.error = std::move(error);
  return s;
}

TEST(Probes, AliveWhileSamplingKeepsItsSchedule) {
  History history(4);
  const MonoTime t0(seconds(100));
  ProbeInput in{.history = &history, .period = seconds(1), .now = t0, .started = t0};
  // Before the first sample: alive during the start-up grace, then not.
  EXPECT_TRUE(Liveness(in).ok);
  in.now = t0 + kProbeStartupGrace + milliseconds(1);
  const ProbeResult late = Liveness(in);
  EXPECT_FALSE(late.ok);
  EXPECT_EQ(ProbeText(late), "not ok: sampling: no sample yet (up 30.0 s)\n");
  history.Append(At(1, t0 + seconds(31)));
  in.now = t0 + seconds(34);
  EXPECT_TRUE(Liveness(in).ok);
  EXPECT_EQ(ProbeText(Liveness(in)), "ok\n");
  in.now = t0 + seconds(31) + milliseconds(4200);
  const ProbeResult stale = Liveness(in);
  EXPECT_FALSE(stale.ok);
  EXPECT_EQ(ProbeText(stale), "not ok: sampling: last sample 4.2 s ago (period 1 s)\n");
}

TEST(Probes, ReadyNeedsAFirstSampleAnAnsweringBackendAndTwoSamples) {
  History history(4);
  const MonoTime t0(seconds(100));
  ProbeInput in{.history = &history, .period = seconds(1), .now = t0, .started = t0};
  ProbeResult r = Readiness(in);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.checks.size(), 4u);
  EXPECT_TRUE(r.checks[0].ok) << "alive: starting";
  EXPECT_EQ(ProbeText(r),
            "not ok: first_sample: no sample yet; backend: not read yet; history: 0 samples "
            "(rates need two)\n");
  history.Append(At(1, t0));
  r = Readiness(in);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(ProbeText(r), "not ok: history: 1 sample (rates need two)\n");
  history.Append(At(2, t0 + seconds(1)));
  in.now = t0 + seconds(1);
  EXPECT_TRUE(Readiness(in).ok);
  // A backend that stops answering: not ready, still alive (sampling goes on).
  history.Append(At(3, t0 + seconds(2), "no Neuron devices readable under /sys\x1b[2J"));
  in.now = t0 + seconds(2);
  EXPECT_TRUE(Liveness(in).ok);
  r = Readiness(in);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(ProbeText(r), "not ok: backend: no Neuron devices readable under /sys\n")
      << "control characters are stripped";
}

TEST(Probes, JsonListsEveryCheckWithItsDetail) {
  History history(4);
  const MonoTime t0(seconds(100));
  history.Append(At(1, t0));
  const ProbeInput in{.history = &history, .period = seconds(1), .now = t0, .started = t0};
  const nlohmann::json j = nlohmann::json::parse(ProbeJson(Readiness(in)));
  EXPECT_EQ(j["status"], "fail");
  ASSERT_EQ(j["checks"].size(), 4u);
  EXPECT_EQ(j["checks"][0]["name"], "sampling");
  EXPECT_EQ(j["checks"][0]["ok"], true);
  EXPECT_EQ(j["checks"][0]["detail"], "last sample 0.0 s ago (period 1 s)");
  EXPECT_EQ(j["checks"][3]["name"], "history");
  EXPECT_EQ(j["checks"][3]["ok"], false);
  EXPECT_EQ(nlohmann::json::parse(ProbeJson(Liveness(in)))["status"], "ok");
}

}  // namespace
}  // namespace neuronmon::daemon
