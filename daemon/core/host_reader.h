// Host metrics for the system groups (vcpu_usage, memory_info) come from the real host: stat and
// meminfo under the config's proc_root (/proc), parsed by the pure functions in proc_parsers.h. A
// file that cannot be read or parsed becomes the group's error string, never a failure of the
// sample.
#pragma once

#include <functional>
#include <string>

#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

using HostReader = std::function<HostSample()>;

// Reads `proc_root`/stat and `proc_root`/meminfo.
HostSample ReadHost(const std::string& proc_root = "/proc");

// Converts parsed file contents; errors go to the sample's error strings.
HostSample HostFromText(std::string_view stat, std::string_view meminfo);

}  // namespace neuronmon::daemon
