// Clock: the only way library code learns the time. Production code passes a SteadyClock; tests
// pass a ManualClock and advance it explicitly, so nothing sleeps. Monotonic time (Now) drives
// schedules and rates; wall time (WallNow) only labels reports.
// SteadyClock is thread-safe; ManualClock is not (tests drive it from one thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace neuronmon {

using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;
using Nanos = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime Now() const = 0;
  virtual WallTime WallNow() const = 0;
};

class SteadyClock final : public Clock {
 public:
  MonoTime Now() const override;
  WallTime WallNow() const override;
};

// Starts at the given instants (defaults: steady epoch + 1000 s, wall 2026-01-01T00:00:00Z) and
// moves only when told. Advance moves both clocks together.
class ManualClock final : public Clock {
 public:
  ManualClock();
  ManualClock(MonoTime mono, WallTime wall) : mono_(mono), wall_(wall) {}

  MonoTime Now() const override { return mono_; }
  WallTime WallNow() const override { return wall_; }

  // REQUIRES: by >= 0.
  void Advance(Nanos by) {
    mono_ += by;
    wall_ += std::chrono::duration_cast<WallTime::duration>(by);
  }

 private:
  MonoTime mono_;
  WallTime wall_;
};

// Nanoseconds since the Unix epoch, as the protocol carries wall times.
inline std::int64_t ToUnixNanos(WallTime t) {
  return std::chrono::duration_cast<Nanos>(t.time_since_epoch()).count();
}

// The wall time `unix_ns` nanoseconds after the Unix epoch (the inverse of ToUnixNanos).
inline WallTime FromUnixNanos(std::int64_t unix_ns) {
  return WallTime(std::chrono::duration_cast<WallTime::duration>(Nanos(unix_ns)));
}

// RFC 3339 in UTC with milliseconds ("2026-12-07T16:25:01.000Z"), truncated (not rounded) so a
// time is never shown later than it was: the daemon's log lines and its events.
std::string FormatUtcMillis(WallTime time);

}  // namespace neuronmon
