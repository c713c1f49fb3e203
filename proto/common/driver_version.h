// The Neuron driver's version as /sys/module/neuron/version gives it ("2.30.2.0"): its numbers,
// compared in order. The one parser every layer uses to decide what a driver generation has.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace neuronmon {

struct DriverVersion {
  std::vector<int> parts;  // {2, 30, 2, 0}: at least major and minor

  // Whether this version is `at_least` or later; parts either lacks count as 0.
  bool AtLeast(std::vector<int> at_least) const;
};

// "2.30.2.0" (surrounding whitespace ignored) -> {2, 30, 2, 0}; nullopt unless it is two to eight
// dot-separated decimal numbers of at most six digits each.
std::optional<DriverVersion> ParseDriverVersion(std::string_view text);

}  // namespace neuronmon
