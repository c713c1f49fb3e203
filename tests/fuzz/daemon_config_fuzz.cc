// Fuzzes neuron-monitord's config file: ParseConfig(text) reads the JSON (comments allowed),
// every field's type and syntax, then ValidateConfig's value rules — which build the simulated
// instance the device and scenario name and read it once to size the history. A scenario named by
// path would be read from disk; such inputs are skipped, so the target reads no files and stays
// deterministic (scenario files have their own target, scenario_fuzz).
// Invariants: no crash, no exception escapes (ParseConfig's contract is a Result), a refusal
// comes with at least one problem and its message is the first problem, and an acceptance with
// none.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/config/config_file.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("daemon_config_fuzz", what);
}

// Whether the config names its scenario by path (simdev::LoadScenario's rule): it would be read.
bool NamesScenarioFile(std::string_view text) {
  const nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                                    /*allow_exceptions=*/false,
                                                    /*ignore_comments=*/true);
  if (!json.is_object()) return false;
  const auto it = json.find("scenario");
  if (it == json.end() || !it->is_string()) return false;
  const std::string& name = it->get_ref<const std::string&>();
  return name.find('/') != std::string::npos || name.ends_with(".json");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (NamesScenarioFile(text)) return 0;
  std::vector<std::string> problems;
  neuronmon::Result<neuronmon::daemon::DaemonConfig> config =
      neuronmon::daemon::ParseConfig(text, "fuzz.json", &problems);
  if (!config.ok()) {
    if (problems.empty()) Fail("refused without a problem");
    if (config.status().message() != problems.front()) Fail("the message is not the first problem");
    return 0;
  }
  if (!problems.empty()) Fail("accepted with problems");
  return 0;
}
