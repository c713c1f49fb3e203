// The daemon under soak and where it lives: TempDir, a fresh temp dir removed with everything in
// it when it goes; DaemonProcess, neuron-monitord as a child process that is killed if still
// running when it goes; soak.json, the daemon's config; WaitReady. The daemon's config raises
// max_clients, max_clients_per_uid and max_handshaking so that every abusive client, all from one
// uid, gets in — the worst case for the daemon — and keeps the history to --retention, shorter
// than --warmup, so the history is full before RSS is first measured. The other limits keep their
// defaults; they are what is being soaked. Each object is used by one thread (soak's main).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/soak/options.h"

namespace neuronmon::soak {

// A temp dir ("soak-XXXXXX"), removed with everything in it when this goes. path() is empty when
// it could not be created.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// "exited with status 1", "killed by signal 11 (Segmentation fault), core dumped".
std::string DescribeWaitStatus(int status);

// Starts `argv` (argv[0] is the binary) in its own process group (a terminal's Ctrl-C reaches only
// soak) with default signal dispositions: stdin /dev/null, stdout into `out`, stderr into `err`
// (one descriptor when they are the same path). Its pid, or -1 with `error` set.
pid_t SpawnChild(std::vector<std::string> argv, const std::filesystem::path& out,
                 const std::filesystem::path& err, std::string& error);

struct StopOutcome {
  std::string description;  // how it ended
  double seconds = 0;       // from SIGTERM to exit
  bool clean = false;       // exited 0 on SIGTERM, without SIGKILL
};

// The daemon as a child process (SpawnChild), stdout and stderr into a log file. Killed if still
// running when this goes.
class DaemonProcess {
 public:
  DaemonProcess() = default;
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;
  ~DaemonProcess();

  // Starts `argv` (argv[0] is the binary). False with `error` set when it cannot.
  bool Start(std::vector<std::string> argv, const std::filesystem::path& log, std::string& error);
  // How it ended when it has; nullopt while it runs.
  std::optional<std::string> Exited();
  // SIGTERM, then SIGKILL after 5 s.
  StopOutcome Stop();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_;  // wait status once reaped
};

// soak.json in `dir`: room for every abusive client from our one uid, and a history shorter than
// the warm-up. Returns its path; empty when it cannot be written.
// `extra`: more keys of the config's top level, each line ending in ",\n".
std::filesystem::path WriteSoakConfig(const std::filesystem::path& dir, const SoakOptions& o,
                                      const std::string& extra = "");

// Waits until the daemon's socket exists and /metrics accepts connections (up to 15 s). False
// when the daemon exits or the time is up first.
bool WaitReady(DaemonProcess& daemon, const std::string& socket_path, std::uint16_t port);

}  // namespace neuronmon::soak
