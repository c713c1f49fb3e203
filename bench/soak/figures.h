// Helpers that turn soak's samples into figures: a percentile, seconds, a tally by key as one line,
// printf into a std::string. Pure functions of their arguments; safe from any thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench/soak/options.h"
#include "proto/common/order_statistics.h"

namespace neuronmon::soak {

// The `q` quantile of `v` (the nearest rank); 0 when `v` is empty.
inline double Percentile(std::vector<double> v, double q) {
  return Quantile(std::move(v), q, RankRounding::kNearest);
}

inline double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

// "a 3, b 1" from a tally map, most frequent first; "none" when empty.
template <typename Key>
std::string Tallied(const std::map<Key, std::uint64_t>& counts) {
  std::vector<std::pair<std::uint64_t, std::string>> sorted;
  for (const auto& [key, n] : counts) {
    if constexpr (std::is_same_v<Key, std::string>) {
      sorted.emplace_back(n, key);
    } else {
      sorted.emplace_back(n, std::to_string(key));
    }
  }
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  for (const auto& [n, key] : sorted)
    out += (out.empty() ? "" : ", ") + key + " " + std::to_string(n);
  return out.empty() ? "none" : out;
}

// snprintf into a string of at most 511 characters.
std::string Format(const char* format, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

}  // namespace neuronmon::soak
