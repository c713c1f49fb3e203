#include "simdev/scenario_library.h"

#include <algorithm>

#include "proto/common/file_reader.h"

namespace neuronmon::simdev {

// Defined in the generated scenario_data.cc.
extern const BuiltinScenario kBuiltinScenarios[];
extern const std::size_t kBuiltinScenarioCount;

const std::vector<BuiltinScenario>& BuiltinScenarios() {
  static const std::vector<BuiltinScenario> list = [] {
    std::vector<BuiltinScenario> v(kBuiltinScenarios, kBuiltinScenarios + kBuiltinScenarioCount);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return v;
  }();
  return list;
}

Result<Scenario> LoadScenario(std::string_view name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string_view::npos ||
      (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (!is_path) {
    for (const BuiltinScenario& s : BuiltinScenarios()) {
      if (s.name == name_or_path) return ParseScenario(s.json, std::string(s.name) + ".json");
    }
    std::string known;
    for (const BuiltinScenario& s : BuiltinScenarios()) {
      known += (known.empty() ? "" : ", ") + std::string(s.name);
    }
    return Status::NotFound("unknown scenario \"" + std::string(name_or_path) +
                            "\" (built-in: " + known + "; or give a path to a .json file)");
  }
  const std::string path(name_or_path);
  // A regular file only: a FIFO or a device named as a scenario would block or never end.
  Result<std::string> text = ReadRegularFile(path, 4 << 20);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

}  // namespace neuronmon::simdev
