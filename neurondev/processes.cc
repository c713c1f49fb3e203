#include "neurondev/processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/common/file_reader.h"
#include "proto/common/terminal_text.h"
#include "proto/common/unique_fd.h"
#include "proto/procfs/proc_parsers.h"

namespace neuronmon::neurondev {
namespace {

constexpr std::string_view kDevicePrefix = "/dev/neuron";
constexpr std::string_view kDeletedSuffix = " (deleted)";
constexpr std::string_view kTagVariable = "NEURON_PROCESS_TAG=";
constexpr std::size_t kMaxPasswdBytes = 4 << 20;

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
using Dir = std::unique_ptr<DIR, DirCloser>;

// A pid directory's name: digits only, no leading zero, within a pid's range.
std::optional<std::uint32_t> ParsePid(std::string_view name) {
  if (name.empty() || name.size() > 10 || name[0] == '0') return std::nullopt;
  std::uint64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > 0x7fffffff) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

// Display-safe `text` cut to at most `max_bytes` without splitting a character.
std::string Clean(std::string_view text, std::size_t max_bytes) {
  std::string out = SanitizeForTerminal(text);
  if (out.size() <= max_bytes) return out;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out;
}

// Reads at most `max_bytes` of `name` under `dir_fd`; 0 or the errno that stopped it. O_NONBLOCK
// keeps a FIFO planted in a fabricated tree from blocking the scan.
int ReadAt(int dir_fd, const char* name, std::size_t max_bytes, std::string* out) {
  UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return errno;
  out->clear();
  char buffer[4096];
  while (out->size() < max_bytes) {
    const std::size_t want = std::min(sizeof buffer, max_bytes - out->size());
    const ssize_t n = ::read(fd.get(), buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN ? 0 : errno;
    if (n == 0) break;
    out->append(buffer, static_cast<std::size_t>(n));
  }
  return 0;
}

bool Gone(int error) { return error == ENOENT || error == ESRCH; }

struct FdScan {
  int error = 0;         // errno of opening the fd directory
  bool limited = false;  // more entries than the limit
  std::size_t examined = 0;
  std::vector<std::uint32_t> devices;
};

// A process's `fd` directory being examined, possibly over several Steps: one readlinkat per
// descriptor, nothing else.
struct FdWalk {
  std::uint32_t pid = 0;
  UniqueFd pid_fd;
  Dir dir;
  std::size_t cap = 0;             // descriptors it may examine in all
  std::size_t max_file_bytes = 0;  // ProcessLimits::max_file_bytes, for `fdinfo/*`
  FdScan scan;

  // Opens `pid_fd`'s fd directory; false (scan.error set) when it cannot.
  bool Open() {
    const int fd_dir = ::openat(pid_fd.get(), "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_dir < 0) {
      scan.error = errno;
      return false;
    }
    dir.reset(::fdopendir(fd_dir));
    if (!dir) {
      scan.error = errno;
      ::close(fd_dir);
      return false;
    }
    return true;
  }

  // Examines at most `budget` more descriptors; true when the directory is done (or `cap`
  // reached), the devices sorted and unique.
  bool Continue(std::size_t budget) {
    const int fd_dir = ::dirfd(dir.get());
    for (std::size_t examined = 0; examined < budget;) {
      const dirent* entry = ::readdir(dir.get());
      if (entry == nullptr) return Done();
      if (entry->d_name[0] == '.') continue;
      if (scan.examined == cap) {
        scan.limited = true;
        return Done();
      }
      ++scan.examined;
      ++examined;
      // Long enough for any /dev/neuron<N> target; longer targets are cut and cannot match.
      char target[64];
      const ssize_t n = ::readlinkat(fd_dir, entry->d_name, target, sizeof target);
      if (n <= 0) continue;
      const std::optional<std::uint32_t> device =
          NeuronDeviceOfLink({target, static_cast<std::size_t>(n)});
      if (device && !OpenedWriteOnly(entry->d_name)) scan.devices.push_back(*device);
    }
    return false;
  }

  // Whether descriptor `name` was opened write-only, by the `flags` of its fdinfo. The driver
  // gives such an open "free access" to its query ioctls (AWS's neuron-ls, our BDF lookup): it
  // uses no core and no memory, so it does not hold the device. An fdinfo that cannot be read or
  // parsed (the descriptor closed meanwhile, a fabricated tree) leaves the descriptor a holder: a
  // tool listed once too often is a lesser mistake than an application missed.
  bool OpenedWriteOnly(const char* name) const {
    std::string text;
    const std::string path = std::string("fdinfo/") + name;
    if (ReadAt(pid_fd.get(), path.c_str(), max_file_bytes, &text) != 0) return false;
    // A last line the bound cut is not read: "flags:\t01" of "flags:\t0100002" would mislead.
    // (No newline at all: rfind gives npos, and npos + 1 is 0.)
    text.resize(text.rfind('\n') + 1);
    const std::optional<std::uint32_t> flags = procfs::FdinfoFlags(text);
    return flags && (*flags & O_ACCMODE) == O_WRONLY;
  }

  bool Done() {
    std::sort(scan.devices.begin(), scan.devices.end());
    scan.devices.erase(std::unique(scan.devices.begin(), scan.devices.end()), scan.devices.end());
    return true;
  }
};

// The real uid of a `status` file (the first number of its "Uid:" line).
std::optional<std::uint32_t> RealUid(std::string_view status) {
  const std::optional<std::uint64_t> uid = procfs::StatusNumber(status, "Uid");
  if (!uid || *uid > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(*uid);
}

std::string_view CgroupOf(std::string_view cgroup) {
  std::size_t at = 0;
  std::string_view first;
  while (at < cgroup.size()) {
    std::size_t end = cgroup.find('\n', at);
    if (end == std::string_view::npos) end = cgroup.size();
    const std::string_view line = cgroup.substr(at, end - at);
    if (at == 0) first = line;
    if (line.substr(0, 3) == "0::") return line.substr(3);
    at = end + 1;
  }
  return first;
}

std::string_view TagOf(std::string_view environ) {
  std::size_t at = 0;
  while (at < environ.size()) {
    std::size_t end = environ.find('\0', at);
    if (end == std::string_view::npos) end = environ.size();
    const std::string_view entry = environ.substr(at, end - at);
    if (entry.substr(0, kTagVariable.size()) == kTagVariable) {
      return entry.substr(kTagVariable.size());
    }
    at = end + 1;
  }
  return {};
}

// Resolves uids to names once per scan: the system's database, or a passwd file for tests.
class UserNames {
 public:
  UserNames(std::string passwd_path, std::size_t max_bytes)
      : passwd_path_(std::move(passwd_path)), max_bytes_(max_bytes) {}

  const std::string& Find(std::uint32_t uid) {
    auto it = cache_.find(uid);
    if (it == cache_.end()) {
      it = cache_
               .emplace(uid,
                        Clean(passwd_path_.empty() ? FromSystem(uid) : FromFile(uid), max_bytes_))
               .first;
    }
    return it->second;
  }

 private:
  static std::string FromSystem(std::uint32_t uid) {
    std::vector<char> buffer(16384);
    for (;;) {
      passwd entry{};
      passwd* found = nullptr;
      const int error = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
      if (error == ERANGE && buffer.size() < (1u << 20)) {
        buffer.resize(buffer.size() * 4);
        continue;
      }
      return error == 0 && found != nullptr && found->pw_name != nullptr ? found->pw_name : "";
    }
  }

  std::string FromFile(std::uint32_t uid) {
    if (!file_) file_ = LoadFile();
    auto it = file_->find(uid);
    return it == file_->end() ? "" : it->second;
  }

  // name:password:uid:... per line; the first line of a uid wins, as in getpwuid.
  std::map<std::uint32_t, std::string> LoadFile() const {
    std::map<std::uint32_t, std::string> names;
    Result<std::string> text = ReadRegularFile(passwd_path_, kMaxPasswdBytes);
    if (!text.ok()) return names;
    std::string_view rest = *text;
    while (!rest.empty()) {
      const std::size_t end = std::min(rest.find('\n'), rest.size());
      const std::string_view line = rest.substr(0, end);
      rest.remove_prefix(std::min(end + 1, rest.size()));
      const std::size_t a = line.find(':');
      const std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
      const std::size_t c = b == std::string_view::npos ? b : line.find(':', b + 1);
      if (c == std::string_view::npos || a == 0) continue;
      const std::string_view uid_text = line.substr(b + 1, c - b - 1);
      if (uid_text.empty() || uid_text.size() > 10 ||
          uid_text.find_first_not_of("0123456789") != std::string_view::npos) {
        continue;
      }
      const std::uint64_t uid = std::stoull(std::string(uid_text));
      if (uid <= UINT32_MAX) names.emplace(static_cast<std::uint32_t>(uid), line.substr(0, a));
    }
    return names;
  }

  std::string passwd_path_;
  std::size_t max_bytes_;
  std::map<std::uint32_t, std::string> cache_;
  std::optional<std::map<std::uint32_t, std::string>> file_;
};

// Reads the details of a process known to hold `devices`; nothing when it exited meanwhile.
std::optional<NeuronProcess> ReadProcess(int pid_fd, std::uint32_t pid,
                                         std::vector<std::uint32_t> devices,
                                         const ProcessLimits& limits, UserNames& users) {
  NeuronProcess p;
  p.pid = pid;
  p.devices = std::move(devices);
  std::string text;
  bool gone = false;
  const auto read = [&](const char* name) {
    const int error = ReadAt(pid_fd, name, limits.max_file_bytes, &text);
    gone = gone || Gone(error);
    if (error != 0) text.clear();
    return error == 0;
  };
  if (read("stat")) {
    if (Result<procfs::ProcessStat> stat = procfs::ParseProcessStat(text); stat.ok()) {
      p.start_ticks = stat->start_ticks;
    }
  }
  if (read("cmdline")) p.command = CommandOfCmdline(text, limits.max_command_bytes);
  if (read("comm")) {
    if (!text.empty() && text.back() == '\n') text.pop_back();
    p.comm = Clean(text, limits.max_text_bytes);
  }
  if (read("status")) p.uid = RealUid(text);
  if (p.uid) p.user = users.Find(*p.uid);
  if (read("cgroup")) {
    p.cgroup = Clean(CgroupOf(text), limits.max_text_bytes);
    p.attribution = AttributionFromCgroup(text);
  }
  if (read("environ")) {
    p.tag = Clean(TagOf(text), limits.max_text_bytes);
    AddSlurmEnvironment(text, p.attribution);
  }
  // A file that is missing while `fd` is still there is just missing (an older kernel, a
  // fabricated tree); without `fd` the process has exited.
  if (gone && ::faccessat(pid_fd, "fd", F_OK, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return p;
}

}  // namespace

std::optional<std::uint32_t> NeuronDeviceOfLink(std::string_view target) {
  if (target.substr(0, kDevicePrefix.size()) != kDevicePrefix) return std::nullopt;
  target.remove_prefix(kDevicePrefix.size());
  if (target.size() > kDeletedSuffix.size() &&
      target.substr(target.size() - kDeletedSuffix.size()) == kDeletedSuffix) {
    target.remove_suffix(kDeletedSuffix.size());
  }
  if (target.empty() || target.size() > 6 || (target[0] == '0' && target.size() > 1)) {
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (char c : target) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return n;
}

std::string CommandOfCmdline(std::string_view cmdline, std::size_t max_bytes) {
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.remove_suffix(1);
  std::string joined(cmdline);
  std::replace(joined.begin(), joined.end(), '\0', ' ');
  return Clean(joined, max_bytes);
}

struct ProcessScanner::Round {
  Round(const std::string& passwd_path, std::size_t max_text_bytes)
      : users(passwd_path, max_text_bytes) {}
  UniqueFd proc;
  std::vector<std::uint32_t> pids;  // the proc root's, ascending
  std::size_t next = 0;
  std::map<std::uint32_t, std::size_t> uid_fds;
  std::optional<FdWalk> walk;  // the process being examined, when a Step ended inside it
  std::uint32_t walk_uid = 0;
  UserNames users;
  ProcessScan scan;
};

ProcessScanner::ProcessScanner(std::string proc_root, ProcessLimits limits, std::string passwd_path,
                               std::function<MonoTime()> clock)
    : proc_root_(std::move(proc_root)),
      limits_(limits),
      passwd_path_(std::move(passwd_path)),
      clock_(std::move(clock)) {}

ProcessScanner::~ProcessScanner() = default;

bool ProcessScanner::Step() {
  if (round_ == nullptr) {
    UniqueFd proc(::open(proc_root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    Dir listing(proc.get() < 0 ? nullptr : ::opendir(proc_root_.c_str()));
    if (!listing) {
      const int error = errno;
      std::string message = proc_root_ + ": cannot open: " + std::strerror(error);
      error_ = error == ENOENT ? Status::NotFound(std::move(message))
                               : Status::IoError(std::move(message));
      result_ = ProcessScan{};
      return true;
    }
    round_ = std::make_unique<Round>(passwd_path_, limits_.max_text_bytes);
    round_->proc = std::move(proc);
    while (const dirent* entry = ::readdir(listing.get())) {
      const std::optional<std::uint32_t> pid = ParsePid(entry->d_name);
      if (!pid) continue;
      if (round_->pids.size() == limits_.max_processes) {
        round_->scan.truncated = true;
        break;
      }
      round_->pids.push_back(*pid);
    }
    // Ascending, as Linux lists /proc (a fabricated tree may not): each uid's share goes to its
    // lowest pids first, scan after scan.
    std::sort(round_->pids.begin(), round_->pids.end());
  }
  Round& r = *round_;
  ProcessScan& scan = r.scan;
  ++scan.steps;
  const MonoTime start = clock_();
  std::size_t fds = 0;
  // Descriptors examined between two looks at the clock, within a process.
  constexpr std::size_t kChunk = 1024;
  while (r.walk || r.next < r.pids.size()) {
    if (!r.walk) {
      if (fds >= limits_.max_fds_per_sample || clock_() - start >= limits_.max_time_per_sample) {
        return false;  // the rest at the next Step
      }
      const std::uint32_t pid = r.pids[r.next++];
      ++scan.scanned;
      const std::string name = std::to_string(pid);
      UniqueFd pid_fd(
          ::openat(r.proc.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
      if (pid_fd.get() < 0) continue;  // exited, or not a directory
      struct stat st {};
      if (::fstat(pid_fd.get(), &st) != 0) continue;
      const std::size_t used = r.uid_fds[st.st_uid];
      if (used >= limits_.max_fds_per_uid) {
        // Its uid has had its share: what the last scan found of this process stands while the
        // pid is still that process.
        ++scan.uid_limited;
        const auto old =
            std::lower_bound(result_.processes.begin(), result_.processes.end(), pid,
                             [](const NeuronProcess& p, std::uint32_t v) { return p.pid < v; });
        if (old != result_.processes.end() && old->pid == pid) {
          const Result<procfs::ProcessStat> stat = procfs::ReadProcessStat(proc_root_, pid);
          if (stat.ok() && stat->start_ticks == old->start_ticks &&
              scan.processes.size() < limits_.max_results) {
            scan.processes.push_back(*old);
          }
        }
        continue;
      }
      r.walk.emplace();
      r.walk->pid = pid;
      r.walk->pid_fd = std::move(pid_fd);
      r.walk->cap = std::min(limits_.max_fds_per_process, limits_.max_fds_per_uid - used);
      r.walk->max_file_bytes = limits_.max_file_bytes;
      r.walk_uid = st.st_uid;
      if (!r.walk->Open()) {
        if (r.walk->scan.error == EACCES || r.walk->scan.error == EPERM) ++scan.unreadable;
        r.walk.reset();
        continue;
      }
    }
    if (fds >= limits_.max_fds_per_sample) return false;  // inside a process: on next Step
    FdWalk& w = *r.walk;
    const std::size_t before = w.scan.examined;
    const bool done = w.Continue(std::min(kChunk, limits_.max_fds_per_sample - fds));
    const std::size_t examined = w.scan.examined - before;
    r.uid_fds[r.walk_uid] += examined;
    fds += examined;
    scan.fds_examined += examined;
    if (!done) {
      if (clock_() - start >= limits_.max_time_per_sample) return false;
      continue;
    }
    FdWalk finished = std::move(w);
    r.walk.reset();
    if (finished.scan.limited) ++scan.fd_limited;
    if (finished.scan.devices.empty()) continue;
    if (scan.processes.size() >= limits_.max_results) {
      ++scan.omitted;
      continue;
    }
    std::optional<NeuronProcess> process = ReadProcess(
        finished.pid_fd.get(), finished.pid, std::move(finished.scan.devices), limits_, r.users);
    if (process) scan.processes.push_back(std::move(*process));
  }
  std::sort(scan.processes.begin(), scan.processes.end(),
            [](const NeuronProcess& a, const NeuronProcess& b) { return a.pid < b.pid; });
  result_ = std::move(scan);
  error_ = Status::Ok();
  round_.reset();
  return true;
}

Result<ProcessScan> ScanProcesses(const std::string& proc_root, ProcessLimits limits,
                                  const std::string& passwd_path) {
  limits.max_fds_per_sample = SIZE_MAX;
  limits.max_time_per_sample = Nanos::max();
  ProcessScanner scanner(proc_root, limits, passwd_path);
  while (!scanner.Step()) {
  }
  if (!scanner.error().ok()) return scanner.error();
  return scanner.result();
}

}  // namespace neuronmon::neurondev
