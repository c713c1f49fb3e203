// Test helper: the rates of a window between two snapshots, computed independently of the daemon's
// report builder so simdev can be checked on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/common/snapshot.h"
#include "simdev/preset.h"

namespace neuronmon::simdev::testing {

struct RuntimeWindow {
  std::uint32_t pid = 0;
  std::string tag;
  double utilization = 0;       // mean over the runtime's cores, percent
  double flops_fraction = 0;    // FLOP/s over the cores' bf16 peak
  double collective_share = 0;  // time in collectives / window
  double p50_collective = 0;    // seconds, over all operations
  std::uint64_t executions = 0;
  std::uint64_t errors = 0;
  std::uint64_t hardware_errors = 0;
};

struct Window {
  double seconds = 0;
  std::vector<double> core_utilization;  // percent, by core
  std::vector<double> hbm_fraction;      // (read + write) / peak, by device
  std::vector<RuntimeWindow> runtimes;
};

Window Between(const InstanceSpec& spec, const Snapshot& a, const Snapshot& b);

}  // namespace neuronmon::simdev::testing
