// Fuzzes the renderers with hostile daemon messages: a Welcome (its Inventory) and Reports parsed
// from the input's protobuf bytes, as a client receives them, feed neuron-ls's table (every
// option), topology and JSON array, and neuron-monitor's MonitorState and document (with and
// without our extensions). Any counts and strings the wire can carry must render: device indices
// of 2^32-1, thousands of cores or processes, duplicate pids and core ids, huge or NaN gauges,
// control characters in commands and tags.
// Input: byte 0 picks the options; then segments, each a 2-byte length and that many bytes: the
// first is a serialized Welcome, every further one a Report applied from source (1 byte) of
// MonitorState::kMaxSources. Invariants: the JSON outputs parse as JSON (an array of one element
// per device for neuron-ls, an object for neuron-monitor), the table ends its last line.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "exporter/monitor_json.h"
#include "exporter/neuron_ls_format.h"
#include "neuronmon/v1/envelope.pb.h"
#include "proto/wire/protobuf_logs.h"
#include "tests/fuzz/fuzz_fail.h"
#include "tests/fuzz/fuzz_flags.h"
#include "tests/fuzz/fuzz_input.h"

namespace neuronmon::fuzz {
namespace {

constexpr int kMaxReports = 16;

[[noreturn]] void Fail(std::string_view what) { neuronmon::fuzz::FuzzFail("render_fuzz", what); }

nlohmann::json ParseOutput(const std::string& text, const char* what) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) Fail(std::string(what) + " is not valid JSON: " + text.substr(0, 400));
  return json;
}

void RenderLs(const v1::Inventory& inventory) {
  for (int o = 0; o < 4; ++o) {
    const exporter::LsOptions options{(o & 1) != 0, (o & 2) != 0};
    const std::string table = exporter::RenderTable(inventory, options);
    if (table.empty() || table.back() != '\n') Fail("a table without its final newline");
    const nlohmann::json json =
        ParseOutput(exporter::RenderJson(inventory, options), "neuron-ls -j");
    if (!json.is_array() || json.size() != static_cast<std::size_t>(inventory.devices_size())) {
      Fail("neuron-ls -j is not an array of the devices");
    }
  }
  (void)exporter::RenderTopology(inventory);
}

void RenderMonitor(const exporter::MonitorState& state) {
  for (bool extensions : {true, false}) {
    exporter::RenderOptions options;
    options.include_extensions = extensions;
    const nlohmann::json json =
        ParseOutput(exporter::RenderMonitorJson(state, options), "the neuron-monitor document");
    if (!json.is_object()) Fail("the neuron-monitor document is not an object");
  }
}

}  // namespace
}  // namespace neuronmon::fuzz

// Protobuf logs each string field with invalid UTF-8 it meets; thousands a second drown the
// fuzzer's output and slow it down (the daemon's own silencing; FATAL still shows). -entropic=0:
// inputs with tens of thousands of features made libFuzzer's entropic schedule the bottleneck (100
// execs/s; 425 without).
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  neuronmon::wire::SilenceProtobufParseLogs();
  static char entropic_off[] = "-entropic=0";
  neuronmon::fuzz::PrependDefaultFlags(argc, argv, {entropic_off});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon;
  using namespace neuronmon::fuzz;
  FuzzInput in(data, size);
  const std::uint8_t options = in.U8();
  v1::Welcome welcome;
  const std::string welcome_bytes = in.Bytes(in.U16());
  if (!welcome.ParseFromString(welcome_bytes)) return 0;
  exporter::MonitorState state;
  if (options & 1) state.SetInventory(welcome.inventory());
  for (int i = 0; i < kMaxReports && !in.empty(); ++i) {
    const std::size_t source = in.U8() % exporter::MonitorState::kMaxSources;
    v1::Report report;
    if (!report.ParseFromString(in.Bytes(in.U16()))) continue;
    state.Apply(report, source);
    if (options & 2) (void)exporter::RenderMonitorJson(state);  // as neuron-monitor prints
  }
  if (!(options & 1)) state.SetInventory(welcome.inventory());
  RenderMonitor(state);
  RenderLs(welcome.inventory());
  return 0;
}
