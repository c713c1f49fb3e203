// Which source serves which signal on a real host, in order of precedence: one table for
// neuron-ls --driver and docs/real-hosts.md's "source" column. The runtime's datastore comes first
// (the runtime's own counters, per process, on any driver), AWS's neuron-monitor only for what the
// datastore cannot give, the driver's sysfs for the device and as the fallback. ProbeSources finds
// out what this host offers without opening a device or running anything (access and stat only);
// SignalSources is pure. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "neurondev/host.h"

namespace neuronmon::neurondev {

struct SourceFacts {
  std::string driver_version;  // the driver tree's, "" unknown
  // Driver 2.30.2 or later: nc_time_in_use, flop_count and execution counts move live.
  bool live_counters = false;
  // The datastore source ("the driver (/dev/neuron<N>)", "image files under DIR"); "" when the
  // datastores cannot be read, and then why in datastores_unavailable.
  std::string datastores;
  std::string datastores_unavailable;
  std::string neuron_monitor;  // its path when installed and executable, else ""
  std::string neuron_monitor_unavailable;
  std::string kernel_log_unavailable;  // "" when the kernel log can be read
};

struct SignalSource {
  std::string signal;                // "NeuronCore busy time"
  std::vector<std::string> sources;  // the first serves, the rest are fallbacks in order
  std::string unavailable;           // non-empty when no source serves it: why
};

SourceFacts ProbeSources(const HostOptions& options);
std::vector<SignalSource> SignalSources(const SourceFacts& facts);

}  // namespace neuronmon::neurondev
