#include "proto/common/clock.h"

namespace neuronmon {

MonoTime SteadyClock::Now() const { return std::chrono::steady_clock::now(); }
WallTime SteadyClock::WallNow() const { return std::chrono::system_clock::now(); }

ManualClock::ManualClock()
    : mono_(MonoTime(std::chrono::seconds(1000))),
      wall_(WallTime(std::chrono::seconds(1767225600))) {}  // 2026-01-01T00:00:00Z

}  // namespace neuronmon
