// Fuzzes the scenario loader and the simulator behind it: ParseScenario(text) (the format of
// docs/scenarios.md, comments allowed) and, when it parses, Instance::Create on the preset the
// scenario names (trn1.2xlarge when that is unknown, or the 64-device UltraServer, too slow to
// fuzz), then reads at 0, 1 s, 15 s and 2 min of simulated time — the read the daemon's config
// check makes to size the history — and one back at 1 s (a replay from the start), with the
// inventory and expected verdicts at each. Every numeric field is bounded by the parser, so one
// input's reads must stay well under libFuzzer's -timeout: an input that takes seconds is a
// finding (a scenario file, or a config naming one, could stall the daemon).
// Invariants: no crash or sanitizer report, no exception escapes, reads return the instance's
// devices, and the same time read twice gives the same snapshot.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "simdev/instance.h"
#include "simdev/preset.h"
#include "simdev/scenario.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

using neuronmon::Nanos;
using std::chrono::seconds;

[[noreturn]] void Fail(std::string_view what) { neuronmon::fuzz::FuzzFail("scenario_fuzz", what); }

neuronmon::simdev::InstanceSpec PresetFor(const neuronmon::simdev::Scenario& scenario) {
  if (scenario.instance != "trn2-ultraserver") {
    auto spec = neuronmon::simdev::FindPreset(scenario.instance);
    if (spec.ok()) return *spec;
  }
  return *neuronmon::simdev::FindPreset("trn1.2xlarge");
}

void Check(const neuronmon::Snapshot& s, const neuronmon::simdev::InstanceSpec& spec) {
  if (s.devices.size() != static_cast<std::size_t>(spec.device_count)) {
    Fail("a snapshot with the wrong number of devices");
  }
}

// What a read at one time must repeat exactly, however the instance was read before (Instance's
// contract): the counters that drive every report.
std::string Fingerprint(const neuronmon::Snapshot& s) {
  std::string out = std::to_string(s.device_time.count()) + "/" + std::to_string(s.epoch) + "/";
  for (const neuronmon::CoreCounters& c : s.cores) out += std::to_string(c.busy_ns) + ",";
  for (const neuronmon::DeviceCounters& d : s.devices) {
    out += std::to_string(d.hbm_read_bytes) + ":" + std::to_string(d.ecc.mem_corrected) + ",";
  }
  for (const neuronmon::RuntimeSample& r : s.runtimes) {
    out += r.tag + "=" + std::to_string(r.pid) + ":" + std::to_string(r.executions.completed) + ",";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::simdev;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  neuronmon::Result<Scenario> scenario = ParseScenario(text, "fuzz.json");
  if (!scenario.ok()) {
    if (!scenario.status().message().starts_with("fuzz.json")) Fail("an error not naming the file");
    return 0;
  }
  const InstanceSpec spec = PresetFor(*scenario);
  auto instance = Instance::Create(spec, *scenario, size);
  if (!instance.ok()) return 0;
  Instance& sim = **instance;
  std::string at_one_second;
  for (Nanos t : {Nanos(0), Nanos(seconds(1)), Nanos(seconds(15)), Nanos(seconds(120))}) {
    const neuronmon::Snapshot s = sim.Read(t);
    Check(s, spec);
    if (t == seconds(1)) at_one_second = Fingerprint(s);
    (void)sim.Inventory(t);
    (void)sim.Expected(t);
  }
  const neuronmon::Snapshot replayed = sim.Read(seconds(1));
  Check(replayed, spec);
  if (Fingerprint(replayed) != at_one_second) Fail("a replayed read differs from the first");
  return 0;
}
