// Fuzzes the kernel log's record parser with hostile records: any local user gets text into the
// kernel log (a program's name in a segfault line, a write to /dev/kmsg), and any process that can
// open a Neuron device prints whole lines through the driver. The input is one record as
// /dev/kmsg or `dmesg --raw` gives it. Invariants: no crash; an event comes only from a record of
// the kernel facility at level err whose message starts with "NEURON_HW_ERR=", and its fields keep
// their bounds (type [A-Z0-9_] of 1..64 bytes, serial and action at most 64 bytes, indices below a
// million or -1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "neurondev/kernel_log.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("kernel_log_fuzz", what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::neurondev;
  const std::string_view record(reinterpret_cast<const char*>(data), size);
  const std::optional<KernelHwError> e = ParseKernelLogRecord(record);
  if (!e) return 0;
  const std::optional<KernelLogRecord> r = SplitKernelLogRecord(record);
  if (!r) Fail("an event from a line that is not a record");
  if (r->facility != kKernelFacility || r->level != kLevelErr) {
    Fail("an event at facility " + std::to_string(r->facility) + " level " +
         std::to_string(r->level));
  }
  if (!r->message.starts_with("NEURON_HW_ERR=")) Fail("an event not at the message's start");
  if (e->type.empty() || e->type.size() > 64) Fail("a type of " + std::to_string(e->type.size()));
  for (const char c : e->type) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) Fail("a type char");
  }
  if (e->serial.size() > 64 || e->action.size() > 64) Fail("an unbounded field");
  if (e->device < -1 || e->device >= 1000000 || e->core < -1 || e->core >= 1000000) {
    Fail("an index out of bounds");
  }
  return 0;
}
