// Signalling an application from the Processes view (`k`): neuron-top signals it itself, with the
// user's own rights, and only when the pids it shows are processes of this host. SignalGuard says
// why a signal must not be sent — the data is simulated, the daemon is reached over TCP or the
// screen replays a recording, the pid could name a process group, the daemon did not say when the
// process started — and SendSignal sends one through an injected sender (tests never send a real
// signal) and words the outcome. The real sender opens a pidfd, checks that the process behind it
// started when the daemon said (a pid freed and reused since names another process) and signals
// through the pidfd, so the process checked is the process signalled. Pure apart from the sender;
// thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tui/model.h"

namespace neuronmon::tui {

// What a sender returns when `pid` names a process that did not start at `start_ticks`.
inline constexpr int kAnotherProcess = -1;
// Sends `signal` to the process `pid` that started at `start_ticks` (clock ticks after boot, as
// v1.Process.start_time_ticks); returns 0, an errno, or kAnotherProcess.
using SignalSender = std::function<int(std::uint32_t pid, std::uint64_t start_ticks, int signal)>;
// The real sender: pidfd_open(2), the start time of /proc/<pid>/stat, pidfd_send_signal(2).
SignalSender PidfdSender();

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
