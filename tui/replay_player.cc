#include "tui/replay_player.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include "proto/archive/archive.h"

namespace neuronmon::tui {
namespace {

// Recorded minutes replayed silently before a seek's target, so the graphs are full.
constexpr auto kGraphFill = std::chrono::minutes(2);
// Samples one Advance applies at most: a screen update does bounded work whatever the speed and
// however dense the recording; a replay that cannot keep up plays as fast as that allows.
constexpr int kMaxStepsPerAdvance = 256;

std::chrono::nanoseconds Scaled(std::chrono::steady_clock::duration real, double speed) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double, std::nano>(real) * speed);
}

}  // namespace

Result<std::unique_ptr<ReplayPlayer>> ReplayPlayer::Start(
    std::unique_ptr<client::ReplaySource> source, double delay_seconds, double speed, Model& model,
    Steady::time_point now) {
  std::unique_ptr<ReplayPlayer> p(new ReplayPlayer());
  p->source_ = std::move(source);
  p->subscription_ = TopSubscription(delay_seconds);
  p->speed_ = std::clamp(speed, 1.0 / 16, 1024.0);
  if (Status st = p->source_->Subscribe({p->subscription_}); !st.ok()) return st;
  const v1::Welcome welcome = p->source_->Welcome();
  if (welcome.base_period_ns() > 0) p->period_ = Nanos(welcome.base_period_ns());
  model.SetWelcome(welcome);
  model.connection = ConnectionState::kLive;
  model.endpoint = p->source_->Describe();
  if (!p->StepOnce(model)) return Status::NotFound("the recording holds no snapshot to show");
  p->clock_ = p->shown_;
  p->at_ = now;
  return p;
}

bool ReplayPlayer::StepOnce(Model& model) {
  std::vector<std::optional<v1::Report>> reports;
  if (!source_->Step(reports)) {
    ended_ = true;
    return false;
  }
  shown_ = source_->Time();
  for (const v1::Event& event : source_->TakeEvents()) model.AddEvent(event);
  if (!reports.empty() && reports[0]) model.Apply(*reports[0]);
  return true;
}

bool ReplayPlayer::Advance(Model& model, Steady::time_point now) {
  if (paused_ || ended_) {
    at_ = now;
    return false;
  }
  clock_ += std::chrono::duration_cast<WallTime::duration>(Scaled(now - at_, speed_));
  at_ = now;
  bool changed = false;
  // The next sample is about one period after the one shown.
  int steps = 0;
  while (!ended_ && shown_ + period_ <= clock_) {
    if (++steps > kMaxStepsPerAdvance) {
      clock_ = shown_;  // behind: the backlog is dropped, not carried to the next update
      break;
    }
    changed |= StepOnce(model);
  }
  if (ended_) clock_ = shown_;
  return changed;
}

void ReplayPlayer::TogglePause(Steady::time_point now) {
  paused_ = !paused_;
  at_ = now;
  clock_ = shown_;
}

void ReplayPlayer::Rebuild(Model& model, WallTime at) {
  at = std::max(at, source_->Start());
  const v1::Welcome welcome = source_->Welcome();
  model = Model();
  model.SetWelcome(welcome);
  model.connection = ConnectionState::kLive;
  model.endpoint = source_->Describe();
  ended_ = false;
  // Past the last minute: play that minute to its end.
  const WallTime last = source_->LastChunk();
  const bool to_end = at > last;
  (void)source_->Seek((to_end ? last : at) - kGraphFill);
  (void)source_->Subscribe({subscription_});
  while (StepOnce(model)) {
    if (!to_end && shown_ >= at) break;
  }
  clock_ = shown_;
}

void ReplayPlayer::SeekTo(Model& model, WallTime at, Steady::time_point now) {
  Rebuild(model, at);
  at_ = now;
}

void ReplayPlayer::SeekBy(Model& model, Nanos delta, Steady::time_point now) {
  SeekTo(model, shown_ + std::chrono::duration_cast<WallTime::duration>(delta), now);
}

void ReplayPlayer::Step(Model& model, int steps, Steady::time_point now) {
  paused_ = true;
  if (steps > 0) {
    for (int i = 0; i < steps && StepOnce(model); ++i) {
    }
    clock_ = shown_;
    at_ = now;
  } else {
    SeekTo(model, shown_ + std::chrono::duration_cast<WallTime::duration>(period_ * steps), now);
  }
}

bool ReplayPlayer::SeekToText(Model& model, const std::string& text, Steady::time_point now,
                              std::string* error) {
  Result<WallTime> at = archive::ParseReplayTime(text, source_->Start());
  if (!at.ok()) {
    if (error != nullptr) *error = at.status().message();
    return false;
  }
  SeekTo(model, *at, now);
  return true;
}

void ReplayPlayer::Faster() { speed_ = std::min(1024.0, speed_ * 2); }
void ReplayPlayer::Slower() { speed_ = std::max(1.0 / 16, speed_ / 2); }

std::string ReplayPlayer::StatusText() const {
  const std::time_t t = std::chrono::system_clock::to_time_t(shown_);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char when[48];
  std::size_t n = std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  if (period_ < std::chrono::seconds(1)) {  // samples within a second: show which
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        shown_.time_since_epoch() % std::chrono::seconds(1))
                        .count();
    n += static_cast<std::size_t>(
        std::snprintf(when + n, sizeof when - n, ".%03d", static_cast<int>(ms)));
  }
  std::snprintf(when + n, sizeof when - n, "Z");
  char speed[32];
  std::snprintf(speed, sizeof speed, "%gx", speed_);
  std::string s = std::string("REPLAY ") + when + " " + speed;
  if (ended_) s += " END";
  if (paused_) s += " PAUSED";
  return s;
}

}  // namespace neuronmon::tui
