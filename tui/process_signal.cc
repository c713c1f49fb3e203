#include "tui/process_signal.h"

#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <climits>
#include <system_error>

#include "proto/common/terminal_text.h"
#include "tui/canvas.h"

namespace neuronmon::tui {

SignalSender KillSender() {
  return [](std::uint32_t pid, int signal) {
    return ::kill(static_cast<pid_t>(pid), signal) == 0 ? 0 : errno;
  };
}

const std::vector<SignalChoice>& SignalChoices() {
  static const std::vector<SignalChoice> kChoices = {{SIGTERM, "SIGTERM", 't'},
                                                     {SIGINT, "SIGINT", 'i'},
                                                     {SIGHUP, "SIGHUP", 'h'},
                                                     {SIGKILL, "SIGKILL", 'k'}};
  return kChoices;
}

std::string SignalName(int signal) {
  for (const SignalChoice& c : SignalChoices()) {
    if (c.number == signal) return c.name;
  }
  return "signal " + std::to_string(signal);
}

std::string SignalRefusal(const Model& model, const SignalTarget& target, std::uint32_t pid) {
  const std::string who = "pid " + std::to_string(pid);
  // Simulated pids are not processes of this host: whatever has that pid here is someone else's.
  if (model.inventory().simulated()) {
    return "not sent: " + who + " is simulated, not a process on this host";
  }
  if (!target.refusal.empty()) return "not sent: " + target.refusal;
  if (!target.sender) return "not sent: signals cannot be sent from this screen";
  // kill(2) reads 0 and -1 as "my process group" and "every process I may signal", and a pid above
  // INT_MAX would turn negative (a process group); 1 is init.
  if (pid <= 1 || pid > static_cast<std::uint32_t>(INT_MAX)) {
    return "not sent: " + who + " is not a process neuron-top signals";
  }
  return "";
}

std::string SendSignal(const Model& model, const SignalTarget& target, std::uint32_t pid,
                       int signal, const std::string& command) {
  std::string refusal = SignalRefusal(model, target, pid);
  if (!refusal.empty()) return refusal;
  const std::string what = SignalName(signal) + " to pid " + std::to_string(pid);
  const int error = target.sender(pid, signal);
  if (error != 0) {
    return what + " failed: " + std::error_code(error, std::generic_category()).message();
  }
  const std::string shown =
      command.empty() ? "" : " (" + std::string(TakeColumns(command, 40)) + ")";
  return SanitizeForTerminal("sent " + what + shown);
}

}  // namespace neuronmon::tui
