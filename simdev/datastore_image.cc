#include "simdev/datastore_image.h"

#include <algorithm>
#include <cstring>

namespace neuronmon::simdev {

std::string EncodeDatastore(const DatastoreImage& image) {
  std::string out(datastore::kDriverSize, '\0');
  std::memcpy(out.data(), "nds", 4);
  std::memcpy(out.data() + 4, &image.format_version, sizeof image.format_version);
  const auto put = [&](std::size_t offset, std::uint64_t v) {
    std::memcpy(out.data() + offset, &v, sizeof v);
  };
  for (std::size_t i = 0; i < image.device.size(); ++i) {
    put(datastore::DeviceCounterOffset(i), image.device[i]);
  }
  const std::size_t cores = std::min(image.cores.size(), datastore::kMaxCores);
  for (std::size_t c = 0; c < cores; ++c) {
    for (std::size_t k = 0; k < datastore::kTotalCoreCounters; ++k) {
      put(datastore::CoreCounterOffset(c, k), image.cores[c][k]);
    }
  }
  return out;
}

}  // namespace neuronmon::simdev
