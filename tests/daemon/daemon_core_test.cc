// DaemonCore: sampling into the history and the shared-frame cache, one encoded frame per
// distinct subscription and window. Times come from a ManualClock; nothing sleeps.
#include "daemon/core/daemon_core.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "proto/wire/frame_codec.h"
#include "tests/daemon/core_fixture.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;
using testing::Base;
using testing::Request;

// A backend returning scripted snapshots.
class FakeBackend final : public Backend {
 public:
  v1::Inventory Inventory(MonoTime) override { return testing::Inventory(); }
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

namespace neuronmon::daemon {
namespace {

// A FakeBackend that names itself, to tell two apart.
class NamedBackend final : public Backend {
 public:
  explicit NamedBackend(std::string name) : name_(std::move(name)) {}
  v1::Inventory Inventory(MonoTime) override { return testing::Inventory(); }
  Snapshot Read(MonoTime now) override {
    ++reads;
    return Base(
        0, static_cast<int>(std::chrono::duration_cast<seconds>(now.time_since_epoch()).count()));
  }
  std::string Describe() const override { return name_ + " after " + std::to_string(reads); }
  int reads = 0;

 private:
  std::string name_;
};

TEST(DaemonCore, AReadInFlightWhenTheBackendIsReplacedIsDropped) {
  DaemonCore core({seconds(1), seconds(10), "test"}, std::make_unique<NamedBackend>("old"),
                  nullptr);
  EXPECT_EQ(core.Describe(), "old after 0");
  ManualClock clock(MonoTime(seconds(100)), WallTime(seconds(1767225600)));
  // Read off the core (as the daemon does on its read thread), then append.
  ReadJob first = core.NextRead();
  Reading reading = first.Run(clock.Now());
  EXPECT_EQ(core.Append(std::move(reading), first.generation, clock.Now(), clock.WallNow()), 1u);
  EXPECT_EQ(core.Describe(), "old after 1") << "the description comes with the reading";

  ReadJob stale = core.NextRead();
  core.ReplaceBackend(std::make_unique<NamedBackend>("new"), clock.Now());
  EXPECT_EQ(core.Describe(), "new after 0");
  clock.Advance(seconds(1));
  Reading late = stale.Run(clock.Now());  // the old backend, kept alive by the job
  EXPECT_EQ(core.Append(std::move(late), stale.generation, clock.Now(), clock.WallNow()), 0u);
  EXPECT_TRUE(core.history().empty());
  EXPECT_EQ(core.Describe(), "new after 0");

  ReadJob next = core.NextRead();
  EXPECT_NE(next.generation, stale.generation);
  EXPECT_EQ(core.Append(next.Run(clock.Now()), next.generation, clock.Now(), clock.WallNow()), 2u);
  EXPECT_EQ(core.history().size(), 1u);
}

}  // namespace
}  // namespace neuronmon::daemon
