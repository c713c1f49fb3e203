#include "tui/process_signal.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <system_error>

#include "proto/common/file_reader.h"
#include "proto/common/terminal_text.h"
#include "proto/common/unique_fd.h"
#include "proto/procfs/proc_parsers.h"
#include "tui/canvas.h"

namespace neuronmon::tui {

namespace {

// When the process `pid` started, as the latest report says; 0 unknown.
std::uint64_t StartTicksOf(const Model& model, std::uint32_t pid) {
  const RuntimeView* runtime = model.runtime(pid);
  return runtime == nullptr ? 0 : runtime->report.start_time_ticks();
}

}  // namespace

SignalSender PidfdSender() {
  return [](std::uint32_t pid, std::uint64_t start_ticks, int signal) {
    // Through syscall(2): Debian 12's <sys/pidfd.h> declares them without C linkage.
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0u)));
    if (pidfd.get() < 0) return errno;
    // Read after the pidfd is open: if the pid was reused before, the stat is the new process's
    // and differs; if after, the pidfd still refers to the process checked (signalling it then
    // fails with ESRCH).
    const Result<procfs::ProcessStat> stat = procfs::ReadProcessStat("/proc", pid);
    if (!stat.ok() && stat.status().code() != StatusCode::kInvalidArgument) return ESRCH;
    if (!stat.ok() || stat->start_ticks != start_ticks) return kAnotherProcess;
    return ::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0u) == 0 ? 0 : errno;
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
  // Without the start time a reused pid cannot be told from the process listed.
  if (StartTicksOf(model, pid) == 0) {
    return "not sent: the daemon did not say when " + who +
           " started, so neuron-top cannot tell it from a process that took its pid since";
  }
  return "";
}

std::string SendSignal(const Model& model, const SignalTarget& target, std::uint32_t pid,
                       int signal, const std::string& command) {
  std::string refusal = SignalRefusal(model, target, pid);
  if (!refusal.empty()) return refusal;
  const std::string what = SignalName(signal) + " to pid " + std::to_string(pid);
  const int error = target.sender(pid, StartTicksOf(model, pid), signal);
  if (error == kAnotherProcess) {
    return "not sent: pid " + std::to_string(pid) +
           " is now another process (it started after the one listed had exited)";
  }
  if (error != 0) {
    return what + " failed: " + std::error_code(error, std::generic_category()).message();
  }
  const std::string shown =
      command.empty() ? "" : " (" + std::string(TakeColumns(command, 40)) + ")";
  return SanitizeForTerminal("sent " + what + shown);
}

}  // namespace neuronmon::tui
