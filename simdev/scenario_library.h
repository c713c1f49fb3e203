// The named scenarios shipped with neuronmon (simdev/scenarios/*.json, compiled into the binary so
// every program finds them without an installed data directory), and loading a user's own file.
// Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proto/common/status.h"
#include "simdev/scenario.h"

namespace neuronmon::simdev {

inline constexpr std::string_view kDefaultScenario = "healthy-training";

struct BuiltinScenario {
  std::string_view name;
  std::string_view json;
};

// Sorted by name.
const std::vector<BuiltinScenario>& BuiltinScenarios();

// `name_or_path` is a built-in name ("straggler") or a path to a JSON file (anything containing
// '/' or ending in ".json"). Errors name the file and the offending field, or list the built-ins.
Result<Scenario> LoadScenario(std::string_view name_or_path);

}  // namespace neuronmon::simdev
