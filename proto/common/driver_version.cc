#include "proto/common/driver_version.h"

#include <algorithm>
#include <charconv>
#include <cstddef>

namespace neuronmon {

bool DriverVersion::AtLeast(std::vector<int> at_least) const {
  std::vector<int> mine = parts;
  const std::size_t n = std::max(mine.size(), at_least.size());
  mine.resize(n, 0);
  at_least.resize(n, 0);
  return mine >= at_least;
}

std::optional<DriverVersion> ParseDriverVersion(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const std::size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return std::nullopt;
  text = text.substr(first, text.find_last_not_of(kSpace) - first + 1);
  DriverVersion v;
  while (true) {
    const std::string_view part = text.substr(0, text.find('.'));
    int n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (part.empty() || part.size() > 6 || ec != std::errc() || end != part.data() + part.size() ||
        part.front() == '-' || v.parts.size() == 8) {
      return std::nullopt;
    }
    v.parts.push_back(n);
    if (part.size() == text.size()) break;
    text.remove_prefix(part.size() + 1);
  }
  if (v.parts.size() < 2) return std::nullopt;
  return v;
}

}  // namespace neuronmon
