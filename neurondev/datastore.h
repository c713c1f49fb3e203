// The Neuron runtime's datastore: the shared memory the driver keeps per runtime process
// (aws-neuron-driver share/neuron_driver_shared.h, neuron_ds.c), which AWS's neuron-monitor reads
// for every per-application figure. This file decodes one image of it — a copy of the mapping, or
// a file holding the same bytes — into counters; it reads nothing itself. Pure and thread-safe.
//
// The layout, as the driver's macros place it (offsets in bytes):
//   header              0: signature 'n','d','s',0 and the format version (int)
//   device counters     8: NDS_ND_COUNTER_COUNT (31) u64 — versions, host memory by category, ...
//   core counters     256: NDS_NC_COUNTER_COUNT (31) u64 for each of cores 0-3
//   extended counters 55936: 64 u64 for each of cores 0-3 (the counters numbered 31-94)
//   full core sets    57984: 96 u64 (95 counters, one of padding) for each of cores 4-15
// The driver itself reads the counters at these offsets whatever the header's version says
// (get_neuroncore_counter_value, nsysfsmetric_nds_aggregate); the decoder checks the signature,
// a written version and the size before reading a counter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "proto/common/status.h"

namespace neuronmon::neurondev::datastore {

// Device counters (NDS_ND_COUNTER_*).
enum DeviceCounter : std::uint32_t {
  kRuntimeVersion = 0,
  kFrameworkVersion = 1,
  kFalVersion = 2,
  kFeatureBitmap = 3,
  kMinNeffVersion = 4,
  kMaxNeffVersion = 5,
  kHostCode = 6,
  kHostTensors = 7,
  kHostConstants = 8,
  kHostScratchpad = 9,
  kHostMisc = 10,
  kDynamicSysfsMetricBitmap = 11,
  kDeviceClusterId = 12,
};
inline constexpr std::size_t kDeviceCounterCount = 31;  // NDS_ND_COUNTER_COUNT

// NeuronCore counters (NDS_NC_COUNTER_*, then NDS_EXT_NC_COUNTER_* from 31).
enum CoreCounter : std::uint32_t {
  kTimeInUse = 0,  // microseconds busy (what sysfs's nc_time_in_use adds up)
  kInferCompleted = 1,
  kInferCompletedWithErr = 2,
  kInferCompletedWithNumErr = 3,
  kInferTimedOut = 4,
  kInferIncorrectInput = 5,
  kInferFailedToQueue = 6,
  kErrGeneric = 7,
  kErrNumerical = 8,
  kErrModel = 9,
  kErrTransient = 10,
  kErrHw = 11,
  kErrRt = 12,
  kLatencyDevice = 13,
  kLatencyTotal = 14,
  kNcTime = 15,
  kGenericFail = 16,
  kErrResource = 17,
  kErrResourceNc = 18,
  kErrInvalid = 19,
  kErrUnsupportedNeffVersion = 20,
  kCcTime = 21,  // time in collective operations
  kDeviceCode = 22,
  kDeviceTensors = 23,
  kDeviceConstants = 24,
  kDeviceScratchpad = 25,
  kDeviceMisc = 26,
  kModelLoadCount = 27,
  kInferenceCount = 28,
  kMacCount = 29,  // multiply-accumulates: 2 FLOPs each
  kOob = 30,
  kHwErrCollectives = 31,
  kHwErrHbmUe = 32,
  kHwErrNcUe = 33,
  kHwErrDmaAbort = 34,
  kErrSwNqOverflow = 35,
  kErrSwSemaphore = 36,
  kErrSwEvent = 37,
  kErrSwPsumCollision = 38,
  kErrSwSequencerFatal = 39,
  kHwErrRepairableHbmUe = 40,
};
inline constexpr std::size_t kCoreCounterCount = 31;  // NDS_NC_COUNTER_COUNT: the original set
inline constexpr std::size_t kExtCounterCount = 64;   // NDS_EXT_NC_COUNTER_COUNT
inline constexpr std::size_t kTotalCoreCounters = kCoreCounterCount + kExtCounterCount;  // 95
inline constexpr std::size_t kMaxCores = 16;  // 4 in the original section, 12 in full sets

// Byte offsets of the sections (the driver's macros, evaluated).
inline constexpr std::size_t kHeaderSize = 8;
inline constexpr std::size_t kDeviceCountersStart = kHeaderSize;
inline constexpr std::size_t kCoreCountersStart = kDeviceCountersStart + kDeviceCounterCount * 8;
inline constexpr std::size_t kExtCountersStart = 55936;
inline constexpr std::size_t kFullCoreSetsStart = 57984;
inline constexpr std::size_t kFullCoreSetStride = 96;  // counters per full set, with padding
// The bytes an image must hold for every counter of 16 cores (the driver maps 256 KiB).
inline constexpr std::size_t kMinimumSize = kFullCoreSetsStart + 12 * kFullCoreSetStride * 8;
// The driver's datastore size (NEURON_DATASTORE_SIZE); an image is never read beyond it.
inline constexpr std::size_t kDriverSize = 256 * 1024;

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

}  // namespace neuronmon::neurondev::datastore
