// When neuron-top draws: keys at once, data at most once per refresh interval, a moving screen
// every interval; and how long each loop waits for input meanwhile. Time is a ManualClock's.
#include "tui/frame_pacer.h"

#include <gtest/gtest.h>

#include "proto/common/clock.h"

namespace neuronmon::tui {
namespace {

using std::chrono::milliseconds;
using Pending = FramePacer::Pending;

class FramePacerTest : public ::testing::Test {
 protected:
  FramePacer pacer_{milliseconds(1000)};
  ManualClock clock_;  // starts 1000 s after the steady clock's epoch
  double refresh_ = 1.0;
};

TEST_F(FramePacerTest, TheFirstFrameIsDueAtOnce) {
  EXPECT_TRUE(pacer_.ShouldDraw({.changed = true}, refresh_, clock_.Now()));
  EXPECT_EQ(pacer_.WaitMillis({.changed = true}, refresh_, clock_.Now()), 0);
}

TEST_F(FramePacerTest, KeysDrawAtOnce) {
  pacer_.Drew(clock_.Now());
  clock_.Advance(milliseconds(10));
  EXPECT_TRUE(pacer_.ShouldDraw({.input = true}, refresh_, clock_.Now()));
  EXPECT_EQ(pacer_.WaitMillis({.input = true, .periodic = true}, refresh_, clock_.Now()), 0);
}

TEST_F(FramePacerTest, DataDrawsAtMostOncePerInterval) {
  pacer_.Drew(clock_.Now());
  clock_.Advance(milliseconds(300));
  EXPECT_FALSE(pacer_.ShouldDraw({.changed = true}, refresh_, clock_.Now()));
  EXPECT_EQ(pacer_.WaitMillis({.changed = true}, refresh_, clock_.Now()), 700);
  clock_.Advance(milliseconds(700));
  EXPECT_TRUE(pacer_.ShouldDraw({.changed = true}, refresh_, clock_.Now()));
  EXPECT_EQ(pacer_.WaitMillis({.changed = true}, refresh_, clock_.Now()), 0);
  // Nothing changed: no frame, however late.
  clock_.Advance(std::chrono::seconds(5));
  EXPECT_FALSE(pacer_.ShouldDraw({}, refresh_, clock_.Now()));
}

TEST_F(FramePacerTest, WithNothingPendingTheLoopWaitsTheLongest) {
  pacer_.Drew(clock_.Now());
  EXPECT_EQ(pacer_.WaitMillis({}, refresh_, clock_.Now()), 1000);
  FramePacer replay(milliseconds(50));
  replay.Drew(clock_.Now());
  EXPECT_EQ(replay.WaitMillis({}, refresh_, clock_.Now()), 50);
}

TEST_F(FramePacerTest, AWaitNeverPassesTheLongest) {
  pacer_.Drew(clock_.Now());
  refresh_ = 60;
  EXPECT_EQ(pacer_.WaitMillis({.changed = true}, refresh_, clock_.Now()), 1000);
  EXPECT_EQ(pacer_.WaitMillis({.periodic = true}, refresh_, clock_.Now()), 1000);
  // Part milliseconds are cut, as the loops always did.
  refresh_ = 0.1;
  clock_.Advance(std::chrono::microseconds(40'500));
  EXPECT_EQ(pacer_.WaitMillis({.changed = true}, refresh_, clock_.Now()), 59);
}

TEST_F(FramePacerTest, APeriodicScreenDrawsEveryInterval) {
  pacer_.Drew(clock_.Now());
  clock_.Advance(milliseconds(999));
  EXPECT_FALSE(pacer_.ShouldDraw({.periodic = true}, refresh_, clock_.Now()));
  EXPECT_EQ(pacer_.WaitMillis({.periodic = true}, refresh_, clock_.Now()), 1);
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(pacer_.ShouldDraw({.periodic = true}, refresh_, clock_.Now()));
  pacer_.Drew(clock_.Now());
  EXPECT_FALSE(pacer_.ShouldDraw({.periodic = true}, refresh_, clock_.Now()));
}

TEST_F(FramePacerTest, TheIntervalFollowsPlusAndMinus) {
  pacer_.Drew(clock_.Now());
  clock_.Advance(milliseconds(600));
  EXPECT_FALSE(pacer_.ShouldDraw({.changed = true}, 1.0, clock_.Now()));
  EXPECT_TRUE(pacer_.ShouldDraw({.changed = true}, 0.5, clock_.Now()));   // `-` halved it
  EXPECT_FALSE(pacer_.ShouldDraw({.changed = true}, 2.0, clock_.Now()));  // `+` doubled it
  EXPECT_EQ(pacer_.WaitMillis({.changed = true}, 2.0, clock_.Now()), 1000);
  EXPECT_EQ(pacer_.Due(2.0), clock_.Now() + milliseconds(1400));
}

}  // namespace
}  // namespace neuronmon::tui
