#include "simdev/scenario_library.h"

#include <algorithm>
#include <fstream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (4 << 20))
    return Status::InvalidArgument(path + ": file larger than 4 MiB");
  return ParseScenario(text.str(), path);
}

}  // namespace neuronmon::simdev
