#include "bench/soak/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>

#include "bench/soak/client_io.h"
#include "bench/soak/figures.h"

namespace neuronmon::soak {
using namespace std::chrono_literals;

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (!WIFSIGNALED(status)) return "stopped (wait status " + std::to_string(status) + ")";
  const int sig = WTERMSIG(status);
  return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")" +
         (WCOREDUMP(status) ? ", core dumped" : "");
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "soak-XXXXXX").string();
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0 && !exit_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

pid_t SpawnChild(std::vector<std::string> argv, const std::filesystem::path& out,
                 const std::filesystem::path& err, std::string& error) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (err == out) {
    posix_spawn_file_actions_adddup2(&files, 1, 2);
  } else {
    posix_spawn_file_actions_addopen(&files, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &files, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  if (rc == 0) return pid;
  error = "cannot start " + argv[0] + ": " + std::strerror(rc);
  return -1;
}

bool DaemonProcess::Start(std::vector<std::string> argv, const std::filesystem::path& log,
                          std::string& error) {
  pid_ = SpawnChild(std::move(argv), log, log, error);
  return pid_ > 0;
}

std::optional<std::string> DaemonProcess::Exited() {
  int status = 0;
  if (!exit_ && pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) exit_ = status;
  if (!exit_) return std::nullopt;
  return DescribeWaitStatus(*exit_);
}

StopOutcome DaemonProcess::Stop() {
  StopOutcome out;
  if (auto already = Exited()) return {*already + " before it was stopped", 0, false};
  const auto start = Steady::now();
  ::kill(pid_, SIGTERM);
  while (!Exited() && Steady::now() - start < 5s) std::this_thread::sleep_for(10ms);
  out.seconds = Seconds(Steady::now() - start);
  if (!exit_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_ = status;
    out.description = "still running 5 s after SIGTERM, killed";
    return out;
  }
  out.description = DescribeWaitStatus(*exit_) + " after SIGTERM";
  out.clean = WIFEXITED(*exit_) && WEXITSTATUS(*exit_) == 0;
  return out;
}

std::filesystem::path WriteSoakConfig(const std::filesystem::path& dir, const SoakOptions& o,
                                      const std::string& extra) {
  const int room = std::max(4096, 2 * o.clients + 64);
  const Nanos retention = std::max(o.retention, o.period);
  const std::filesystem::path path = dir / "soak.json";
  std::ofstream out(path);
  out << "// Written by bench/soak: every abusive client (all one uid) gets in; the history is\n"
      << "// shorter than the warm-up, so it is full before RSS is first measured.\n"
      << "{\n  " << extra << "  \"history_retention\": \"" << FormatDuration(retention) << "\",\n"
      << "  \"limits\": {\"max_clients\": " << room << ", \"max_clients_per_uid\": " << room
      << ", \"max_handshaking\": " << std::max(2048, o.clients + 64) << "}\n}\n";
  return out.good() ? path : std::filesystem::path();
}

bool WaitReady(DaemonProcess& daemon, const std::string& socket_path, std::uint16_t port) {
  for (auto give_up = Steady::now() + 15s; Steady::now() < give_up;) {
    if (daemon.Exited()) return false;
    if (std::filesystem::exists(socket_path) && ConnectLoopback(port, 0).valid()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

}  // namespace neuronmon::soak
