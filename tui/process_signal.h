// Signalling an application from the Processes view (`k`): neuron-top calls kill(2) itself, with
// the user's own rights, and only when the pids it shows are processes of this host. SignalGuard
// says why a signal must not be sent — the data is simulated, the daemon is reached over TCP or the
// screen replays a recording, the pid could name a process group — and SendSignal sends one
// through an injected sender (tests never send a real signal) and words the outcome. Pure apart
// from the sender; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tui/model.h"

namespace neuronmon::tui {

// Sends `signal` to `pid`; returns 0 or the errno kill(2) set.
using SignalSender = std::function<int(std::uint32_t pid, int signal)>;
// The real sender: ::kill.
SignalSender KillSender();

// The signals the confirmation offers, SIGTERM first: {number, "SIGTERM"} ...
struct SignalChoice {
  int number;
  const char* name;
  char key;  // the key that picks it in the confirmation
};
const std::vector<SignalChoice>& SignalChoices();
// "SIGTERM", or "signal 12" for one not offered.
std::string SignalName(int signal);

// Where the pids on screen come from, as far as signalling them goes.
struct SignalTarget {
  // Null, or `refusal` non-empty: signals are refused.
  SignalSender sender;
  // Why signals cannot be sent from this screen ("neuron-top is connected over TCP ..."); "" when
  // the daemon is on this host.
  std::string refusal;
};

// Why `pid` must not be signalled (a full sentence for the notice row), or "" when it may be.
std::string SignalRefusal(const Model& model, const SignalTarget& target, std::uint32_t pid);

// Sends `signal` to `pid` unless SignalRefusal objects; returns what happened, for the notice row:
// "sent SIGTERM to pid 4242 (python train.py)", "SIGKILL to pid 4242 failed: Operation not
// permitted", or the refusal.
std::string SendSignal(const Model& model, const SignalTarget& target, std::uint32_t pid,
                       int signal, const std::string& command);

}  // namespace neuronmon::tui
