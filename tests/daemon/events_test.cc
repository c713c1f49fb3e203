// Events: the log numbers and keeps them (bounded by count and age, resumable after a seq); the
// detector reports what changed between analyses — verdicts, device health states, hardware
// error counters — and nothing at its first call; the JSON form is exact.
#include "daemon/core/events.h"

#include <gtest/gtest.h>

#include "proto/names/event_json.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;

const WallTime kWall = WallTime{} + seconds(1'796'601'600);  // 2026-12-07T00:00:00Z

TEST(EventLog, NumbersKeepsAndResumes) {
  EventLog log(EventLogOptions{.max_events = 3, .retention = seconds(60)});
  const MonoTime t0(seconds(100));
  for (int i = 0; i < 5; ++i) {
    log.Add(DaemonEvent("current", "e" + std::to_string(i)), t0 + seconds(i), kWall);
  }
  EXPECT_EQ(log.newest_seq(), 5u);
  EXPECT_EQ(log.oldest_seq(), 3u) << "at most 3 kept";
  std::vector<const v1::Event*> after = log.After(3, 10);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0]->seq(), 4u);
  EXPECT_EQ(after[0]->summary(), "e3");
  EXPECT_EQ(log.After(0, 10).size(), 3u) << "from the oldest kept";
  EXPECT_EQ(log.After(0, 1).size(), 1u);
  EXPECT_TRUE(log.After(5, 10).empty());
  EXPECT_TRUE(log.After(99, 10).empty());
  log.Expire(t0 + seconds(63) + seconds(1));
  EXPECT_EQ(log.size(), 1u) << "only the one added at t0+4 s is within 60 s";
  EXPECT_EQ(log.oldest_seq(), 5u);
}

Snapshot WithRuntime(std::uint64_t seq, std::uint32_t pid, const std::string& tag) {
  Snapshot s;
  s.seq = seq;
  RuntimeSample r;
  r.pid = pid;
  r.tag = tag;
  s.runtimes.push_back(r);
  s.devices.resize(2);
  for (DeviceCounters& d : s.devices) d.present = true;
  return s;
}

v1::Finding Verdict(v1::FindingKind kind, const std::string& summary) {
  v1::Finding f;
  f.set_kind(kind);
  f.set_summary(summary);
  v1::Evidence* e = f.add_evidence();
  e->set_name("input_wait_share");
  e->set_value(0.31);
  e->set_unit("ratio");
  e->set_threshold(0.2);
  e->set_comparison(">");
  return f;
}

v1::DeviceHealth Health(std::uint32_t device, v1::HealthState state) {
  v1::DeviceHealth h;
  h.set_neuron_device_index(device);
  h.set_state(state);
  if (state != v1::HEALTH_STATE_OK) {
    v1::HealthReason* r = h.add_reasons();
    r->set_code("mem_ecc_uncorrected");
    r->set_text("2 uncorrectable HBM ECC errors since the driver loaded");
    r->set_state(state);
    r->set_action(v1::HEALTH_ACTION_REPLACE);
  }
  return h;
}

TEST(EventDetector, ReportsWhatChangedAndNothingAtFirst) {
  EventDetector detector;
  Analysis a;
  a.runtimes[7] = {Verdict(v1::FINDING_KIND_HEALTHY, "healthy")};
  a.instance = Verdict(v1::FINDING_KIND_HEALTHY, "1 of 1 healthy");
  a.devices = {Health(0, v1::HEALTH_STATE_OK), Health(1, v1::HEALTH_STATE_OK)};
  EXPECT_TRUE(detector.Detect(WithRuntime(1, 7, "train"), a).empty()) << "the first only learns";
  EXPECT_TRUE(detector.Detect(WithRuntime(2, 7, "train"), a).empty()) << "nothing changed";
  // The runtime turns input-bound, the instance follows, ND1 fails and counts 2 HBM errors.
  a.runtimes[7] = {Verdict(v1::FINDING_KIND_INPUT_BOUND, "waits for input 31% of the time")};
  a.instance = Verdict(v1::FINDING_KIND_INPUT_BOUND, "1 of 1 input_bound");
  a.devices[1] = Health(1, v1::HEALTH_STATE_FAILED);
  Snapshot s = WithRuntime(3, 7, "train");
  s.devices[1].errors.mem_ecc_uncorrected = 2;
  const std::vector<v1::Event> events = detector.Detect(s, a);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind(), v1::EVENT_KIND_VERDICT);
  EXPECT_EQ(events[0].subject().pid(), 7u);
  EXPECT_EQ(events[0].subject().runtime_tag(), "train");
  EXPECT_EQ(events[0].before(), "healthy");
  EXPECT_EQ(events[0].after(), "input_bound");
  EXPECT_EQ(events[0].sample_seq(), 3u);
  EXPECT_EQ(events[0].evidence(0).name(), "input_wait_share");
  EXPECT_EQ(events[1].kind(), v1::EVENT_KIND_VERDICT);
  EXPECT_TRUE(events[1].subject().instance());
  EXPECT_EQ(events[2].kind(), v1::EVENT_KIND_DEVICE_HEALTH);
  EXPECT_EQ(events[2].subject().neuron_device_index(), 1u);
  EXPECT_EQ(events[2].before(), "ok");
  EXPECT_EQ(events[2].after(), "failed");
  EXPECT_EQ(events[2].reasons(0).code(), "mem_ecc_uncorrected");
  EXPECT_EQ(events[3].kind(), v1::EVENT_KIND_HARDWARE_ERROR);
  EXPECT_EQ(events[3].subject().neuron_device_index(), 1u);
  EXPECT_EQ(events[3].summary(), "ND1: 2 new hardware errors (mem_ecc_uncorrected)");
  // A counter epoch (a reset) restarts the counters: not new errors.
  Snapshot reset = WithRuntime(4, 7, "train");
  reset.epoch = 1;
  reset.devices[1].errors.mem_ecc_uncorrected = 5;
  EXPECT_TRUE(detector.Detect(reset, a).empty());
  // A runtime that starts: its first verdict is learnt, not a change.
  Snapshot more = WithRuntime(5, 7, "train");
  more.epoch = 1;
  more.devices[1].errors.mem_ecc_uncorrected = 5;
  RuntimeSample other;
  other.pid = 8;
  other.tag = "serve";
  more.runtimes.push_back(other);
  a.runtimes[8] = {Verdict(v1::FINDING_KIND_HEALTHY, "healthy")};
  EXPECT_TRUE(detector.Detect(more, a).empty());
}

// A device whose errors keep growing is told at once, then at most once a minute of sample time,
// each event with everything since the last: none lost, no flood.
TEST(EventDetector, GrowingHardwareErrorsAreCoalescedPerMinute) {
  EventDetector detector;
  Analysis a;
  const MonoTime t0(seconds(1000));
  auto at = [&](std::uint64_t seq, Nanos t, std::uint64_t errors) {
    Snapshot s = WithRuntime(seq, 7, "train");
    s.mono = t0 + t;
    s.devices[0].errors.dma_abort = errors;
    return detector.Detect(s, a);
  };
  EXPECT_TRUE(at(1, seconds(0), 0).empty());
  std::vector<v1::Event> e = at(2, seconds(1), 2);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].evidence(0).value(), 2);
  EXPECT_TRUE(at(3, seconds(2), 3).empty());
  EXPECT_TRUE(at(4, seconds(60), 7).empty());
  e = at(5, seconds(61), 9);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].evidence(0).name(), "dma_abort");
  EXPECT_EQ(e[0].evidence(0).value(), 7) << "everything since the last event";
  EXPECT_EQ(e[0].summary(), "ND0: 7 new hardware errors (dma_abort)");
  EXPECT_TRUE(at(6, seconds(200), 9).empty()) << "nothing new";
  EXPECT_EQ(at(7, seconds(201), 10).size(), 1u) << "a minute since the last event: at once";
}

TEST(EventJson, IsExact) {
  EventLog log;
  v1::Event e;
  e.set_kind(v1::EVENT_KIND_VERDICT);
  e.set_sample_seq(42);
  e.mutable_subject()->set_pid(7);
  e.mutable_subject()->set_runtime_tag("train");
  e.set_before("healthy");
  e.set_after("input_bound");
  e.set_summary("waits for input");
  *e.add_evidence() = Verdict(v1::FINDING_KIND_INPUT_BOUND, "").evidence(0);
  v1::Evidence* count = e.add_evidence();
  count->set_name("executions");
  count->set_value(3);
  count->set_unit("count");
  const v1::Event& kept = log.Add(e, MonoTime{}, kWall + std::chrono::milliseconds(1500));
  EXPECT_EQ(EventJson(kept),
            R"({"seq":1,"time":"2026-12-07T00:00:01.500Z","sample_seq":42,"kind":"verdict",)"
            R"("subject":{"pid":7,"runtime_tag":"train"},"before":"healthy","after":"input_bound",)"
            R"("summary":"waits for input","evidence":[{"name":"input_wait_share","value":0.31,)"
            R"("unit":"ratio","threshold":0.2,"comparison":">"},{"name":"executions","value":3,)"
            R"("unit":"count"}],"reasons":[]})");
}

}  // namespace
}  // namespace neuronmon::daemon
