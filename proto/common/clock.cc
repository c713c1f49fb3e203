#include "proto/common/clock.h"

#include <cstdio>

namespace neuronmon {

MonoTime SteadyClock::Now() const { return std::chrono::steady_clock::now(); }
WallTime SteadyClock::WallNow() const { return std::chrono::system_clock::now(); }

ManualClock::ManualClock()
    : mono_(MonoTime(std::chrono::seconds(1000))),
      wall_(WallTime(std::chrono::seconds(1767225600))) {}  // 2026-01-01T00:00:00Z

std::string FormatUtcMillis(WallTime time) {
  using namespace std::chrono;
  const auto day = floor<days>(time);
  const year_month_day ymd{day};
  const hh_mm_ss hms{floor<milliseconds>(time - day)};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
                static_cast<int>(hms.subseconds().count()));
  return buf;
}

}  // namespace neuronmon
