// SampleSchedule: when the sampler runs. Deadlines are the previous deadline plus the period —
// never "now + period" — so sampling does not drift. A wake-up later than one whole period counts
// the deadlines it missed and skips them: the sampler samples once and moves on, it never bunches
// catch-up samples. Pure; the caller supplies the times. Not thread-safe.
#pragma once

#include <cstdint>

#include "proto/common/clock.h"

namespace neuronmon::daemon {

class SampleSchedule {
 public:
  // The first deadline is `start`. REQUIRES: period > 0.
  SampleSchedule(MonoTime start, Nanos period);

  MonoTime next_deadline() const { return next_; }
  Nanos period() const { return period_; }
  std::uint64_t missed_total() const { return missed_total_; }

  struct Tick {
    MonoTime deadline;         // the deadline this sample stands for
    std::uint64_t missed = 0;  // deadlines skipped before it
  };
  // Called when woken at `now`. REQUIRES: now >= next_deadline(). Returns the tick to sample for
  // and advances next_deadline() past `now`.
  Tick OnWake(MonoTime now);
  // A new period takes effect from the next deadline (reload); the phase restarts at `now`.
  void SetPeriod(MonoTime now, Nanos period);

 private:
  MonoTime next_;
  Nanos period_;
  std::uint64_t missed_total_ = 0;
};

}  // namespace neuronmon::daemon
