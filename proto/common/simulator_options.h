// SimulatorOptions: what a daemon's simulated device is asked to be from a command line —
// neuron-monitord's --device, --scenario, --seed, --speed and --period, and the same flags of the
// clients' in-process daemon (--standalone). Unset fields keep the daemon's configuration. One
// struct from the flags to the daemon's config (daemon/server/daemon.h, ApplySimulatorOptions).
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace neuronmon {

struct SimulatorOptions {
  std::optional<std::string> device;    // "auto", "neuron" or "sim:<preset>[:lnc=N]"
  std::optional<std::string> scenario;  // a built-in name or a .json file
  std::optional<std::uint64_t> seed;
  std::optional<double> speed;
  std::optional<std::string> period;  // base period, e.g. "1s"
  // With device "neuron" (neuron-ls --check reading this host without a daemon): where the host's
  // trees are mounted, and `driver_only`: read the driver's sysfs tree and /proc alone — no
  // runtime datastores, no neuron-monitor child, no kernel log, no kubelet.
  std::optional<std::string> sysfs_root;
  std::optional<std::string> proc_root;
  bool driver_only = false;
};

}  // namespace neuronmon
