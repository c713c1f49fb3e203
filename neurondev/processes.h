// ScanProcesses: which processes hold Neuron devices open, read from /proc (the root is
// injectable for tests). A process holds device N when one of its `fd/*` links points at
// `/dev/neuron<N>` and that descriptor was not opened write-only: the `flags` of its
// `fdinfo/<fd>` tell, and a write-only open is the driver's "free access" for query ioctls
// (AWS's neuron-ls, our own BDF lookup), not an application. A descriptor whose fdinfo cannot be
// read or parsed counts as a holder (conservative: a process is never hidden for want of it).
// For the processes holding a device the scan also reads the command line, `comm`, the real uid
// and its user name, the cgroup and the NEURON_PROCESS_TAG environment variable. Everything a
// process wrote itself (command line, comm, tag, cgroup path) is untrusted: it is bounded and
// stripped of control characters and invalid UTF-8 before it reaches the result. Other users'
// processes cannot be inspected without root or CAP_SYS_PTRACE: they are counted, not errors;
// processes that exit mid-scan are skipped. Any user can hold hundreds of thousands of
// descriptors, each a readlinkat to examine, so ProcessScanner spreads a scan over samples within
// a budget of descriptors and time per sample and bounds each uid's share of a scan, keeping the
// last complete result meanwhile. ScanProcesses is one whole scan. Thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neurondev/attribution.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"
#include "proto/procfs/proc_parsers.h"

namespace neuronmon::neurondev {

// Bounds on what one scan reads: a host with huge numbers of processes or descriptors, or a
// process with a huge command line or environment, cannot make a scan slow or large.
struct ProcessLimits {
  std::size_t max_processes = 1 << 16;        // entries of the proc root examined
  std::size_t max_fds_per_process = 1 << 16;  // `fd/*` links examined per process
  std::size_t max_file_bytes = 64 << 10;      // a read of cmdline, environ, fdinfo/*, ...
  std::size_t max_results = 4096;             // processes holding devices that are reported
  std::size_t max_command_bytes = 4096;       // NeuronProcess::command after cleaning
  std::size_t max_text_bytes = 1024;          // comm, user, cgroup and tag after cleaning
  // ProcessScanner's budget: descriptors examined per Step (a process with more is examined
  // over several Steps), time per Step (checked between processes and every 1,024 descriptors),
  // and descriptors per uid per scan — a uid past its share has its other processes skipped
  // (uid_limited), keeping what the previous scan found of them while their pids still name the
  // same processes.
  std::size_t max_fds_per_sample = 20000;
  Nanos max_time_per_sample = std::chrono::milliseconds(20);
  std::size_t max_fds_per_uid = 1 << 18;
  bool operator==(const ProcessLimits&) const = default;
};

struct NeuronProcess {
  std::uint32_t pid = 0;
  // starttime of `stat` (clock ticks after boot): with the pid, the process itself; 0 unread.
  std::uint64_t start_ticks = 0;
  std::vector<std::uint32_t> devices;  // N of each /dev/neuron<N> it holds, ascending, unique
  // The arguments of `cmdline` joined by spaces, cleaned and bounded; empty for a kernel thread
  // or when the file could not be read.
  std::string command;
  std::string comm;                  // `comm` (the kernel's 15-byte process name), cleaned
  std::optional<std::uint32_t> uid;  // real uid from `status`; absent when it could not be read
  // The uid's user name; empty when it does not resolve (never a guess such as the number).
  std::string user;
  // The cgroup v2 path (the `0::` line of `cgroup`, without the prefix), else the file's first
  // line whole (cgroup v1: `ID:controllers:path`); empty when unreadable.
  std::string cgroup;
  // NEURON_PROCESS_TAG from `environ` — what neuron-monitor calls the runtime tag; empty when
  // unset or unreadable (or beyond the first max_file_bytes of the environment).
  std::string tag;
  // Container, pod UID and Slurm job from `cgroup` and `environ` (attribution.h).
  ProcessAttribution attribution;
};

struct ProcessScan {
  std::vector<NeuronProcess> processes;  // ascending pid
  std::size_t scanned = 0;               // process directories examined
  // Processes whose `fd` directory could not be read (EACCES/EPERM: another user's process and
  // no root or CAP_SYS_PTRACE): they may hold devices this scan cannot see.
  std::size_t unreadable = 0;
  // Processes holding devices beyond max_results: counted, not read. The kept ones are the first
  // in directory order (ascending pid on Linux).
  std::size_t omitted = 0;
  // Processes with more than max_fds_per_process descriptors: the rest were not examined.
  std::size_t fd_limited = 0;
  // Processes not examined because their uid had used its share of the scan's descriptors.
  std::size_t uid_limited = 0;
  std::size_t fds_examined = 0;  // descriptors examined, over the whole scan
  std::size_t steps = 0;         // Steps the scan took
  bool truncated = false;        // the proc root had more than max_processes entries
};

// An incremental scan of `proc_root`: each Step goes on with the scan in progress (starting a new
// one when none is) within the budget of ProcessLimits, so a sampler calling it once per tick never
// misses one, however many descriptors the host's processes hold.
class ProcessScanner {
 public:
  // `clock`: for the time budget (tests give one that never runs out). `passwd_path`: as
  // ScanProcesses'.
  ProcessScanner(
      std::string proc_root, ProcessLimits limits, std::string passwd_path = "",
      std::function<MonoTime()> clock = [] { return std::chrono::steady_clock::now(); });
  ~ProcessScanner();
  ProcessScanner(const ProcessScanner&) = delete;
  ProcessScanner& operator=(const ProcessScanner&) = delete;

  // Goes on with the scan; true when this Step completed one (result() is new). When the proc
  // root cannot be listed the scan completes at once with error() set and no processes.
  bool Step();
  bool in_progress() const { return round_ != nullptr; }
  // The last complete scan (empty before the first), ascending pid.
  const ProcessScan& result() const { return result_; }
  // "PATH: cannot open: ..." when the last scan could not list the proc root; else empty.
  const Status& error() const { return error_; }

 private:
  struct Round;  // the scan in progress

  std::string proc_root_;
  ProcessLimits limits_;
  std::string passwd_path_;
  std::function<MonoTime()> clock_;
  std::unique_ptr<Round> round_;
  ProcessScan result_;
  Status error_;
};

// Scans `proc_root`. User names come from the system's user database (getpwuid_r, so NSS sources
// such as LDAP count) or, when `passwd_path` is not empty, from that passwd-format file only
// (tests). Errors: only when `proc_root` itself cannot be listed ("PATH: cannot open: ...").
Result<ProcessScan> ScanProcesses(const std::string& proc_root = "/proc", ProcessLimits limits = {},
                                  const std::string& passwd_path = "");

// The N of a descriptor's link target `/dev/neuron<N>` (also with the kernel's " (deleted)"
// suffix), or nothing for any other target. Exposed for tests.
std::optional<std::uint32_t> NeuronDeviceOfLink(std::string_view target);

// The command line of a `cmdline` file's contents: NUL-separated arguments joined by single
// spaces (trailing NULs dropped), cleaned for display and cut to `max_bytes` at a character
// boundary. Exposed for tests.
std::string CommandOfCmdline(std::string_view cmdline, std::size_t max_bytes);

}  // namespace neuronmon::neurondev
