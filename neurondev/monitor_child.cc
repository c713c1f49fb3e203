#include "neurondev/monitor_child.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "proto/common/duration.h"
#include "proto/common/file_reader.h"
#include "proto/common/terminal_text.h"

extern char** environ;

namespace neuronmon::neurondev {
namespace {

constexpr std::size_t kReadChunk = std::size_t{64} << 10;
constexpr std::size_t kMaxStderrPerPoll = std::size_t{1} << 20;
constexpr std::size_t kMaxReasonBytes = 200;
constexpr int kReapWaitMs = 2000;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define NEURONMON_HAVE_ADDCLOSEFROM 1
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#define NEURONMON_HAVE_SIGABBREV 1
#endif

std::string ErrnoText(int error) { return std::generic_category().message(error); }

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Text from the child or the caller, made one terminal-safe line of bounded length.
std::string OneLine(std::string_view text) {
  const bool cut = text.size() > kMaxReasonBytes;
  std::string line = SanitizeForTerminal(text.substr(0, kMaxReasonBytes));
  return cut ? line + "..." : line;
}

std::string Basename(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash + 1 == path.size()) return path;
  return path.substr(slash + 1);
}

// Both ends close-on-exec and above fd 2: if this process runs without stdin/stdout/stderr, a
// pipe end could land on 0-2, and dup2 of an fd onto itself would leave it close-on-exec.
bool MakePipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    if (fds[i] > STDERR_FILENO) continue;
    const int moved = ::fcntl(fds[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    const int error = errno;
    ::close(fds[i]);
    fds[i] = moved;
    if (moved < 0) {
      CloseFd(fds[1 - i]);
      errno = error;
      return false;
    }
  }
  return true;
}

std::vector<std::string> BuildEnvironment(const std::vector<std::string>& extra) {
  const auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view name = name_of(*entry);
    const bool replaced = std::any_of(extra.begin(), extra.end(),
                                      [&](const std::string& e) { return name_of(e) == name; });
    if (!replaced) env.emplace_back(*entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// posix_spawn with stdin on /dev/null, stdout and stderr on the given pipe ends, every other fd
// closed, a new process group, no blocked signals and default dispositions (the caller's thread
// may block SIGTERM, and an ignored SIGPIPE would let an orphan outlive its reader). Returns 0 or
// an errno; glibc reports exec failures (ENOENT, EACCES, ENOEXEC) here.
int Spawn(const ChildSpec& spec, int out_w, int err_w, pid_t* pid) {
  std::vector<std::string> argv{spec.executable};
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> env = BuildEnvironment(spec.extra_env);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if (int error = posix_spawn_file_actions_init(&actions); error != 0) return error;
  if (int error = posix_spawnattr_init(&attr); error != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return error;
  }
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  int error = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, out_w, STDOUT_FILENO);
  if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, err_w, STDERR_FILENO);
#ifdef NEURONMON_HAVE_ADDCLOSEFROM
  if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
  if (error == 0) error = posix_spawnattr_setpgroup(&attr, 0);
  if (error == 0) error = posix_spawnattr_setsigmask(&attr, &none);
  if (error == 0) error = posix_spawnattr_setsigdefault(&attr, &all);
  if (error == 0) {
    error = posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  if (error == 0) {
    error = posix_spawn(pid, spec.executable.c_str(), &actions, &attr, Pointers(argv).data(),
                        Pointers(env).data());
  }
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  return error;
}

// Spawn with fresh pipes: on success the read ends, non-blocking, are in *out_fd and *err_fd.
int SpawnWithPipes(const ChildSpec& spec, pid_t* pid, int* out_fd, int* err_fd) {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int error = 0;
  if (!MakePipe(out) || !MakePipe(err)) {
    error = errno;
  } else {
    error = Spawn(spec, out[1], err[1], pid);
  }
  CloseFd(out[1]);
  CloseFd(err[1]);
  if (error != 0) {
    CloseFd(out[0]);
    CloseFd(err[0]);
    return error;
  }
  ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, ::fcntl(err[0], F_GETFL) | O_NONBLOCK);
  *out_fd = out[0];
  *err_fd = err[0];
  return 0;
}

// The group first (a child's own children die with it); the pid alone if the child left it.
void Signal(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

// Reaps `pid` after SIGKILL. A process stuck in uninterruptible sleep (in the driver) would block
// a plain waitpid indefinitely, so the wait is bounded; such a child is reaped by init once this
// process exits.
void ReapKilled(pid_t pid) {
  int wait_status = 0;
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd ready{pidfd, POLLIN, 0};
    while (::poll(&ready, 1, kReapWaitMs) < 0 && errno == EINTR) {
    }
    ::close(pidfd);
    ::waitpid(pid, &wait_status, WNOHANG);
    return;
  }
#endif
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
}

std::string DescribeExit(const std::string& name, int wait_status, bool known) {
  if (!known) return name + " exited (exit status lost: SIGCHLD is ignored)";
  if (WIFEXITED(wait_status)) {
    return name + " exited with status " + std::to_string(WEXITSTATUS(wait_status));
  }
  if (!WIFSIGNALED(wait_status)) return name + " ended";
  const int sig = WTERMSIG(wait_status);
  std::string text = name + " killed by signal " + std::to_string(sig);
#ifdef NEURONMON_HAVE_SIGABBREV
  if (const char* abbrev = sigabbrev_np(sig); abbrev != nullptr) {
    text += std::string(" (SIG") + abbrev + ")";
  }
#endif
  if (WCOREDUMP(wait_status)) text += ", core dumped";
  return text;
}

// The last non-empty line of `text`, made one terminal-safe line.
std::string LastLine(std::string_view text) {
  while (!text.empty() && std::strchr(" \t\r\n", text.back()) != nullptr) text.remove_suffix(1);
  const std::size_t newline = text.find_last_of('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  return OneLine(text);
}

// Why an existing absolute `path` cannot be run (an errno), or 0 when it looks runnable
// (posix_spawn reports the rest). Checked before posix_spawn so that a directory, which access()
// lets root "execute", gets a clear message.
int RunnableError(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  return ::access(path.c_str(), X_OK) != 0 ? errno : 0;
}

// Why `path` cannot be run, or "" when it looks runnable.
std::string CannotRun(const std::string& path) {
  if (path.empty() || path.front() != '/') return "not an absolute path: " + OneLine(path);
  const int error = RunnableError(path);
  if (error == 0) return "";
  if (error == ENOENT || error == ENOTDIR) return "not found: " + OneLine(path);
  return "cannot run " + OneLine(path) + ": " + ErrnoText(error);
}

// Reads what `fd` holds now into `keep` (up to `max` bytes kept; with `tail`, the last `max`
// bytes instead of the first). Returns false at end of file or on an error (fd closed).
bool Drain(int& fd, std::string& keep, std::size_t max, bool tail, bool* truncated) {
  char buffer[kReadChunk / 4];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n <= 0) {
      CloseFd(fd);
      return false;
    }
    const std::size_t got = static_cast<std::size_t>(n);
    if (tail) {
      keep.append(buffer, got);
      if (keep.size() > max) {
        keep.erase(0, keep.size() - max);
        if (truncated != nullptr) *truncated = true;
      }
    } else {
      const std::size_t room = max - std::min(max, keep.size());
      keep.append(buffer, std::min(room, got));
      if (got > room && truncated != nullptr) *truncated = true;
    }
  }
}

// Whether `pid` has exited, without reaping it: its zombie keeps the pid and the process group
// id from being reused until it is reaped. ECHILD (reaped behind our back) counts as exited.
bool Exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid == pid;
}

// RunToCompletion's signals: SIGINT, SIGTERM and SIGHUP blocked and read from a signalfd, and
// SIGCHLD at its default disposition, until Restore (or destruction) puts back what was there.
// The caller is one thread; a signal another thread takes is not seen here.
class ScopedRunSignals {
 public:
  ScopedRunSignals() {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, sig);
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &set_, &old_mask_) == 0;
    if (blocked_) fd_ = ::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    chld_saved_ = ::sigaction(SIGCHLD, &dfl, &old_chld_) == 0;
  }
  ~ScopedRunSignals() { Restore(0); }
  ScopedRunSignals(const ScopedRunSignals&) = delete;
  ScopedRunSignals& operator=(const ScopedRunSignals&) = delete;

  int fd() const { return fd_; }
  // The signal that arrived (0 when none could be read).
  int Take() {
    signalfd_siginfo info{};
    if (fd_ < 0 || ::read(fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) return 0;
    return static_cast<int>(info.ssi_signo);
  }
  // Puts the mask and SIGCHLD back, then raises `sig` (taken from the descriptor, so not pending
  // any more) for this process to handle as it would have: by default, it ends.
  void Restore(int sig) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (chld_saved_) ::sigaction(SIGCHLD, &old_chld_, nullptr);
    chld_saved_ = false;
    if (blocked_) ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    blocked_ = false;
    if (sig != 0) ::raise(sig);
  }

 private:
  sigset_t set_{};
  sigset_t old_mask_{};
  struct sigaction old_chld_ {};
  bool blocked_ = false;
  bool chld_saved_ = false;
  int fd_ = -1;
};

}  // namespace

ChildRun RunToCompletion(const ChildSpec& spec, const ChildRunLimits& limits) {
  ChildRun run;
  const std::string name = Basename(spec.executable);
  if (std::string why = CannotRun(spec.executable); !why.empty()) {
    run.error = std::move(why);
    return run;
  }
  // While it runs: SIGINT, SIGTERM and SIGHUP arrive on a descriptor (and are passed on to the
  // child's group), and SIGCHLD has its default disposition (ignored, exit statuses are lost).
  ScopedRunSignals signals;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  if (const int error = SpawnWithPipes(spec, &pid, &out_fd, &err_fd); error != 0) {
    run.error = "cannot start " + OneLine(spec.executable) + ": " + ErrnoText(error);
    return run;
  }
  run.started = true;
  const auto drain = [&] {
    if (out_fd >= 0) Drain(out_fd, run.out, limits.max_stdout_bytes, true, &run.out_truncated);
    if (err_fd >= 0) Drain(err_fd, run.stderr_tail, limits.stderr_tail_bytes, true, nullptr);
  };
  // Waits up to `ms` for output, draining it; false when poll fails.
  const auto wait = [&](int ms) {
    pollfd fds[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {signals.fd(), POLLIN, 0}};
    const int ready = ::poll(fds, 3, ms);
    if (ready < 0 && errno != EINTR) return false;
    drain();
    if (ready > 0 && (fds[2].revents & POLLIN) != 0) run.interrupted = signals.Take();
    return true;
  };
  const MonoTime deadline = std::chrono::steady_clock::now() + limits.timeout;
  std::string wait_error;
  bool exited = false;
  // The child's exit is looked for every 50 ms: a grandchild may keep the pipes open after it.
  while (!(exited = Exited(pid)) && run.interrupted == 0) {
    const Nanos left = deadline - std::chrono::steady_clock::now();
    if (left <= Nanos(0)) {
      run.timed_out = true;
      break;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
    if (!wait(static_cast<int>(std::clamp<std::int64_t>(ms, 1, 50)))) {
      wait_error = "cannot wait for " + name + ": " + ErrnoText(errno);
      break;
    }
  }
  if (!exited) {
    // SIGTERM to its group, then (at the latest after the grace; an interrupted run has at most
    // a second) SIGKILL below. Its output is read meanwhile, so a child that writes on its way
    // out is not blocked.
    ::kill(-pid, SIGTERM);
    const Nanos grace = run.interrupted != 0
                            ? std::min<Nanos>(limits.kill_grace, std::chrono::seconds(1))
                            : limits.kill_grace;
    const MonoTime kill_at = std::chrono::steady_clock::now() + grace;
    while (!(exited = Exited(pid)) && std::chrono::steady_clock::now() < kill_at) wait(20);
  }
  // Exited or not, it is not reaped yet: its process group id cannot be anyone else's, and
  // whatever it left in that group (workers that ignore SIGTERM) goes with it.
  ::kill(-pid, SIGKILL);
  int wait_status = 0;
  bool status_known = false;
  if (exited) {
    while (!(status_known = ::waitpid(pid, &wait_status, 0) == pid) && errno == EINTR) {
    }
  } else {
    ReapKilled(pid);
  }
  drain();
  CloseFd(out_fd);
  CloseFd(err_fd);
  run.last_stderr_line = LastLine(run.stderr_tail);
  if (run.interrupted != 0) {
    run.error = name + " stopped: this process received signal " + std::to_string(run.interrupted);
  } else if (run.timed_out) {
    run.error = name + " did not finish within " + FormatDuration(limits.timeout);
  } else if (!wait_error.empty()) {
    run.error = wait_error;
  } else if (!status_known) {
    run.error = name + " exited (exit status lost)";
  } else if (WIFEXITED(wait_status)) {
    run.exit_status = WEXITSTATUS(wait_status);
    if (*run.exit_status != 0) run.error = DescribeExit(name, wait_status, true);
  } else {
    if (WIFSIGNALED(wait_status)) run.signal = WTERMSIG(wait_status);
    run.error = DescribeExit(name, wait_status, true);
  }
  signals.Restore(run.interrupted);
  return run;
}

const char* ChildStateName(ChildState state) {
  switch (state) {
    case ChildState::kNotInstalled:
      return "not installed";
    case ChildState::kStarting:
      return "starting";
    case ChildState::kRunning:
      return "running";
    case ChildState::kBackoff:
      return "backoff";
    case ChildState::kStopped:
      return "stopped";
  }
  return "unknown";
}

std::size_t LineSplitter::Feed(std::string_view bytes, std::vector<std::string>& lines) {
  std::size_t overlong = 0;
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (!discarding_ && partial_.size() + piece.size() > max_line_bytes_) {
      discarding_ = true;
      partial_ = std::string();  // release the memory, not just the size
      ++overlong;
    }
    if (!discarding_) partial_.append(piece);
    if (newline == std::string_view::npos) break;
    if (!discarding_) {
      if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
      if (!partial_.empty()) lines.push_back(std::move(partial_));
      partial_.clear();
    }
    discarding_ = false;
    bytes.remove_prefix(newline + 1);
  }
  return overlong;
}

void LineSplitter::Reset() {
  partial_ = std::string();
  discarding_ = false;
}

MonitorChild::MonitorChild(ChildSpec spec, ChildLimits limits)
    : spec_(std::move(spec)),
      limits_(limits),
      name_(Basename(spec_.executable)),
      splitter_(limits_.max_line_bytes),
      read_buffer_(kReadChunk),
      backoff_(limits_.first_backoff) {}

MonitorChild::~MonitorChild() {
  if (status_.pid > 0) {
    Signal(status_.pid, SIGKILL);
    ReapKilled(status_.pid);
  }
  CloseFd(out_fd_);
  CloseFd(err_fd_);
}

std::vector<std::string> MonitorChild::Poll(MonoTime now) {
  std::vector<std::string> lines;
  BeginBatch();
  bool exited = false;
  bool status_known = true;
  int wait_status = 0;
  if (status_.pid > 0) {
    const pid_t reaped = ::waitpid(status_.pid, &wait_status, WNOHANG);
    exited = reaped == status_.pid || (reaped < 0 && errno == ECHILD);
    status_known = reaped == status_.pid;
  }
  ReadStderr();
  ReadStdout(now, exited || status_.pid < 0, lines);
  if (exited) {
    ChildEnded(now, wait_status, status_known);
  } else if (status_.pid > 0) {
    EnforceDeadlines(now);
  }
  status_.lines += lines.size();
  batch_lines_ = lines.size();
  batch_at_ = now;
  const bool due = !status_.next_start || now >= *status_.next_start;
  if (status_.pid < 0 && out_fd_ < 0 && status_.state != ChildState::kStopped && due) Start(now);
  return lines;
}

// A Poll whose lines were not all reported bad had a good one: the bad streak is broken and good
// output has been flowing since that Poll.
void MonitorChild::BeginBatch() {
  if (batch_lines_ > batch_bad_) {
    run_.bad_streak = 0;
    if (!run_.healthy_since) run_.healthy_since = batch_at_;
  }
  batch_lines_ = 0;
  batch_bad_ = 0;
}

void MonitorChild::ReportBadLine(std::string_view why) {
  ++status_.bad_lines;
  ++batch_bad_;
  const std::string line = OneLine(why);
  NoteBadLine(line, name_ + " printed something that is not a document: " + line);
}

// A bad line from a child that is ending (or has ended) does not replace the reason it ends.
void MonitorChild::NoteBadLine(std::string why, std::string error) {
  if (status_.state == ChildState::kStarting || status_.state == ChildState::kRunning) {
    status_.last_error = std::move(error);
    run_.clear_error_on_output = false;
  }
  last_bad_why_ = std::move(why);
  run_.healthy_since.reset();
  ++run_.bad_streak;
  if (limits_.max_bad_lines > 0 && run_.bad_streak >= limits_.max_bad_lines) {
    run_.restart_requested = true;
  }
}

void MonitorChild::Stop(MonoTime now) {
  if (status_.state == ChildState::kStopped) return;
  status_.state = ChildState::kStopped;
  status_.next_start.reset();
  if (status_.pid > 0 && !run_.term_sent_at) SendTerm(now);
  CloseFd(out_fd_);
  splitter_.Reset();
}

ChildStatus MonitorChild::status() const { return status_; }

void MonitorChild::Start(MonoTime now) {
  const std::string& path = spec_.executable;
  if (path.empty() || path.front() != '/') {
    return NotInstalled(now, "not an absolute path: " + OneLine(path));
  }
  if (const int error = RunnableError(path); error != 0) return StartFailed(now, error);
  pid_t pid = -1;
  if (const int error = SpawnWithPipes(spec_, &pid, &out_fd_, &err_fd_); error != 0) {
    return StartFailed(now, error);
  }
  if (started_once_) ++status_.restarts;
  started_once_ = true;
  status_.pid = pid;
  status_.state = ChildState::kStarting;
  status_.next_start.reset();
  status_.stderr_tail.clear();
  run_ = Run{};
  run_.last_line_at = now;
  batch_lines_ = 0;
  splitter_.Reset();
}

void MonitorChild::StartFailed(MonoTime now, int error) {
  const std::string path = OneLine(spec_.executable);
  if (error == ENOENT || error == ENOTDIR) {
    return NotInstalled(now, "not found: " + path + " — install aws-neuronx-tools");
  }
  if (error == EACCES || error == EPERM || error == ENOEXEC || error == EISDIR || error == ELOOP) {
    return NotInstalled(now, "not executable: " + path + " (" + ErrnoText(error) + ")");
  }
  status_.state = ChildState::kBackoff;
  status_.last_error = "cannot start " + path + ": " + ErrnoText(error);
  ScheduleRestart(now);
}

void MonitorChild::NotInstalled(MonoTime now, std::string why) {
  status_.state = ChildState::kNotInstalled;
  status_.last_error = std::move(why);
  status_.next_start = now + limits_.not_installed_recheck;
}

void MonitorChild::ScheduleRestart(MonoTime now) {
  status_.next_start = now + backoff_;
  backoff_ = std::min(backoff_ * 2, limits_.max_backoff);
}

// `exited`: the child is reaped, so the pipe holds all it will ever get from it (a grandchild
// that kept the write end is ignored) and EAGAIN means drained.
void MonitorChild::ReadStdout(MonoTime now, bool exited, std::vector<std::string>& lines) {
  if (out_fd_ < 0) return;
  const std::size_t before = lines.size();
  std::size_t budget = limits_.max_read_bytes_per_poll;
  while (budget > 0) {
    const ssize_t n = ::read(out_fd_, read_buffer_.data(), std::min(read_buffer_.size(), budget));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0 || errno != EAGAIN || exited) {
        CloseFd(out_fd_);
        splitter_.Reset();
      }
      break;
    }
    budget -= static_cast<std::size_t>(n);
    status_.bytes_read += static_cast<std::uint64_t>(n);
    const std::size_t overlong = splitter_.Feed({read_buffer_.data(), std::size_t(n)}, lines);
    for (std::size_t i = 0; i < overlong; ++i) {
      ++status_.overlong_lines;
      const std::string why = "a line longer than " + FormatBytes(limits_.max_line_bytes);
      NoteBadLine(why, name_ + " printed " + why + "; discarded it");
    }
  }
  if (lines.size() > before) {
    run_.last_line_at = now;
    if (status_.state == ChildState::kStarting && status_.pid > 0) {
      status_.state = ChildState::kRunning;
      // Output flows again: whatever ended or blocked the previous child is over.
      if (run_.clear_error_on_output) status_.last_error.clear();
    }
  }
}

void MonitorChild::ReadStderr() {
  std::size_t budget = kMaxStderrPerPoll;
  std::string& tail = status_.stderr_tail;
  while (err_fd_ >= 0 && budget > 0) {
    const ssize_t n = ::read(err_fd_, read_buffer_.data(), read_buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0 || errno != EAGAIN) CloseFd(err_fd_);
      break;
    }
    budget -= std::min(budget, static_cast<std::size_t>(n));
    tail.append(read_buffer_.data(), static_cast<std::size_t>(n));
    if (tail.size() > limits_.stderr_tail_bytes) {
      tail.erase(0, tail.size() - limits_.stderr_tail_bytes);
    }
  }
}

std::string MonitorChild::LastStderrLine() const { return LastLine(status_.stderr_tail); }

void MonitorChild::EnforceDeadlines(MonoTime now) {
  if (run_.term_sent_at) {
    if (!run_.kill_sent && now - *run_.term_sent_at >= limits_.kill_grace) {
      Signal(status_.pid, SIGKILL);
      run_.kill_sent = true;
    }
    return;
  }
  if (run_.restart_requested) {
    return Terminate(now, name_ + " printed " + std::to_string(run_.bad_streak) +
                              " lines in a row that are not documents; restarting it (last: " +
                              last_bad_why_ + ")");
  }
  if (now - run_.last_line_at >= limits_.stall_timeout) {
    return Terminate(now, name_ + " printed nothing for " + FormatDuration(limits_.stall_timeout) +
                              "; restarting it");
  }
  if (run_.healthy_since && now - *run_.healthy_since >= limits_.healthy_after) {
    backoff_ = limits_.first_backoff;
    status_.last_error.clear();
  }
}

void MonitorChild::Terminate(MonoTime now, std::string reason) {
  SendTerm(now);
  CloseFd(out_fd_);  // what it prints now is not wanted; a write to the closed pipe ends it too
  splitter_.Reset();
  status_.last_error = std::move(reason);
  status_.state = ChildState::kBackoff;
  ScheduleRestart(now);
}

void MonitorChild::SendTerm(MonoTime now) {
  Signal(status_.pid, SIGTERM);
  run_.term_sent_at = now;
}

void MonitorChild::ChildEnded(MonoTime now, int wait_status, bool status_known) {
  status_.pid = -1;
  CloseFd(err_fd_);
  const bool expected = run_.term_sent_at.has_value();
  run_.term_sent_at.reset();
  run_.kill_sent = false;
  if (expected || status_.state == ChildState::kStopped) return;
  status_.last_error = DescribeExit(name_, wait_status, status_known);
  if (const std::string said = LastStderrLine(); !said.empty()) status_.last_error += ": " + said;
  status_.state = ChildState::kBackoff;
  ScheduleRestart(now);
}

}  // namespace neuronmon::neurondev
