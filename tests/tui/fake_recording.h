// FakeRecording: a ReplaySource of `length` one-second samples from kRecordingStart, each report
// carrying its recorded second in its seq — for the replay screen's tests, with time driven by the
// test. Counts the seeks asked of it. Not thread-safe.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "client/replay_source.h"

namespace neuronmon::tui::fakes {

inline const WallTime kRecordingStart =
    WallTime(std::chrono::seconds(1796112000));  // 2026-12-01T08:00Z

class FakeRecording final : public client::ReplaySource {
 public:
  // `instance_type`: what the Welcome's inventory names ("": nothing).
  explicit FakeRecording(int length, std::string instance_type = "")
      : length_(length), instance_type_(std::move(instance_type)) {}
  v1::Welcome Welcome() const override {
    v1::Welcome w;
    w.set_base_period_ns(1'000'000'000);
    if (!instance_type_.empty()) {
      w.mutable_inventory()->mutable_instance_info()->set_instance_type(instance_type_);
    }
    return w;
  }
  Status Subscribe(const std::vector<v1::Subscribe>& subs) override {
    subscriptions_ = subs.size();
    return Status::Ok();
  }
  bool Step(std::vector<std::optional<v1::Report>>& reports) override {
    if (next_ >= length_) return false;
    v1::Report r;
    r.set_seq(static_cast<std::uint64_t>(next_) + 1);
    r.set_period_ns(1'000'000'000);
    reports.assign(subscriptions_, r);
    time_ = kRecordingStart + std::chrono::seconds(next_++);
    return true;
  }
  Status Seek(WallTime wall) override {
    next_ = static_cast<int>(std::clamp<std::int64_t>(
        std::chrono::duration_cast<std::chrono::seconds>(wall - kRecordingStart).count(), 0,
        length_));
    ++seeks;
    return Status::Ok();
  }
  WallTime Time() const override { return time_; }
  WallTime Start() const override { return kRecordingStart; }
  WallTime LastChunk() const override {
    return kRecordingStart + std::chrono::seconds(std::max(0, length_ - 10));
  }
  std::vector<std::string> TakeNotices() override { return {}; }
  std::string Describe() const override { return "recording fake"; }
  int seeks = 0;

 private:
  int length_;
  std::string instance_type_;
  int next_ = 0;
  std::size_t subscriptions_ = 0;
  WallTime time_;
};

}  // namespace neuronmon::tui::fakes
