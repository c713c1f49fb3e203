// The replay screen's keys: which keys quit, the `t` prompt (typing, Enter jumps, Escape gives up,
// a bad time is said once), the replay keys, and the usual keys where a replay key does not apply.
// The recording is a fake of one sample a second; time is the test's.
#include "tui/replay_keys.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/tui/fake_recording.h"

namespace neuronmon::tui {
namespace {

using std::chrono::seconds;

const WallTime kStart = fakes::kRecordingStart;

class ReplayKeysTest : public ::testing::Test {
 protected:
  ReplayKeysTest() {
    auto started =
        ReplayPlayer::Start(std::make_unique<fakes::FakeRecording>(600), 1, 1, state_.live, now_);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (started.ok()) player_ = std::move(*started);
  }
  Effect Press(Key key) { return ApplyReplayInput({key}, state_, *player_, prompt_, now_); }
  Effect Type(const std::string& text) {
    Effect last = Effect::kNone;
    for (char c : text) last = Press(CharKey(c));
    return last;
  }
  bool Quits(Key key) const { return QuitsReplay({key}, state_, prompt_); }
  long Shown() const {
    return static_cast<long>(
        std::chrono::duration_cast<seconds>(player_->shown() - kStart).count());
  }

  TopState state_;
  ReplayPrompt prompt_;
  ReplayPlayer::Steady::time_point now_ = ReplayPlayer::Steady::time_point(seconds(1000));
  std::unique_ptr<ReplayPlayer> player_;
};

TEST_F(ReplayKeysTest, QIsTypedIntoPromptsAndQuitsElsewhere) {
  EXPECT_TRUE(Quits(CharKey('q')));
  EXPECT_TRUE(Quits(Key::kCtrlC));
  Press(CharKey('t'));
  EXPECT_FALSE(Quits(CharKey('q')));
  EXPECT_TRUE(Quits(Key::kCtrlC));
  prompt_ = {};
  state_.view.procs.shown = true;
  state_.view.procs.filtering = true;  // the Processes view's filter prompt
  EXPECT_FALSE(Quits(CharKey('q')));
}

TEST_F(ReplayKeysTest, TypingATimeJumpsToIt) {
  EXPECT_EQ(Press(CharKey('t')), Effect::kNone);
  EXPECT_TRUE(prompt_.open);
  Type("08:0x");
  Press(Key::kBackspace);
  Type("5");
  EXPECT_NE(ReplayStatus(*player_, prompt_)
                .find(" | jump to (21:30, +10m, 2026-12-04T21:30:00Z): 08:05_"),
            std::string::npos)
      << ReplayStatus(*player_, prompt_);
  Press(Key::kEnter);
  EXPECT_FALSE(prompt_.open);
  EXPECT_EQ(prompt_.text, "");
  EXPECT_EQ(Shown(), 300);
  EXPECT_EQ(ReplayStatus(*player_, prompt_), player_->StatusText());
}

TEST_F(ReplayKeysTest, ABadTimeIsSaidUntilTheNextKey) {
  Press(CharKey('t'));
  Type("soon");
  Press(Key::kEnter);
  EXPECT_EQ(prompt_.problem.rfind("t: ", 0), 0u) << prompt_.problem;
  EXPECT_NE(ReplayStatus(*player_, prompt_).find(" | t: "), std::string::npos);
  EXPECT_EQ(Shown(), 0) << "a bad time changes nothing";
  Press(CharKey('.'));
  EXPECT_EQ(prompt_.problem, "");
}

TEST_F(ReplayKeysTest, EscapeGivesUpTheJump) {
  Press(CharKey('t'));
  Type("08:05");
  Press(Key::kEscape);
  EXPECT_FALSE(prompt_.open);
  EXPECT_EQ(prompt_.text, "");
  EXPECT_EQ(Shown(), 0);
}

TEST_F(ReplayKeysTest, ReplayKeysPlayTheRecording) {
  Press(CharKey(' '));
  EXPECT_TRUE(player_->paused());
  Press(CharKey(']'));
  EXPECT_EQ(Shown(), 10);
  Press(CharKey('}'));
  EXPECT_EQ(Shown(), 70);
  Press(CharKey(','));
  EXPECT_EQ(Shown(), 69);
  Press(Key::kEnd);
  EXPECT_EQ(Shown(), 599);
  Press(Key::kHome);
  EXPECT_EQ(Shown(), 0);
  Press(CharKey('>'));
  EXPECT_EQ(player_->speed(), 2);
}

TEST_F(ReplayKeysTest, TheUsualKeysApplyWhereNoReplayKeyDoes) {
  EXPECT_FALSE(state_.view.flops);
  EXPECT_EQ(Press(CharKey('f')), Effect::kNone);
  EXPECT_TRUE(state_.view.flops);
  // With the help open, space is the help's (it closes it), not a pause.
  state_.view.help = true;
  Press(CharKey(' '));
  EXPECT_FALSE(player_->paused());
  EXPECT_FALSE(state_.view.help);
  // In the Processes view, Home and End select a process rather than seek.
  Press(CharKey(']'));
  state_.view.procs.shown = true;
  Press(Key::kHome);
  EXPECT_EQ(Shown(), 10);
}

}  // namespace
}  // namespace neuronmon::tui
