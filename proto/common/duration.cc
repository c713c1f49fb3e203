#include "proto/common/duration.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace neuronmon {
namespace {

constexpr std::uint64_t kMaxNanos = std::numeric_limits<std::int64_t>::max();

struct Unit {
  std::string_view name;
  std::uint64_t nanos;
};

constexpr Unit kUnits[] = {
    {"ns", 1},
    {"us", 1'000},
    {"\xc2\xb5s", 1'000},  // µs (U+00B5)
    {"\xce\xbcs", 1'000},  // μs (U+03BC)
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
};

Status Bad(std::string_view text, std::string_view what) {
  return Status::InvalidArgument("\"" + std::string(text) + "\": " + std::string(what));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<Nanos> ParseDuration(std::string_view text) {
  if (text.empty()) return Bad(text, "empty duration (use e.g. \"5s\")");
  if (text[0] == '-') return Bad(text, "negative duration");
  if (text[0] == '+') return Bad(text, "unexpected sign (use e.g. \"5s\")");
  std::uint64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    // Integer part, then an optional fraction.
    std::uint64_t whole = 0;
    bool overflow = false;
    const std::size_t number_start = i;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (whole > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) overflow = true;
      whole = whole * 10 + static_cast<std::uint64_t>(text[i] - '0');
    }
    std::uint64_t fraction = 0;
    std::uint64_t scale = 1;
    if (i < text.size() && text[i] == '.') {
      ++i;
      for (; i < text.size() && IsDigit(text[i]); ++i) {
        if (scale < 1'000'000'000'000'000'000ULL) {  // digits past 1e-18 cannot matter
          fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
          scale *= 10;
        }
      }
    }
    if (i == number_start || (i == number_start + 1 && text[number_start] == '.')) {
      return Bad(text, "expected a number before the unit");
    }
    const std::size_t unit_start = i;
    while (i < text.size() && !IsDigit(text[i]) && text[i] != '.') ++i;
    const std::string_view unit_name = text.substr(unit_start, i - unit_start);
    if (unit_name.empty()) return Bad(text, "missing unit (use e.g. \"5s\")");
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (u.name == unit_name) unit = &u;
    }
    if (unit == nullptr) {
      return Bad(text,
                 "unknown unit \"" + std::string(unit_name) + "\" (use ns, us, ms, s, m or h)");
    }
    if (overflow || whole > kMaxNanos / unit->nanos) return Bad(text, "duration too large");
    std::uint64_t value = whole * unit->nanos;
    // fraction < scale <= 1e18, unit <= 3.6e12: split to avoid overflow.
    const long double part = static_cast<long double>(fraction) * unit->nanos / scale;
    value += static_cast<std::uint64_t>(part);
    if (value > kMaxNanos - total) return Bad(text, "duration too large");
    total += value;
  }
  return Nanos(static_cast<std::int64_t>(total));
}

std::string FormatDuration(Nanos d) {
  std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string out;
  if (ns % 1'000'000'000 != 0) {
    // Sub-second durations print in a single unit.
    if (ns < 1'000'000'000) {
      if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
      if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
      return std::to_string(ns) + "ns";
    }
    if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
    return std::to_string(ns) + "ns";
  }
  std::int64_t s = ns / 1'000'000'000;
  const std::int64_t h = s / 3600;
  s %= 3600;
  const std::int64_t m = s / 60;
  s %= 60;
  if (h > 0) out += std::to_string(h) + "h";
  if (m > 0) out += std::to_string(m) + "m";
  if (s > 0) out += std::to_string(s) + "s";
  return out;
}

std::string FormatElapsed(Nanos d) {
  const std::int64_t ns = std::max<std::int64_t>(d.count(), 0);
  char text[32];
  if (ns < 1'000'000) {
    std::snprintf(text, sizeof text, "%lldus", static_cast<long long>((ns + 500) / 1000));
  } else if (ns < 10'000'000) {
    std::snprintf(text, sizeof text, "%.1fms", static_cast<double>(ns) / 1e6);
  } else if (ns < 1'000'000'000) {
    std::snprintf(text, sizeof text, "%lldms", static_cast<long long>((ns + 500'000) / 1'000'000));
  } else if (ns < 59'950'000'000) {
    std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(ns) / 1e9);
  } else {
    // Whole seconds below an hour, whole minutes above.
    const std::int64_t s = (ns + 500'000'000) / 1'000'000'000;
    return FormatDuration(std::chrono::seconds(s < 3600 ? s : (s + 30) / 60 * 60));
  }
  return text;
}

}  // namespace neuronmon
