// neuron-ls --driver: what the Neuron driver on this machine exposes, read from the sysfs tree
// directly (no daemon): its version and layout generation, and per device the nodes the reader
// knows found where the 2.24–2.30 layout has them, found elsewhere (moved), expected but missing,
// and the nodes found that it does not know (neurondev/node_index.h) — the paste that tells the
// project a new driver's layout — and which source serves which signal on this host, in order of
// precedence (neurondev/sources.h: runtime datastores, AWS's neuron-monitor, the driver's sysfs).
// Text (node names stripped of control characters) or JSON.
// Functions only; thread-safe.
#pragma once

#include <iosfwd>
#include <string>

#include "neurondev/host.h"

namespace neuronmon::exporter {

// The generation the driver version "2.28.4.0" belongs to: "2.24-2.27", "2.28-2.30.1", "2.30.2",
// "2.31+ (reorganised)", or "unknown".
std::string LayoutGeneration(const std::string& driver_version);

// Prints the report of the tree under `host.sysfs_root` (the sources as `host` would read them) to
// `out`. Returns 1 (saying why on `err`) when there is no Neuron device there, else 0.
int PrintDriverReport(const neurondev::HostOptions& host, bool json, std::ostream& out,
                      std::ostream& err);

}  // namespace neuronmon::exporter
