// The Neuron runtime's datastore of one process on one device, as the runtime fills it and the
// driver maps it (proto/common/datastore_layout.h): what the simulator writes beside its driver
// tree (DriverTreeOptions::datastore_root) so the real-host reader can be tested by a round trip.
// Pure; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/common/datastore_layout.h"

namespace neuronmon::simdev {

struct DatastoreImage {
  std::int32_t format_version = 1;
  std::array<std::uint64_t, datastore::kDeviceCounterCount> device{};
  // The device's physical cores in order (at most datastore::kMaxCores), every counter of each.
  std::vector<std::array<std::uint64_t, datastore::kTotalCoreCounters>> cores;
};

// The image's bytes: datastore::kDriverSize of them, every byte not a counter 0.
std::string EncodeDatastore(const DatastoreImage& image);

}  // namespace neuronmon::simdev
