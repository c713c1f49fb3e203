// SoakOptions: what one soak run is told on its command line (bench/README.md, "Soak"), parsed
// once by ParseSoakOptions and passed by const& to everything else; and Phase, which every load
// component polls (through a std::atomic<Phase> the run owns) to know when to stop. Plain values,
// no shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "proto/common/duration.h"

namespace neuronmon::soak {

using Steady = std::chrono::steady_clock;
using Rng = std::mt19937_64;

// Where the load generators are: running, draining (the daemon is being stopped: open nothing,
// only read what it says), stopped.
enum class Phase { kRunning, kDraining, kStopped };

struct SoakOptions {
  std::string daemon_binary;
  std::string device = "sim:trn2.48xlarge";
  std::string daemon_log;  // empty: in the temp dir, removed after
  Nanos duration = std::chrono::minutes(10);
  Nanos warmup = std::chrono::seconds(30);
  Nanos period = std::chrono::seconds(1);
  Nanos retention = std::chrono::seconds(20);
  int clients = 1000;
  int metrics_connections = 48;
  std::uint64_t seed = 1;
  bool progress = false;
  // --hostile-host: the daemon reads a hostile real host (hostile_host.h) with --device neuron,
  // `device` being the instance the tree simulates; `host_fds` descriptors in the fabricated /proc.
  bool hostile_host = false;
  std::uint64_t host_fds = 1000000;
  // --replayer: the neuron-monitor that replays the hostile recordings (empty: the one next to the
  // daemon, FindReplayer).
  std::string replayer;
};

// Parses soak's command line into `o`. nullopt: go on and run. Otherwise the exit status, the
// message already printed: 0 after --help, CLI11's code for a flag it refuses, 2 for a duration
// that is not one or a --duration that does not exceed --warmup by 10 s.
std::optional<int> ParseSoakOptions(int argc, char** argv, SoakOptions& o);

}  // namespace neuronmon::soak
