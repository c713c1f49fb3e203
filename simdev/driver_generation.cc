#include "simdev/driver_generation.h"

#include <utility>

namespace neuronmon::simdev {
namespace {

// Prefix moves of the reorganised tree, the longest first.
using Moves = std::pair<std::string_view, std::string_view>;
constexpr Moves kDeviceMoves[] = {
    {"stats/hardware/health_status/", "health_status/"},
    {"stats/hardware/", "stats/hardware/ecc/"},
    {"stats/memory_usage/host_mem/", "stats/memory/host_mem/"},
    {"info/architecture/", "info/arch/"},
};
constexpr Moves kCoreMoves[] = {
    {"stats/status/", "stats/execution/status/"},
    {"stats/memory_usage/device_mem/", "stats/memory/device_mem/"},
    {"stats/tensor_engine/", "engines/tensor/"},
};

template <std::size_t N>
std::string Place(const DriverGeneration& g, std::string_view canonical, const Moves (&moves)[N]) {
  if (g.moved) {
    for (const auto& [from, to] : moves) {
      if (canonical.substr(0, from.size()) == from) {
        return std::string(to) + std::string(canonical.substr(from.size()));
      }
    }
  }
  return std::string(canonical);
}

}  // namespace

DriverGeneration GenerationOf(const DriverVersion& version) {
  DriverGeneration g;
  g.topology_root_only = !version.AtLeast({2, 28});
  g.health_status = !g.topology_root_only;
  g.live_counters = version.AtLeast({2, 30, 2});
  g.health_extras = g.live_counters;
  g.moved = version.AtLeast({2, 31});
  return g;
}

std::string PlaceDeviceNode(const DriverGeneration& g, std::string_view canonical) {
  return Place(g, canonical, kDeviceMoves);
}

std::string PlaceCoreNode(const DriverGeneration& g, std::string_view canonical) {
  return Place(g, canonical, kCoreMoves);
}

}  // namespace neuronmon::simdev
