#include "daemon/core/report/schedule.h"

namespace neuronmon::daemon {

SampleSchedule::SampleSchedule(MonoTime start, Nanos period) : next_(start), period_(period) {}

SampleSchedule::Tick SampleSchedule::OnWake(MonoTime now) {
  // The latest deadline not after `now` is the one we sample for; earlier ones were missed.
  const auto late = static_cast<std::uint64_t>((now - next_) / period_);
  Tick tick{next_ + period_ * static_cast<std::int64_t>(late), late};
  missed_total_ += late;
  next_ = tick.deadline + period_;
  return tick;
}

void SampleSchedule::SetPeriod(MonoTime now, Nanos period) {
  period_ = period;
  next_ = now + period;
}

}  // namespace neuronmon::daemon
