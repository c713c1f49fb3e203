// Unit tests of the daemon's pure core: schedule, history, subscriptions, report math and the
// shared-frame cache. Times come from literals or a ManualClock; nothing sleeps.
#include <gtest/gtest.h>

#include "daemon/core/daemon_core.h"
#include "daemon/core/history.h"
#include "daemon/core/report_builder.h"
#include "daemon/core/schedule.h"
#include "daemon/core/subscription.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SampleSchedule, DeadlinesAreThePreviousDeadlinePlusThePeriod) {
  const MonoTime t0(seconds(100));
  SampleSchedule s(t0, seconds(1));
  EXPECT_EQ(s.next_deadline(), t0);
  // Waking a little late does not shift the phase.
  SampleSchedule::Tick tick = s.OnWake(t0 + milliseconds(30));
  EXPECT_EQ(tick.deadline, t0);
  EXPECT_EQ(tick.missed, 0u);
  EXPECT_EQ(s.next_deadline(), t0 + seconds(1));
  tick = s.OnWake(t0 + milliseconds(1999));
  EXPECT_EQ(tick.deadline, t0 + seconds(1));
  EXPECT_EQ(s.next_deadline(), t0 + seconds(2));
}

TEST(SampleSchedule, LateTicksAreCountedAndSkippedNotBunched) {
  const MonoTime t0(seconds(100));
  SampleSchedule s(t0, seconds(1));
  (void)s.OnWake(t0);
  // Asleep for 3.5 periods: deadlines 1 s, 2 s and 3 s... we sample once for 4 s, missing three.
  const SampleSchedule::Tick tick = s.OnWake(t0 + milliseconds(4500));
  EXPECT_EQ(tick.deadline, t0 + seconds(4));
  EXPECT_EQ(tick.missed, 3u);
  EXPECT_EQ(s.missed_total(), 3u);
  EXPECT_EQ(s.next_deadline(), t0 + seconds(5));
  s.SetPeriod(t0 + milliseconds(4600), milliseconds(250));
  EXPECT_EQ(s.next_deadline(), t0 + milliseconds(4850));
}

Snapshot Seq(std::uint64_t seq) {
  Snapshot s;
  s.seq = seq;
  s.device_time = seconds(static_cast<int>(seq));
  return s;
}

TEST(History, BoundedRingOldestFirst) {
  History h(3);
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.AtOrBefore(5), nullptr);
  for (std::uint64_t i = 1; i <= 5; ++i) h.Append(Seq(i));
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.oldest_seq(), 3u);
  EXPECT_EQ(h.newest_seq(), 5u);
  EXPECT_EQ(h.Find(2), nullptr);
  EXPECT_EQ(h.Find(4)->seq, 4u);
  EXPECT_EQ(h.AtOrBefore(1)->seq, 3u);  // older than retained: the oldest
  EXPECT_EQ(h.AtOrBefore(9)->seq, 5u);
  h.SetCapacity(2);
  EXPECT_EQ(h.oldest_seq(), 4u);
  EXPECT_EQ(HistoryCapacity(std::chrono::minutes(10), seconds(1)), 601u);
}

TEST(History, FindsAcrossSeqGaps) {
  History h(10);
  for (std::uint64_t i : {1, 2, 7, 8}) h.Append(Seq(i));
  EXPECT_EQ(h.Find(7)->seq, 7u);
  EXPECT_EQ(h.Find(3), nullptr);
  EXPECT_EQ(h.AtOrBefore(5)->seq, 2u);
}

v1::Subscribe Request(std::initializer_list<std::pair<v1::Group, int>> groups,
                      std::string tags = "") {
  v1::Subscribe req;
  for (auto [g, ms] : groups) {
    v1::GroupSubscription* s = req.add_groups();
    s->set_group(g);
    s->set_period_ns(static_cast<std::uint64_t>(ms) * 1'000'000);
  }
  req.set_tag_filter(tags);
  return req;
}

TEST(Subscription, PeriodsRoundUpToBasePeriods) {
  Result<Subscription> s = Subscription::FromRequest(Request({{v1::GROUP_NEURONCORE_COUNTERS, 1000},
                                                              {v1::GROUP_MEMORY_USED, 4500},
                                                              {v1::GROUP_HBM_STATS, 0}}),
                                                     seconds(1));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Every(v1::GROUP_NEURONCORE_COUNTERS), 1u);
  EXPECT_EQ(s->Every(v1::GROUP_MEMORY_USED), 5u);
  EXPECT_EQ(s->Every(v1::GROUP_HBM_STATS), 1u);
  EXPECT_FALSE(s->Subscribed(v1::GROUP_EXECUTION_STATS));
  EXPECT_TRUE(s->Due(v1::GROUP_MEMORY_USED, 10));
  EXPECT_FALSE(s->Due(v1::GROUP_MEMORY_USED, 11));
  EXPECT_EQ(s->Describe(seconds(1)),
            "neuroncore_counters every 1s, memory_used every 5s, hbm_stats every 1s");
}

TEST(Subscription, EqualRequestsShareAKey) {
  auto a = Subscription::FromRequest(Request({{v1::GROUP_MEMORY_USED, 4200}}, "rank"), seconds(1));
  auto b = Subscription::FromRequest(Request({{v1::GROUP_MEMORY_USED, 5000}}, "rank"), seconds(1));
  auto c = Subscription::FromRequest(Request({{v1::GROUP_MEMORY_USED, 5000}}, "other"), seconds(1));
  EXPECT_EQ(a->key(), b->key());
  EXPECT_NE(a->key(), c->key());
}

TEST(Subscription, EmptyMeansEverythingAndBadInputIsRefused) {
  auto all = Subscription::FromRequest(v1::Subscribe(), seconds(1));
  ASSERT_TRUE(all.ok());
  for (v1::Group g : AllGroups()) EXPECT_EQ(all->Every(g), 1u) << GroupName(g);
  auto bad_regex = Subscription::FromRequest(Request({}, "llama[("), seconds(1));
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_EQ(bad_regex.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_regex.status().message().find("tag_filter \"llama[(\""), std::string::npos);
  v1::Subscribe unknown;
  unknown.add_groups()->set_group(static_cast<v1::Group>(9));
  EXPECT_EQ(Subscription::FromRequest(unknown, seconds(1)).status().message(), "unknown group 9");
  auto tags = Subscription::FromRequest(Request({}, "^llama"), seconds(1));
  EXPECT_TRUE(tags->Matches("llama3-rank0"));
  EXPECT_FALSE(tags->Matches("vllm"));
}

// A small trn2-like inventory: 2 devices x 4 logical cores, LNC=2, 192 host vCPUs.
v1::Inventory Inventory() {
  v1::Inventory inv;
  inv.mutable_hardware_info()->set_logical_neuroncore_config(2);
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(4);
  inv.mutable_hardware_info()->set_neuron_device_memory_size(103079215104ULL);
  inv.set_host_vcpu_count(192);
  for (int d = 0; d < 2; ++d) inv.add_devices()->set_hbm_peak_bytes_per_second(2.9e12);
  return inv;
}

Snapshot Base(std::uint64_t seq, int seconds_at) {
  Snapshot s;
  s.seq = seq;
  s.device_time = seconds(seconds_at);
  s.wall = WallTime(seconds(1767225600 + seconds_at));
  s.cores.resize(8);
  for (CoreCounters& c : s.cores) c.physical_busy_ns = {0, 0};
  s.devices.resize(2);
  RuntimeSample r;
  r.pid = 4242;
  r.tag = "llama-rank0";
  r.cores = {0, 1, 2, 3};
  r.memory = std::make_shared<RuntimeMemory>();
  s.runtimes.push_back(r);
  return s;
}

TEST(ReportBuilder, RatesMatchHandComputedValues) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(12, 12);  // a 2 s window
  a.cores[0] = {3'000'000'000, 1e15, 0.9e15, {3'100'000'000, 2'900'000'000}};
  b.cores[0] = {4'500'000'000, 1.2e15, 1.05e15, {4'700'000'000, 4'300'000'000}};
  a.devices[0].hbm_read_bytes = 1'000'000'000'000;
  b.devices[0].hbm_read_bytes = 3'900'000'000'000;
  b.devices[0].hbm_write_bytes = 1'450'000'000'000;
  a.devices[0].ecc.mem_corrected = 4;
  b.devices[0].ecc.mem_corrected = 7;
  RuntimeSample& ra = a.runtimes[0];
  RuntimeSample& rb = b.runtimes[0];
  ra.cpu_user_ns = 1'000'000'000;
  rb.cpu_user_ns = 1'000'000'000 + 19'200'000'000;  // 19.2 CPU-seconds in 2 s of 192 vCPUs = 5%
  ra.executions.completed = 90;
  rb.executions.completed = 100;
  rb.executions.transient = 2;
  ra.total_latency.Add(0.5, 90);
  rb.total_latency = ra.total_latency;
  rb.total_latency.Add(0.025, 10);
  CollectiveCounters& ca = ra.collectives[0];
  CollectiveCounters& cb = rb.collectives[0];
  ca.count = 1000;
  cb.count = 1100;
  cb.bytes = 100 * 1048576;
  cb.busy_ns = 500'000'000;  // 0.5 s of 2 s
  cb.latency.Add(0.005, 100);

  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  for (v1::Group g : AllGroups()) in.groups.push_back({g, &a});
  const v1::Report r = BuildReport(in);
  EXPECT_EQ(r.seq(), 12u);
  EXPECT_EQ(r.period_ns(), 2'000'000'000u);
  EXPECT_EQ(r.window_start_seq(), 10u);
  EXPECT_FALSE(r.counters_reset());
  ASSERT_EQ(r.runtimes_size(), 1);
  const v1::RuntimeReport& rt = r.runtimes(0);
  const v1::CoreCounters& core = rt.neuroncore_counters().cores(0);
  EXPECT_DOUBLE_EQ(core.utilization_percent(), 75);
  EXPECT_DOUBLE_EQ(core.flops(), 1e14);
  EXPECT_DOUBLE_EQ(core.effective_flops(), 0.75e14);
  ASSERT_EQ(core.physical_size(), 2);
  EXPECT_EQ(core.physical(1).index(), 1u);
  EXPECT_DOUBLE_EQ(core.physical(0).utilization_percent(), 80);
  EXPECT_DOUBLE_EQ(core.physical(1).utilization_percent(), 70);
  EXPECT_EQ(rt.neuroncore_counters().cores(3).index(), 3u);
  EXPECT_DOUBLE_EQ(rt.vcpu_usage().user_percent(), 5);
  EXPECT_EQ(rt.execution_stats().execution_summary().completed(), 10u);
  EXPECT_EQ(rt.execution_stats().error_summary().transient(), 2u);
  ASSERT_TRUE(rt.execution_stats().has_total_latency());
  EXPECT_LT(rt.execution_stats().total_latency().p100(), 0.03);  // only the window's executions
  EXPECT_FALSE(rt.execution_stats().has_device_latency());       // none recorded: null
  ASSERT_EQ(rt.collectives_stats().operations_size(), 1);
  const v1::CollectiveStats& op = rt.collectives_stats().operations(0);
  EXPECT_EQ(op.op(), v1::COLLECTIVE_OP_ALL_REDUCE);
  EXPECT_EQ(op.count(), 100u);
  EXPECT_DOUBLE_EQ(op.operations_per_second(), 50);
  EXPECT_DOUBLE_EQ(op.time_share(), 0.25);
  EXPECT_DOUBLE_EQ(op.mean_message_bytes(), 1048576);
  const v1::DeviceHbm& hbm = r.system().hbm_stats().devices(0);
  EXPECT_DOUBLE_EQ(hbm.read_bytes_per_second(), 1.45e12);
  EXPECT_DOUBLE_EQ(hbm.write_bytes_per_second(), 0.725e12);
  EXPECT_DOUBLE_EQ(hbm.bandwidth_utilization_percent(), 75);
  EXPECT_EQ(r.system().neuron_hw_counters().devices(0).mem_ecc_corrected(), 3u);
  EXPECT_EQ(r.totals().cores(0).busy_ns(), 4'500'000'000u);
  EXPECT_EQ(r.totals().runtimes(0).collectives(0).count(), 1100u);
}

TEST(ReportBuilder, CounterResetStartsANewBaselineNotANegativeRate) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(11, 11);
  a.cores[0].busy_ns = 9'000'000'000;
  b.cores[0].busy_ns = 400'000'000;  // restarted: 0.4 s since the reset
  b.epoch = 1;
  a.devices[0].hbm_read_bytes = 5'000'000'000'000;
  b.devices[0].hbm_read_bytes = 1'000'000'000;
  a.runtimes[0].executions.completed = 500;
  b.runtimes[0].executions.completed = 3;
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  for (v1::Group g : AllGroups()) in.groups.push_back({g, &a});
  const v1::Report r = BuildReport(in);
  EXPECT_TRUE(r.counters_reset());
  EXPECT_DOUBLE_EQ(r.runtimes(0).neuroncore_counters().cores(0).utilization_percent(), 40);
  EXPECT_DOUBLE_EQ(r.system().hbm_stats().devices(0).read_bytes_per_second(), 1e9);
  EXPECT_EQ(r.runtimes(0).execution_stats().execution_summary().completed(), 3u);
  EXPECT_EQ(r.totals().epoch(), 1u);
}

TEST(ReportBuilder, TagFilterAndLostDevices) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(1, 1);
  Snapshot b = Base(2, 2);
  b.devices[1].present = false;
  b.runtimes[0].error = "nd1: device is not responding";
  auto sub = Subscription::FromRequest(Request({}, "^vllm"), seconds(1));
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.subscription = &*sub;
  for (v1::Group g : AllGroups()) in.groups.push_back({g, &a});
  const v1::Report r = BuildReport(in);
  EXPECT_EQ(r.runtimes_size(), 0);
  EXPECT_EQ(r.system().hbm_stats().error(), "nd1: device is not responding");
  EXPECT_EQ(r.system().hbm_stats().devices(1).error(), "device is not responding");
  EXPECT_EQ(r.system().neuron_hw_counters().error(), "nd1: device is not responding");
  in.subscription = nullptr;
  const v1::Report all = BuildReport(in);
  ASSERT_EQ(all.runtimes_size(), 1);
  EXPECT_EQ(all.runtimes(0).neuroncore_counters().error(), "nd1: device is not responding");
}

TEST(ReportBuilder, OnlyDueGroupsArePresent) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(1, 1);
  Snapshot b = Base(2, 2);
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.groups = {{v1::GROUP_MEMORY_INFO, &a}};
  const v1::Report r = BuildReport(in);
  EXPECT_TRUE(r.system().has_memory_info());
  EXPECT_FALSE(r.system().has_hbm_stats());
  EXPECT_EQ(r.runtimes_size(), 0);  // no runtime group due
}

// A backend returning scripted snapshots.
class FakeBackend final : public Backend {
 public:
  v1::Inventory Inventory(MonoTime) override { return daemon::Inventory(); }
  Snapshot Read(MonoTime now) override {
    Snapshot s = Base(
        0, static_cast<int>(std::chrono::duration_cast<seconds>(now.time_since_epoch()).count()));
    s.cores[0].busy_ns = static_cast<std::uint64_t>(s.device_time.count() / 2);
    return s;
  }
  std::string Describe() const override { return "fake"; }
};

TEST(DaemonCore, EncodesEachDistinctSubscriptionOncePerWindow) {
  DaemonCore core({seconds(1), seconds(10), "test"}, std::make_unique<FakeBackend>(), nullptr);
  ManualClock clock(MonoTime(seconds(100)), WallTime(seconds(1767225600)));
  EXPECT_EQ(core.Sample(clock.Now(), clock.WallNow()), 1u);
  clock.Advance(seconds(1));
  EXPECT_EQ(core.Sample(clock.Now(), clock.WallNow()), 2u);
  auto every =
      Subscription::FromRequest(Request({{v1::GROUP_NEURONCORE_COUNTERS, 1000}}), seconds(1));
  auto same =
      Subscription::FromRequest(Request({{v1::GROUP_NEURONCORE_COUNTERS, 1000}}), seconds(1));
  auto slow =
      Subscription::FromRequest(Request({{v1::GROUP_NEURONCORE_COUNTERS, 5000}}), seconds(1));
  const auto f1 = core.LiveFrame(*every);
  const auto f2 = core.LiveFrame(*same);
  ASSERT_NE(f1, nullptr);
  EXPECT_EQ(f1.get(), f2.get()) << "equal subscriptions share one encoded frame";
  EXPECT_EQ(core.LiveFrame(*slow), nullptr) << "seq 2 is not a multiple of 5";
  wire::FrameDecoder decoder(wire::kDefaultOutboundMaxFrame);
  std::string_view bytes(*f1);
  v1::Envelope e;
  ASSERT_EQ(decoder.Decode(bytes, e), wire::FrameDecoder::Outcome::kFrame);
  EXPECT_EQ(e.report().seq(), 2u);
  EXPECT_DOUBLE_EQ(e.report().runtimes(0).neuroncore_counters().cores(0).utilization_percent(), 50);
  // The next sample invalidates the cache.
  clock.Advance(seconds(1));
  core.Sample(clock.Now(), clock.WallNow());
  EXPECT_NE(core.LiveFrame(*every).get(), f1.get());
  // Windows reach back one period per group; the first report carries every subscribed group.
  for (int i = 0; i < 3; ++i) {
    clock.Advance(seconds(1));
    core.Sample(clock.Now(), clock.WallNow());
  }
  const auto slow_frame = core.LiveFrame(*slow);  // seq 6... not due either
  EXPECT_EQ(slow_frame, nullptr);
  std::optional<v1::Report> first = core.ReportAt(*slow, 6, ReportScope::kFirst);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->window_start_seq(), 1u);
  EXPECT_EQ(first->period_ns(), 5'000'000'000u);
  EXPECT_FALSE(core.ReportAt(*slow, 6, ReportScope::kReplay).has_value());
  EXPECT_TRUE(core.ReportAt(*slow, 5, ReportScope::kReplay)->replay());
  const v1::Welcome w = core.MakeWelcome(clock.Now());
  EXPECT_EQ(w.oldest_seq(), 1u);
  EXPECT_EQ(w.newest_seq(), 6u);
  EXPECT_EQ(w.base_period_ns(), 1'000'000'000u);
  EXPECT_EQ(w.daemon_version(), "test");
}

}  // namespace
}  // namespace neuronmon::daemon
