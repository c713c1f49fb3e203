// The Neuron runtime's datastore: the shared memory the driver keeps per runtime process
// (aws-neuron-driver share/neuron_driver_shared.h, neuron_ds.c), which AWS's neuron-monitor reads
// for every per-application figure. This file decodes one image of it — a copy of the mapping, or
// a file holding the same bytes — into counters; it reads nothing itself. Pure and thread-safe.
// The driver itself reads the counters at the layout's offsets (proto/common/datastore_layout.h)
// whatever the header's version says (get_neuroncore_counter_value, nsysfsmetric_nds_aggregate);
// the decoder checks the signature, a written version and the size before reading a counter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "proto/common/datastore_layout.h"
#include "proto/common/status.h"

namespace neuronmon::datastore {

// A version counter (nmetric_version_t): major.minor.build; 0 when the runtime wrote none.
struct Version {
  std::uint32_t major = 0, minor = 0, build = 0;
  bool known() const { return major != 0 || minor != 0 || build != 0; }
  std::string Text() const;  // "2.22.14", "" when unknown
};
Version DecodeVersion(std::uint64_t counter);

struct Reading {
  int format_version = 0;  // the header's
  std::array<std::uint64_t, kDeviceCounterCount> device{};
  // Cores 0 .. cores-1 of the device (the caller says how many it has), each every counter.
  std::vector<std::array<std::uint64_t, kTotalCoreCounters>> cores;

  std::uint64_t Core(std::size_t core, CoreCounter counter) const { return cores[core][counter]; }
  Version runtime_version() const { return DecodeVersion(device[kRuntimeVersion]); }
  Version framework_version() const { return DecodeVersion(device[kFrameworkVersion]); }
};

// Decodes `image` for a device of `cores` NeuronCores (1-16): refuses, with the reason, an image
// shorter than kMinimumSize, one without the 'n','d','s',0 signature, and one whose version is 0
// (a datastore cleared or not yet written) or negative. Reads at most kDriverSize bytes.
Result<Reading> Decode(std::span<const std::byte> image, std::size_t cores);

// Whether `later` is `earlier` or grew from it: no counter went backwards. Only the cumulative
// counters are compared (not memory, versions or bitmaps, which may fall). "" when it grew, else
// the first counter that fell, named ("core 3 counter 0 (time in use) fell from 900 to 12").
std::string FellBack(const Reading& earlier, const Reading& later);

}  // namespace neuronmon::datastore
