// ScanProcesses: which processes hold Neuron devices open, read from /proc (the root is
// injectable for tests). A process holds device N when one of its `fd/*` links points at
// `/dev/neuron<N>`; for those processes the scan also reads the command line, `comm`, the real uid
// and its user name, the cgroup and the NEURON_PROCESS_TAG environment variable. Everything a
// process wrote itself (command line, comm, tag, cgroup path) is untrusted: it is bounded and
// stripped of control characters and invalid UTF-8 before it reaches the result. Other users'
// processes cannot be inspected without root or CAP_SYS_PTRACE: they are counted, not errors;
// processes that exit mid-scan are skipped. Each call is independent; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neurondev/attribution.h"
#include "proto/common/status.h"
#include "proto/procfs/proc_parsers.h"

namespace neuronmon::neurondev {

// Bounds on what one scan reads: a host with huge numbers of processes or descriptors, or a
// process with a huge command line or environment, cannot make a scan slow or large.
struct ProcessLimits {
  std::size_t max_processes = 1 << 16;        // entries of the proc root examined
  std::size_t max_fds_per_process = 1 << 16;  // `fd/*` links examined per process
  std::size_t max_file_bytes = 64 << 10;      // read of cmdline, environ, status, cgroup, comm
  std::size_t max_results = 4096;             // processes holding devices that are reported
  std::size_t max_command_bytes = 4096;       // NeuronProcess::command after cleaning
  std::size_t max_text_bytes = 1024;          // comm, user, cgroup and tag after cleaning
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
  bool truncated = false;  // the proc root had more than max_processes entries
};

// Scans `proc_root`. User names come from the system's user database (getpwuid_r, so NSS sources
// such as LDAP count) or, when `passwd_path` is not empty, from that passwd-format file only
// (tests). Errors: only when `proc_root` itself cannot be listed ("PATH: cannot open: ...").
Result<ProcessScan> ScanProcesses(const std::string& proc_root = "/proc", ProcessLimits limits = {},
                                  const std::string& passwd_path = "");

// The N of a descriptor's link target `/dev/neuron<N>` (also with the kernel's " (deleted)"
// suffix), or nothing for any other target. Exposed for tests.
std::optional<std::uint32_t> NeuronDeviceOfLink(std::string_view target);

// The `stat` of process `pid` under `proc_root` (its CPU time, and its start time: a pid whose
// start time differs from the one recorded is another process); nothing when it has exited or the
// file cannot be read.
std::optional<procfs::ProcessStat> ReadProcessStat(const std::string& proc_root, std::uint32_t pid);

// The command line of a `cmdline` file's contents: NUL-separated arguments joined by single
// spaces (trailing NULs dropped), cleaned for display and cut to `max_bytes` at a character
// boundary. Exposed for tests.
std::string CommandOfCmdline(std::string_view cmdline, std::size_t max_bytes);

}  // namespace neuronmon::neurondev
