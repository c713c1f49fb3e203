// Where the daemon's unix socket lives (DESIGN.md, Protocol):
// /run/neuron-monitor/neuron-monitord.sock for a daemon running as root or under systemd, else
// $XDG_RUNTIME_DIR/neuron-monitor/...; clients look in the same order. Pure functions over the
// facts they are given; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace neuronmon {

inline constexpr const char* kSystemSocketPath = "/run/neuron-monitor/neuron-monitord.sock";
inline constexpr const char* kSocketName = "neuron-monitord.sock";

struct SocketEnvironment {
  bool root = false;              // effective uid 0
  std::string runtime_directory;  // $RUNTIME_DIRECTORY (systemd RuntimeDirectory=), may be empty
  std::string xdg_runtime_dir;    // $XDG_RUNTIME_DIR, may be empty
  unsigned uid = 0;
};

// The environment of this process.
SocketEnvironment CurrentSocketEnvironment();

// The path a daemon with no configured path listens on.
std::string DaemonSocketPath(const SocketEnvironment& env);

// Candidate paths a client tries, in order (no duplicates).
std::vector<std::string> ClientSocketCandidates(const SocketEnvironment& env);

}  // namespace neuronmon
