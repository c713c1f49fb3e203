// MonitorChild: AWS's neuron-monitor (or any program that prints one JSON document per line and
// never exits on its own) run as a child process and kept running. The program is started
// directly with posix_spawn — never through a shell — in its own process group, with stdin on
// /dev/null, stdout on a pipe read here line by line, stderr on a second pipe of which the last
// bytes are kept for error messages, default signal dispositions, an empty signal mask and no
// other inherited descriptors. A child that exits, stalls or keeps printing lines the caller
// reports as bad is stopped (SIGTERM, then SIGKILL after a grace period) and started again after
// an exponential backoff; a missing executable is re-checked slowly.
//
// Everything happens inside the caller's calls, driven by the `now` they pass: no threads, no
// sleeps, no signal handlers (exit is found with waitpid(WNOHANG) on the child's own pid, so the
// process must not set SIGCHLD to SIG_IGN, or exit statuses are lost). The object owns the child
// and both pipes; its destructor kills the child's process group and reaps the child.
// Not thread-safe: one thread (the daemon's sampling loop) owns it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/clock.h"

namespace neuronmon::neurondev {

// The program to run. REQUIRES: `executable` is an absolute path (a relative one is reported as
// an error, never searched for in $PATH).
struct ChildSpec {
  std::string executable;              // "/opt/aws/neuron/bin/neuron-monitor"
  std::vector<std::string> args;       // without argv[0], e.g. {"-c", "/etc/nm.json"}
  std::vector<std::string> extra_env;  // "NAME=value": added to the inherited environment,
                                       // replacing a variable of the same name
};

struct ChildLimits {
  std::size_t max_line_bytes = std::size_t{4} << 20;  // longer lines are discarded and counted
  std::size_t max_read_bytes_per_poll = std::size_t{16} << 20;  // stdout bytes per Poll, at most
  std::size_t stderr_tail_bytes = std::size_t{4} << 10;         // stderr kept for messages
  Nanos first_backoff = std::chrono::seconds(1);  // wait before the first restart; doubles
  Nanos max_backoff = std::chrono::seconds(60);   // ... up to this
  // Output that has flowed this long without a bad line resets the backoff to `first_backoff`
  // and clears `last_error` (which a new child's first line also clears).
  Nanos healthy_after = std::chrono::seconds(60);
  Nanos stall_timeout = std::chrono::seconds(30);          // no complete line this long: restart it
  Nanos kill_grace = std::chrono::seconds(5);              // SIGTERM, then SIGKILL after this
  Nanos not_installed_recheck = std::chrono::seconds(60);  // how often a missing one is retried
  int max_bad_lines = 10;  // consecutive bad lines (reported or overlong) restart it; 0: never
  bool operator==(const ChildLimits&) const = default;
};

enum class ChildState {
  kNotInstalled,  // the executable is missing or cannot be executed; re-checked at next_start
  kStarting,      // started (or to be started by the first Poll) and no line printed yet
  kRunning,       // the current child has printed at least one line
  kBackoff,       // no usable child: the last one ended or is being killed; restarts at next_start
  kStopped,       // Stop() was called; never restarts
};

// "not installed", "starting", "running", "backoff", "stopped".
const char* ChildStateName(ChildState state);

struct ChildStatus {
  ChildState state = ChildState::kStarting;
  pid_t pid = -1;  // the child's, while one exists (including one being killed); else -1
  std::uint64_t restarts = 0;        // children started after the first
  std::uint64_t lines = 0;           // complete lines returned by Poll
  std::uint64_t overlong_lines = 0;  // lines discarded for exceeding max_line_bytes
  std::uint64_t bad_lines = 0;       // ReportBadLine calls
  std::uint64_t bytes_read = 0;      // from stdout
  // The most recent problem, one terminal-safe line; "" when none. The reason a child ended
  // stays until a new child prints its first line; a problem of the running child (bad or
  // overlong lines) until `healthy_after` of good output.
  std::string last_error;
  std::optional<MonoTime> next_start;  // set in kBackoff and kNotInstalled
  std::string stderr_tail;             // the last bytes the current or last child wrote to stderr
};

// One run of a program to its end (`neuron-ls --check --active`'s nccom-test), started as
// MonitorChild starts its children (posix_spawn, own process group, stdin on /dev/null, nothing
// else inherited). Blocks the calling thread until the child exits or `timeout` passes; then its
// process group gets SIGTERM and, after `kill_grace`, SIGKILL. Whatever the child leaves in its
// group when it exits is killed too. While it runs, SIGCHLD has its default disposition, and
// SIGINT, SIGTERM and SIGHUP to this process are passed on: the child's group gets SIGTERM, then
// SIGKILL within a second, and the signal is raised again here (ending a process that keeps the
// default disposition). REQUIRES: the calling thread is the only one that could take those
// signals (other threads block them).
struct ChildRunLimits {
  Nanos timeout = std::chrono::minutes(2);
  Nanos kill_grace = std::chrono::seconds(5);
  std::size_t max_stdout_bytes = std::size_t{1} << 20;  // the last ones kept; the rest dropped
  std::size_t stderr_tail_bytes = std::size_t{4} << 10;
};

struct ChildRun {
  // Empty when the program ran and exited with status 0; else one terminal-safe line: "not
  // found: PATH", "nccom-test exited with status 1", "nccom-test did not finish within 2m",
  // "nccom-test stopped: this process received signal 15".
  std::string error;
  bool started = false;
  bool timed_out = false;
  int interrupted = 0;             // the signal this process got while the child ran
  std::optional<int> exit_status;  // when it exited
  std::optional<int> signal;       // when a signal killed it (not our timeout's)
  std::string out;                 // stdout: the last max_stdout_bytes (a verdict comes last)
  bool out_truncated = false;
  std::string stderr_tail;
  // The last non-empty line of stderr, terminal-safe and bounded ("" when none).
  std::string last_stderr_line;
};

ChildRun RunToCompletion(const ChildSpec& spec, const ChildRunLimits& limits = {});

// Splits a byte stream into lines: '\n'-terminated, a trailing '\r' removed, empty lines skipped.
// A line longer than `max_line_bytes` is never held: its bytes are dropped up to its newline and
// it is counted. Pure (no I/O); thread-compatible.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Appends to `lines` each line completed by `bytes` (with what earlier calls left incomplete).
  // Returns how many lines became overlong in `bytes` (counted once, when they pass the limit).
  std::size_t Feed(std::string_view bytes, std::vector<std::string>& lines);
  // Forgets an incomplete line: the stream ended or a new one starts.
  void Reset();

 private:
  std::size_t max_line_bytes_;
  std::string partial_;
  bool discarding_ = false;
};

class MonitorChild {
 public:
  // Starts nothing: the first Poll starts the child.
  explicit MonitorChild(ChildSpec spec, ChildLimits limits = {});
  // Kills the child's process group with SIGKILL, reaps the child — waiting at most 2 s for
  // it; one stuck in the kernel longer is left for init to reap when this process exits — and
  // closes both pipes.
  ~MonitorChild();
  MonitorChild(const MonitorChild&) = delete;
  MonitorChild& operator=(const MonitorChild&) = delete;

  // Does everything due at `now`, without blocking: reaps an exited child, reads what stdout and
  // stderr hold (stdout up to max_read_bytes_per_poll; the rest stays for the next call), kills
  // a stalled child or one the caller reported too many bad lines from (escalating to SIGKILL
  // after kill_grace), and starts a child when one is due. Returns the complete lines read, in
  // order. REQUIRES: `now` never goes backwards between calls.
  std::vector<std::string> Poll(MonoTime now);

  // Says that one line the last Poll returned is not a document (`why`: the parser's one-line
  // reason). While the child is starting or running it becomes last_error ("NAME printed
  // something that is not a document: WHY"); after max_bad_lines such lines with no good line
  // between them the next Poll restarts the child. A Poll's lines are taken as good when the
  // caller reports fewer of them than were returned (the streak then restarts at 0); within one
  // Poll's lines the reports are taken as consecutive.
  void ReportBadLine(std::string_view why);

  // Ends the child for good: SIGTERM to its process group now, SIGKILL from the first Poll at or
  // after `now + kill_grace`; later Polls reap it and return no lines. Idempotent.
  void Stop(MonoTime now);

  ChildStatus status() const;
  // The child's stdout pipe (non-blocking, close-on-exec), for poll(); -1 when there is none.
  // Valid until the next call of any other method.
  int fd() const { return out_fd_; }

 private:
  void Start(MonoTime now);
  void StartFailed(MonoTime now, int error);
  void NotInstalled(MonoTime now, std::string why);
  void NoteBadLine(std::string why, std::string error);
  void SendTerm(MonoTime now);
  void ReadStdout(MonoTime now, bool exited, std::vector<std::string>& lines);
  void ReadStderr();
  void BeginBatch();
  void EnforceDeadlines(MonoTime now);
  void Terminate(MonoTime now, std::string reason);
  void ChildEnded(MonoTime now, int wait_status, bool status_known);
  void ScheduleRestart(MonoTime now);
  std::string LastStderrLine() const;

  const ChildSpec spec_;
  const ChildLimits limits_;
  const std::string name_;  // basename of the executable, for messages
  LineSplitter splitter_;
  std::vector<char> read_buffer_;

  ChildStatus status_;
  int out_fd_ = -1;
  int err_fd_ = -1;
  Nanos backoff_;
  bool started_once_ = false;
  std::string last_bad_why_;
  // The current child's supervision, reset when one starts.
  struct Run {
    MonoTime last_line_at{};                // its start until it prints a line
    std::optional<MonoTime> healthy_since;  // good output flowing since
    std::optional<MonoTime> term_sent_at;   // SIGTERM sent
    bool kill_sent = false;
    int bad_streak = 0;
    bool restart_requested = false;
    bool clear_error_on_output = true;  // last_error is about an earlier child
  };
  Run run_;
  std::size_t batch_lines_ = 0;  // lines the last Poll returned ...
  std::size_t batch_bad_ = 0;    // ... and how many of them were reported bad since
  MonoTime batch_at_{};
};

}  // namespace neuronmon::neurondev
