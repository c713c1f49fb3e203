// ReplayPlayer: a recording plays at its recorded pace times the speed, pauses, steps, seeks and
// refills the graphs, with time driven by the test (nothing sleeps). The source is a fake: one
// report a second, each carrying its recorded second in its seq.
#include "tui/replay_player.h"

#include <gtest/gtest.h>

#include "tests/tui/fake_recording.h"

namespace neuronmon::tui {
namespace {

using std::chrono::seconds;
using Steady = ReplayPlayer::Steady;

const WallTime kStart = fakes::kRecordingStart;

struct PlayerTest : ::testing::Test {
  void Start(int length, double speed = 1) {
    auto source = std::make_unique<fakes::FakeRecording>(length, "trn1.32xlarge");
    fake = source.get();
    auto p = ReplayPlayer::Start(std::move(source), 1, speed, model, now);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    player = std::move(*p);
  }
  void Wait(std::chrono::milliseconds d) {
    now += d;
    player->Advance(model, now);
  }
  long Shown() const {
    return static_cast<long>(std::chrono::duration_cast<seconds>(player->shown() - kStart).count());
  }
  Model model;
  Steady::time_point now = Steady::time_point(seconds(1000));
  fakes::FakeRecording* fake = nullptr;
  std::unique_ptr<ReplayPlayer> player;
};

TEST_F(PlayerTest, PlaysAtTheRecordedPaceTimesTheSpeed) {
  Start(600);
  EXPECT_EQ(Shown(), 0);
  EXPECT_EQ(model.last_seq(), 1u);
  Wait(std::chrono::milliseconds(999));
  EXPECT_EQ(Shown(), 0) << "the next sample is a second later";
  Wait(std::chrono::milliseconds(1));
  EXPECT_EQ(Shown(), 1);
  player->Faster();
  player->Faster();
  Wait(seconds(10));
  EXPECT_EQ(Shown(), 41) << "4x for 10 s";
  EXPECT_NE(player->StatusText().find("REPLAY 2026-12-01 08:00:41Z 4x"), std::string::npos)
      << player->StatusText();
}

// However fast the replay and however long since the last screen update, one update applies a
// bounded number of samples; a replay that cannot keep up does not carry a backlog.
TEST_F(PlayerTest, AnUpdateDoesBoundedWork) {
  Start(3000, 1024);
  Wait(seconds(1));  // 1024 samples due
  EXPECT_EQ(Shown(), 256);
  Wait(std::chrono::milliseconds(1));  // ~1 more, not the 768 left behind
  EXPECT_EQ(Shown(), 257);
  Wait(seconds(3600));  // an hour without an update: still one update's worth
  EXPECT_EQ(Shown(), 513);
}

TEST_F(PlayerTest, PausesStepsAndSeeks) {
  Start(600);
  Wait(seconds(30));
  player->TogglePause(now);
  Wait(seconds(30));
  EXPECT_EQ(Shown(), 30) << "paused";
  EXPECT_NE(player->StatusText().find("PAUSED"), std::string::npos);
  player->Step(model, 1, now);
  EXPECT_EQ(Shown(), 31);
  player->Step(model, -1, now);
  EXPECT_EQ(Shown(), 30);
  player->SeekBy(model, seconds(60), now);
  EXPECT_EQ(Shown(), 90);
  // The graphs were refilled with the minutes before the target, from a fresh model.
  EXPECT_GE(model.reports(), 60u);
  player->SeekBy(model, -std::chrono::minutes(5), now);
  EXPECT_EQ(Shown(), 0) << "clamped to the start";
  std::string error;
  EXPECT_TRUE(player->SeekToText(model, "08:05", now, &error)) << error;
  EXPECT_EQ(Shown(), 300);
  EXPECT_FALSE(player->SeekToText(model, "soon", now, &error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(Shown(), 300) << "a bad time changes nothing";
  player->TogglePause(now);
  Wait(seconds(5));
  EXPECT_EQ(Shown(), 305) << "resumes from where it paused";
}

TEST_F(PlayerTest, StopsAtTheEndAndSaysSo) {
  Start(20, 8);
  Wait(seconds(10));
  EXPECT_TRUE(player->ended());
  EXPECT_EQ(Shown(), 19);
  EXPECT_NE(player->StatusText().find("END"), std::string::npos);
  player->SeekTo(model, WallTime::max() - std::chrono::hours(24), now);
  EXPECT_EQ(Shown(), 19) << "End shows the last sample";
  player->SeekTo(model, kStart + seconds(5), now);
  EXPECT_FALSE(player->ended());
  EXPECT_EQ(Shown(), 5);
}

}  // namespace
}  // namespace neuronmon::tui
