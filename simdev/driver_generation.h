// The driver generations DriverTreeWriter can write, as data: which nodes each has, where they
// live and with which modes. 2.24 (topology files root-only, no health_status), 2.28
// (health_status/, topology readable by all), 2.30.2 (live counters, corrected ECC counts,
// unhealthy_components, healthcheck_heartbeat) and 2.31, whose reorganised tree AWS has not
// published: the writer moves nodes into other sub-directories of its own design
// (docs/driver-tree.md) and adds nodes the reader does not know, so that reading by name is tested.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proto/common/driver_version.h"

namespace neuronmon::simdev {

struct DriverGeneration {
  bool topology_root_only = false;  // core_count, connected_devices mode 0400 (before 2.28)
  bool health_status = false;       // stats/hardware/health_status/ (2.28+)
  bool live_counters = false;       // status/ and other_info/ move while a process runs (2.30.2+)
  bool health_extras = false;       // corrected ECC, unhealthy_components, heartbeat (2.30.2+)
  bool moved = false;               // the reorganised tree (2.31+)
};

// The generation of driver `version` ({2, 30, 2, 0}).
DriverGeneration GenerationOf(const DriverVersion& version);

// Where the node at `canonical` (its path in the 2.24–2.30 layout, relative to the device's
// directory, or to a core's for `core` nodes) lives in generation `g`.
std::string PlaceDeviceNode(const DriverGeneration& g, std::string_view canonical);
std::string PlaceCoreNode(const DriverGeneration& g, std::string_view canonical);

}  // namespace neuronmon::simdev
