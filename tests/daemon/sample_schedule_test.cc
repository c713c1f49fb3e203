// SampleSchedule: deadlines keep their phase, late ticks are counted and skipped. Times are
// literals; nothing sleeps.
#include <gtest/gtest.h>

#include <chrono>

#include "daemon/core/report/schedule.h"

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

}  // namespace
}  // namespace neuronmon::daemon
