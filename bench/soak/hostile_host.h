// HostileHost: for `soak --hostile-host`, a real host as hostile as its own users can make it
// (bench/README.md, "Hostile host"), which the daemon reads with --device neuron: the Neuron
// driver's tree of a simulated instance (simdev::DriverTreeWriter, rewritten every second) with a
// fabricated /proc in which a few dozen processes hold a million descriptors (none a device); a
// neuron-monitor stand-in (this binary, run as `soak --be-neuron-monitor`) that lists new pids in
// every document and prints malformed and oversized ones; and a kernel log into which forged
// NEURON_HW_ERR lines are appended as users can get them there (a segfaulting program's name, a
// write to /dev/kmsg, a prefixed or free-text line); and a kubelet stand-in (a gRPC server on a
// unix socket) whose PodResources answers alternate, every 10 s, between ~400,000 device ids in
// under 4 MiB and ~1,000,000 in more. Run() appends and rewrites until the phase leaves kRunning.
// Not thread-safe: one thread runs it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "bench/soak/options.h"
#include "proto/common/status.h"
#include "simdev/instance.h"

namespace neuronmon::soak {

class HostileHost {
 public:
  HostileHost();
  ~HostileHost();
  // Writes the tree, the fabricated processes and the stand-in's wrapper under `dir`; false with
  // `error` when it cannot. `self`: this binary's path, which the wrapper runs.
  bool Prepare(const std::filesystem::path& dir, const SoakOptions& o, const std::string& self,
               std::string& error);
  // The daemon's config keys for this host (without the surrounding braces).
  std::string ConfigKeys() const;
  void Run(const std::atomic<Phase>& phase);
  std::uint64_t forged_lines() const { return forged_; }
  std::uint64_t descriptors() const { return descriptors_; }
  // How many times the daemon asked the kubelet stand-in.
  int kubelet_calls() const;

 private:
  struct Tree;
  std::unique_ptr<Tree> tree_;
  std::filesystem::path dir_;
  std::atomic<std::uint64_t> forged_{0};
  std::uint64_t descriptors_ = 0;
};

// The simulated instance --device names, running healthy-training with --seed: what the hostile
// host's tree and its recordings show.
Result<std::unique_ptr<simdev::Instance>> SimulatedInstance(const SoakOptions& o);

// The neuron-monitor stand-in: prints a document every 200 ms, each listing 50 pids never listed
// before; every 7th line is not JSON and every 11th lists 2,000 runtimes (over the parser's
// limit). Returns when stdout closes.
int BeNeuronMonitor();

}  // namespace neuronmon::soak
