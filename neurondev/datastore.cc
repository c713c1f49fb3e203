#include "neurondev/datastore.h"

#include <algorithm>
#include <cstring>

namespace neuronmon::datastore {
namespace {

// The counters are the host's own u64s (the driver and the runtime share the machine): copied,
// never dereferenced in place, so an image at any alignment reads the same.
std::uint64_t At(std::span<const std::byte> image, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, image.data() + offset, sizeof v);
  return v;
}

bool Cumulative(std::size_t counter) {
  switch (counter) {
    case kLatencyDevice:  // the runtime's figure, not known to be a running total
    case kLatencyTotal:
    case kDeviceCode:  // memory in use: falls when freed
    case kDeviceTensors:
    case kDeviceConstants:
    case kDeviceScratchpad:
    case kDeviceMisc:
      return false;
    default:
      return counter <= kHwErrRepairableHbmUe;  // the reserved rest is not read
  }
}

const char* CounterName(std::size_t counter) {
  switch (counter) {
    case kTimeInUse:
      return "time in use";
    case kNcTime:
      return "nc time";
    case kCcTime:
      return "collectives time";
    case kMacCount:
      return "MAC count";
    case kInferenceCount:
      return "inference count";
    default:
      return "";
  }
}

}  // namespace

Version DecodeVersion(std::uint64_t counter) {
  return {static_cast<std::uint32_t>((counter >> 40) & 0xff),
          static_cast<std::uint32_t>((counter >> 32) & 0xff),
          static_cast<std::uint32_t>(counter & 0xffffffffu)};
}

std::string Version::Text() const {
  if (!known()) return "";
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(build);
}

Result<Reading> Decode(std::span<const std::byte> image, std::size_t cores) {
  if (cores == 0 || cores > kMaxCores) {
    return Status::InvalidArgument("a device of " + std::to_string(cores) +
                                   " NeuronCores (the datastore holds 1 to 16)");
  }
  if (image.size() < kMinimumSize) {
    return Status::InvalidArgument("datastore of " + std::to_string(image.size()) +
                                   " bytes is shorter than its layout (" +
                                   std::to_string(kMinimumSize) + ")");
  }
  image = image.first(std::min(image.size(), kDriverSize));
  static constexpr unsigned char kSignature[4] = {'n', 'd', 's', 0};
  if (std::memcmp(image.data(), kSignature, sizeof kSignature) != 0) {
    return Status::InvalidArgument("not a Neuron datastore (no 'nds' signature)");
  }
  Reading out;
  std::int32_t version = 0;
  std::memcpy(&version, image.data() + 4, sizeof version);
  if (version <= 0) {
    return Status::Unavailable("datastore format version " + std::to_string(version) +
                               " (cleared, or not written yet by the runtime)");
  }
  out.format_version = version;
  for (std::size_t i = 0; i < kDeviceCounterCount; ++i) {
    out.device[i] = At(image, DeviceCounterOffset(i));
  }
  out.cores.resize(cores);
  for (std::size_t c = 0; c < cores; ++c) {
    for (std::size_t k = 0; k < kTotalCoreCounters; ++k)
      out.cores[c][k] = At(image, CoreCounterOffset(c, k));
  }
  return out;
}

std::string FellBack(const Reading& earlier, const Reading& later) {
  const std::size_t cores = std::min(earlier.cores.size(), later.cores.size());
  for (std::size_t c = 0; c < cores; ++c) {
    for (std::size_t k = 0; k < kTotalCoreCounters; ++k) {
      if (!Cumulative(k) || later.cores[c][k] >= earlier.cores[c][k]) continue;
      const std::string name = CounterName(k);
      return "core " + std::to_string(c) + " counter " + std::to_string(k) +
             (name.empty() ? "" : " (" + name + ")") + " fell from " +
             std::to_string(earlier.cores[c][k]) + " to " + std::to_string(later.cores[c][k]);
    }
  }
  return "";
}

}  // namespace neuronmon::datastore
