// The Neuron runtime's datastore layout (aws-neuron-driver share/neuron_driver_shared.h): the
// counters' numbers and where the driver's macros place them. One home for the reader
// (neurondev/datastore) and the simulator's writer (simdev/datastore_image); the layout test
// (tests/neurondev/datastore_test.cc) checks it against the macros written out independently.
//
// The layout, as the driver's macros place it (offsets in bytes):
//   header              0: signature 'n','d','s',0 and the format version (int)
//   device counters     8: NDS_ND_COUNTER_COUNT (31) u64 — versions, host memory by category, ...
//   core counters     256: NDS_NC_COUNTER_COUNT (31) u64 for each of cores 0-3
//   extended counters 55936: 64 u64 for each of cores 0-3 (the counters numbered 31-94)
//   full core sets    57984: 96 u64 (95 counters, one of padding) for each of cores 4-15
// The cores are physical NeuronCores of the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/common/execution_counters.h"
#include "proto/common/hardware_errors.h"
#include "proto/common/snapshot.h"

namespace neuronmon::datastore {

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

// Where counter `counter` of core `core` is (the driver's get_neuroncore_counter_value).
constexpr std::size_t CoreCounterOffset(std::size_t core, std::size_t counter) {
  if (core < 4) {
    if (counter < kCoreCounterCount) {
      return kCoreCountersStart + (core * kCoreCounterCount + counter) * 8;
    }
    return kExtCountersStart + (core * kExtCounterCount + counter - kCoreCounterCount) * 8;
  }
  return kFullCoreSetsStart + ((core - 4) * kFullCoreSetStride + counter) * 8;
}
constexpr std::size_t DeviceCounterOffset(std::size_t counter) {
  return kDeviceCountersStart + counter * 8;
}

// nmetric_version_t: build in bits 0-31, minor in 32-39, major in 40-47.
constexpr std::uint64_t EncodeVersion(std::uint32_t major, std::uint32_t minor,
                                      std::uint32_t build) {
  return (std::uint64_t{major & 0xff} << 40) | (std::uint64_t{minor & 0xff} << 32) | build;
}

// Each execution counter of a core and the ExecutionCounters field it is.
struct ExecutionCounter {
  CoreCounter counter;
  std::uint64_t ExecutionCounters::*field;
};
inline constexpr ExecutionCounter kExecutionCounters[] = {
    {kInferCompleted, &ExecutionCounters::completed},
    {kInferCompletedWithErr, &ExecutionCounters::completed_with_err},
    {kInferCompletedWithNumErr, &ExecutionCounters::completed_with_num_err},
    {kInferTimedOut, &ExecutionCounters::timed_out},
    {kInferIncorrectInput, &ExecutionCounters::incorrect_input},
    {kInferFailedToQueue, &ExecutionCounters::failed_to_queue},
    {kErrGeneric, &ExecutionCounters::generic},
    {kErrNumerical, &ExecutionCounters::numerical},
    {kErrModel, &ExecutionCounters::model},
    {kErrTransient, &ExecutionCounters::transient},
    {kErrHw, &ExecutionCounters::hardware},
    {kErrRt, &ExecutionCounters::runtime},
};

// The hardware errors of the extension counted per core, by the device's counter they add to, and
// the driver's per-core `stats/status/<name>` counter of the same number (which the driver adds a
// process's counts to when it exits, and from 2.30.2 while it runs): one table for the datastore
// reader, the sysfs reader and the simulator's writers of both.
struct HardwareErrorCounter {
  std::uint32_t counter;  // a CoreCounter
  std::uint64_t HardwareErrors::*field;
  std::string_view sysfs_name;
};
inline constexpr HardwareErrorCounter kHardwareErrorCounters[] = {
    {kHwErrNcUe, &HardwareErrors::nc_uncorrectable, "hw_nc_ue_error"},
    {kHwErrHbmUe, &HardwareErrors::hbm_uncorrectable, "hw_hbm_ue_error"},
    {kHwErrDmaAbort, &HardwareErrors::dma_abort, "hw_dma_abort_error"},
    {kHwErrCollectives, &HardwareErrors::collectives, "hw_collectives_error"},
    {kHwErrRepairableHbmUe, &HardwareErrors::hbm_repairable, "hw_repairable_hbm_ue_error"},
};

// The runtime's five device memory categories a core's counters hold, by the field of the
// snapshot's CoreMemory (the driver's sysfs category of the same name).
struct DeviceMemoryCounter {
  std::uint32_t counter;  // a CoreCounter
  std::uint64_t CoreMemory::*field;
};
inline constexpr DeviceMemoryCounter kDeviceMemoryCounters[] = {
    {kDeviceCode, &CoreMemory::model_code},
    {kDeviceTensors, &CoreMemory::tensors},
    {kDeviceConstants, &CoreMemory::constants},
    {kDeviceScratchpad, &CoreMemory::model_shared_scratchpad},
    {kDeviceMisc, &CoreMemory::runtime_memory},
};

// The host memory categories of the device counters, by the field of the snapshot's HostMemory
// (code is the driver's dma_buffers, misc its application_memory; its sysfs has no host
// scratchpad category: kHostScratchpad is not read).
struct HostMemoryCounter {
  std::uint32_t counter;  // a DeviceCounter
  std::uint64_t HostMemory::*field;
};
inline constexpr HostMemoryCounter kHostMemoryCounters[] = {
    {kHostCode, &HostMemory::dma_buffers},
    {kHostTensors, &HostMemory::tensors},
    {kHostConstants, &HostMemory::constants},
    {kHostMisc, &HostMemory::application_memory},
};

}  // namespace neuronmon::datastore
