// Where neuron-monitord keeps its state — the archive and incident bundles (docs/recorder.md):
// systemd's StateDirectory (/var/lib/neuron-monitor), /var/lib/neuron-monitor as root or under
// systemd, else $XDG_STATE_HOME/neuron-monitor (~/.local/state/neuron-monitor). Reads the
// environment and the effective uid; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace neuronmon {

inline constexpr const char* kSystemStateDirectory = "/var/lib/neuron-monitor";

// The daemon's state directory; "" when the environment does not say (no HOME either).
std::string DefaultStateDirectory();

// Where a client looks for a daemon's state, in order, without duplicates: the system daemon's,
// then this user's own daemon's.
std::vector<std::string> ClientStateCandidates();

}  // namespace neuronmon
