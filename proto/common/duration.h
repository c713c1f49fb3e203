// Duration strings as neuron-monitor's config file writes them (Go duration syntax): a sequence of
// decimal numbers, each with a unit, such as "1s", "500ms", "1m30s", "1.5h", "2h45m". Units are
// ns, us (or µs), ms, s, m, h. A bare number, a sign, an unknown unit or a value that does not fit
// in int64 nanoseconds is an error. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon {

// The sampling periods there may be: a daemon's `period` (its config) and what a recording's or a
// daemon's Welcome may claim (a replay refuses a header outside them).
inline constexpr Nanos kShortestPeriod = std::chrono::milliseconds(10);
inline constexpr Nanos kLongestPeriod = std::chrono::hours(1);

// Parses `text`. Errors are kInvalidArgument with a message that quotes `text` and says what is
// wrong (e.g. `"5": missing unit (use e.g. "5s")`).
Result<Nanos> ParseDuration(std::string_view text);

// The shortest string ParseDuration reads back to `d`: "1s", "1m30s", "500ms", "0s".
// REQUIRES: d >= 0.
std::string FormatDuration(Nanos d);

// A measured duration as people read it, rounded to what matters: "850us", "3.2ms", "120ms",
// "3.9s", "2m5s", "1h2m" — for logs and notices, where FormatDuration's exactness would print
// "3855147795ns". A negative duration prints as "0us".
std::string FormatElapsed(Nanos d);

}  // namespace neuronmon
