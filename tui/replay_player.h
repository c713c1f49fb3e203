// ReplayPlayer: neuron-top on a recording. It plays a client::ReplaySource into the Model at the
// recording's own pace times `speed`, and does what the replay keys ask: pause, step one sample
// forward or back, seek by ±10 s or ±1 min or to a time, change speed. A seek refills the graphs
// with the recorded minutes before the target, so the screen looks as it did live at that time.
// Time comes from the caller (Advance's `now`), so tests drive it without sleeping. Not
// thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/replay_source.h"
#include "tui/model.h"

namespace neuronmon::tui {

class ReplayPlayer {
 public:
  using Steady = std::chrono::steady_clock;

  // Subscribes to neuron-top's groups every `delay_seconds` and shows the first report.
  static Result<std::unique_ptr<ReplayPlayer>> Start(std::unique_ptr<client::ReplaySource> source,
                                                     double delay_seconds, double speed,
                                                     Model& model, Steady::time_point now);

  // Plays what is due by `now` into `model`; true when it changed.
  bool Advance(Model& model, Steady::time_point now);

  void TogglePause(Steady::time_point now);
  // One sample forward (`steps` > 0) or back, pausing first.
  void Step(Model& model, int steps, Steady::time_point now);
  // To `delta` from the time shown, or to `at`; clamped to the recording.
  void SeekBy(Model& model, Nanos delta, Steady::time_point now);
  void SeekTo(Model& model, WallTime at, Steady::time_point now);
  // Seeks to a time the user typed (archive::ParseReplayTime's forms); false and `error` set when
  // it is not one.
  bool SeekToText(Model& model, const std::string& text, Steady::time_point now,
                  std::string* error);
  void Faster();  // twice the speed, at most 1024x
  void Slower();  // half, at least 1/16x

  bool paused() const { return paused_; }
  bool ended() const { return ended_; }
  double speed() const { return speed_; }
  // The recorded time of the sample shown.
  WallTime shown() const { return shown_; }
  // "REPLAY 2026-12-04 21:30:05Z 2x" (+ " PAUSED", " END"): the title's state.
  std::string StatusText() const;
  // Where the recording came from (for the title's endpoint).
  std::string Describe() const { return source_->Describe(); }
  // Notices from the recording (torn tails, unreadable files) since the last call.
  std::vector<std::string> TakeNotices() { return source_->TakeNotices(); }

 private:
  ReplayPlayer() = default;
  // Takes one recorded sample into `model`; false at the end.
  bool StepOnce(Model& model);
  void Rebuild(Model& model, WallTime at);

  std::unique_ptr<client::ReplaySource> source_;
  v1::Subscribe subscription_;
  Nanos period_{std::chrono::seconds(1)};  // the recording's base period
  double speed_ = 1;
  bool paused_ = false;
  bool ended_ = false;
  WallTime shown_;         // recorded time of the newest sample played
  WallTime clock_;         // the replay clock: recorded time "now"
  Steady::time_point at_;  // when clock_ was last set
};

}  // namespace neuronmon::tui
