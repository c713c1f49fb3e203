// Fuzzes the parser of AWS neuron-monitor's documents, which the daemon reads from a child process
// whose output another program writes: ParseMonitorDocument (bounded, never throws), then
// MonitorIntegrator::Add of what it accepted, twice (as consecutive documents). Invariants: no
// crash and no exception escapes; an accepted document lists at most MonitorLimits::max_runtimes
// runtimes, and the integrator tracks at most max_runtimes, none of them absent from the document.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "neurondev/monitor_document.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("monitor_document_fuzz", what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::neurondev;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const MonitorLimits limits;
  neuronmon::Result<MonitorDocument> doc = ParseMonitorDocument(line, limits);
  if (!doc.ok()) return 0;
  if (doc->runtimes.size() > limits.max_runtimes) Fail("more runtimes than the limit");
  IntegratorOptions options;
  options.max_runtimes = 4;
  MonitorIntegrator integrator(options);
  const neuronmon::MonoTime start{};
  integrator.Add(*doc, start);
  integrator.Add(*doc, start + std::chrono::seconds(1));
  std::set<std::uint32_t> listed;
  for (const MonitorRuntime& r : doc->runtimes) listed.insert(r.pid);
  const auto runtimes = integrator.Runtimes();
  if (runtimes.size() > options.max_runtimes) Fail("more runtimes tracked than max_runtimes");
  for (const auto& r : runtimes) {
    if (!listed.contains(r.pid)) Fail("a runtime the document does not list is tracked");
  }
  return 0;
}
