#include "proto/procfs/proc_parsers.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <system_error>

#include "proto/common/file_reader.h"
#include "proto/common/text.h"

namespace neuronmon::procfs {
namespace {

constexpr std::string_view kProcStat = "/proc/stat";
constexpr std::string_view kMeminfo = "/proc/meminfo";

// Splits on whitespace, dropping empty fields.
std::vector<std::string_view> Fields(std::string_view line) {
  constexpr std::string_view kSpace = " \t\n";
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  while ((pos = line.find_first_not_of(kSpace, pos)) != std::string_view::npos) {
    const std::size_t end = std::min(line.find_first_of(kSpace, pos), line.size());
    fields.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return fields;
}

std::optional<std::uint64_t> ToU64(std::string_view s) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// A field quoted for an error message, cut short so garbage input cannot flood a log line.
std::string Excerpt(std::string_view s) {
  constexpr std::size_t kMax = 40;
  return "\"" + std::string(s.substr(0, kMax)) + (s.size() > kMax ? "...\"" : "\"");
}

Status Malformed(std::string_view file, std::size_t line, const std::string& what) {
  return Status::InvalidArgument(std::string(file) + ": line " + std::to_string(line) + ": " +
                                 what);
}

// Calls `visit(line_number, line)` for each line; stops at the first non-ok Status.
template <typename Visit>
Status ForEachLine(std::string_view contents, Visit visit) {
  for (std::size_t number = 1; !contents.empty(); ++number) {
    const std::size_t end = std::min(contents.find('\n'), contents.size());
    if (Status s = visit(number, contents.substr(0, end)); !s.ok()) return s;
    contents.remove_prefix(std::min(end + 1, contents.size()));
  }
  return Status::Ok();
}

Result<CpuTimes> ParseCpuLine(std::size_t number, const std::vector<std::string_view>& fields) {
  constexpr std::size_t kRequired = 7;  // user nice system idle iowait irq softirq
  if (fields.size() < kRequired + 1) {
    return Malformed(kProcStat, number,
                     "expected at least 7 numbers after " + Excerpt(fields[0]) + ", got " +
                         std::to_string(fields.size() - 1));
  }
  std::array<std::uint64_t, 8> v{};  // steal stays 0 on kernels that lack it
  for (std::size_t i = 0; i < v.size() && i + 1 < fields.size(); ++i) {
    const std::optional<std::uint64_t> n = ToU64(fields[i + 1]);
    if (!n) {
      return Malformed(kProcStat, number,
                       "field " + std::to_string(i + 1) + " after " + Excerpt(fields[0]) +
                           " is not a number: " + Excerpt(fields[i + 1]));
    }
    v[i] = *n;
  }
  return CpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
}

// "cpu12" → 12; nullopt for anything else ("cpu", "cpufreq", "cpu1x").
std::optional<std::uint32_t> CpuNumber(std::string_view key) {
  if (!key.starts_with("cpu") || key.size() == 3) return std::nullopt;
  const std::optional<std::uint64_t> n = ToU64(key.substr(3));
  if (!n || *n > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

Status ParseSingleNumber(std::size_t number, const std::vector<std::string_view>& fields,
                         std::optional<std::uint64_t>* out) {
  const std::string key = Excerpt(fields[0]);
  if (out->has_value()) return Malformed(kProcStat, number, "repeated " + key + " line");
  std::optional<std::uint64_t> n;
  if (fields.size() == 2) n = ToU64(fields[1]);
  if (!n) return Malformed(kProcStat, number, "expected one number after " + key);
  *out = n;
  return Status::Ok();
}

Status ParseStatCpu(std::size_t number, const std::vector<std::string_view>& fields,
                    bool* total_seen, ProcStat* stat) {
  Result<CpuTimes> times = ParseCpuLine(number, fields);
  if (!times.ok()) return times.status();
  if (fields[0] == "cpu") {
    if (*total_seen) return Malformed(kProcStat, number, "repeated \"cpu\" line");
    *total_seen = true;
    stat->total = *times;
    return Status::Ok();
  }
  const std::uint32_t cpu = *CpuNumber(fields[0]);
  if (!stat->per_cpu.empty() && stat->per_cpu.back().cpu >= cpu) {
    return Malformed(kProcStat, number, Excerpt(fields[0]) + " is out of order or repeated");
  }
  stat->per_cpu.push_back({cpu, *times});
  return Status::Ok();
}

double Round2(double percent) { return std::round(percent * 100) / 100; }

std::uint64_t Delta(std::uint64_t before, std::uint64_t after) {
  return after > before ? after - before : 0;
}

Status MissingLine(std::string_view file, std::string_view key) {
  return Status::InvalidArgument(std::string(file) + ": no " + std::string(key) + " line");
}

// The /proc/meminfo values the memory_info group needs, in kB.
struct MeminfoKb {
  std::optional<std::uint64_t> total, free, available, buffers, cached, swap_total, swap_free;
};

std::optional<std::uint64_t>* MeminfoSlot(MeminfoKb* kb, std::string_view key) {
  if (key == "MemTotal") return &kb->total;
  if (key == "MemFree") return &kb->free;
  if (key == "MemAvailable") return &kb->available;
  if (key == "Buffers") return &kb->buffers;
  if (key == "Cached") return &kb->cached;
  if (key == "SwapTotal") return &kb->swap_total;
  if (key == "SwapFree") return &kb->swap_free;
  return nullptr;
}

Status ParseMeminfoLine(std::size_t number, std::string_view line, MeminfoKb* kb) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Status::Ok();  // not a "Key: value" line
  const std::string_view key = line.substr(0, colon);
  std::optional<std::uint64_t>* slot = MeminfoSlot(kb, key);
  if (slot == nullptr) return Status::Ok();
  const std::string quoted = Excerpt(key);
  if (slot->has_value()) return Malformed(kMeminfo, number, "repeated " + quoted);
  const std::vector<std::string_view> fields = Fields(line.substr(colon + 1));
  std::optional<std::uint64_t> n;
  if (fields.size() == 2 && fields[1] == "kB") n = ToU64(fields[0]);
  if (!n || *n > std::numeric_limits<std::uint64_t>::max() / 1024) {
    return Malformed(kMeminfo, number,
                     quoted + ": expected \"<number> kB\", got " + Excerpt(line.substr(colon + 1)));
  }
  *slot = *n;
  return Status::Ok();
}

Result<std::uint64_t> UsedMemoryKb(const MeminfoKb& kb) {
  if (kb.available) return Delta(*kb.available, *kb.total);
  if (!kb.free || !kb.buffers || !kb.cached) {
    return Status::InvalidArgument(std::string(kMeminfo) +
                                   ": no MemAvailable line, nor MemFree, Buffers and Cached");
  }
  // Each value is below 2^54 (checked when parsed), so the sum cannot wrap.
  return Delta(*kb.free + *kb.buffers + *kb.cached, *kb.total);
}

// Fields of /proc/<pid>/stat counted from 1 as proc(5) does; field 3 (state) follows the ')'.
constexpr std::size_t kFirstFieldAfterComm = 3;
constexpr std::size_t kUtime = 14, kStime = 15, kNumThreads = 20, kStartTime = 22, kVsize = 23,
                      kRss = 24;

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

// Go's syscall errors are lower-case strerror text; match them for neuron-monitor's error fields.
Status ErrnoStatus(const std::string& operation, int err) {
  std::string text = std::system_category().message(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  const std::string message = operation + ": " + text;
  return err == ENOENT ? Status::NotFound(message) : Status::IoError(message);
}

// The value of the first line of `text` that starts with `key` and ':', spaces and tabs trimmed.
std::optional<std::string_view> FieldValue(std::string_view text, std::string_view key) {
  const std::string prefix = std::string(key) + ":";
  std::optional<std::string_view> value;
  // The visitor never fails: every line is looked at, and the first match is kept.
  static_cast<void>(ForEachLine(text, [&](std::size_t, std::string_view line) {
    if (!value && line.starts_with(prefix)) value = Trim(line.substr(prefix.size()));
    return Status::Ok();
  }));
  return value;
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view contents) {
  ProcStat stat;
  bool total_seen = false;
  std::optional<std::uint64_t> ctxt, btime;
  Status status = ForEachLine(contents, [&](std::size_t number, std::string_view line) {
    const std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) return Status::Ok();
    if (fields[0] == "cpu" || CpuNumber(fields[0])) {
      return ParseStatCpu(number, fields, &total_seen, &stat);
    }
    if (fields[0] == "ctxt") return ParseSingleNumber(number, fields, &ctxt);
    if (fields[0] == "btime") return ParseSingleNumber(number, fields, &btime);
    return Status::Ok();  // intr, processes, softirq, ...: not needed
  });
  if (!status.ok()) return status;
  if (!total_seen) return MissingLine(kProcStat, "\"cpu\"");
  if (!ctxt) return MissingLine(kProcStat, "\"ctxt\"");
  if (!btime) return MissingLine(kProcStat, "\"btime\"");
  stat.context_switches = *ctxt;
  stat.boot_time_seconds = *btime;
  return stat;
}

CpuUsagePercent CpuUsageBetween(const CpuTimes& before, const CpuTimes& after) {
  const std::array<std::uint64_t, 8> d = {
      Delta(before.user, after.user),       Delta(before.nice, after.nice),
      Delta(before.system, after.system),   Delta(before.idle, after.idle),
      Delta(before.iowait, after.iowait),   Delta(before.irq, after.irq),
      Delta(before.softirq, after.softirq), Delta(before.steal, after.steal)};
  double total = 0;
  for (std::uint64_t x : d) total += static_cast<double>(x);
  if (total == 0) return {};
  const auto pct = [&](std::size_t i) { return Round2(100.0 * static_cast<double>(d[i]) / total); };
  return {pct(0), pct(1), pct(2), pct(3), pct(4), pct(5), pct(6), pct(7)};
}

VcpuUsage ComputeVcpuUsage(const ProcStat& before, const ProcStat& after) {
  VcpuUsage usage;
  usage.average = CpuUsageBetween(before.total, after.total);
  usage.context_switch_count = Delta(before.context_switches, after.context_switches);
  // Both lists ascend: merge them, skipping CPUs that went offline or came online in between.
  auto b = before.per_cpu.begin();
  for (const NumberedCpuTimes& a : after.per_cpu) {
    while (b != before.per_cpu.end() && b->cpu < a.cpu) ++b;
    if (b != before.per_cpu.end() && b->cpu == a.cpu) {
      usage.per_cpu.push_back({a.cpu, CpuUsageBetween(b->times, a.times)});
    }
  }
  return usage;
}

Result<MemInfo> ParseMeminfo(std::string_view contents) {
  MeminfoKb kb;
  Status status = ForEachLine(contents, [&](std::size_t number, std::string_view line) {
    return ParseMeminfoLine(number, line, &kb);
  });
  if (!status.ok()) return status;
  if (!kb.total) return MissingLine(kMeminfo, "MemTotal");
  if (!kb.swap_total) return MissingLine(kMeminfo, "SwapTotal");
  if (!kb.swap_free) return MissingLine(kMeminfo, "SwapFree");
  Result<std::uint64_t> used = UsedMemoryKb(kb);
  if (!used.ok()) return used.status();
  return MemInfo{*kb.total * 1024, *used * 1024, *kb.swap_total * 1024,
                 Delta(*kb.swap_free, *kb.swap_total) * 1024};
}

Result<ProcessStat> ParseProcessStat(std::string_view contents, std::string_view path) {
  const auto error = [&](const std::string& what) {
    return Status::InvalidArgument(std::string(path) + ": " + what);
  };
  const std::size_t open = contents.find('(');
  const std::size_t close = contents.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return error("expected \"<pid> (<command>) ...\", got " + Excerpt(contents));
  }
  ProcessStat stat;
  const std::vector<std::string_view> pid = Fields(contents.substr(0, open));
  const std::optional<std::uint64_t> pid_value = pid.size() == 1 ? ToU64(pid[0]) : std::nullopt;
  if (!pid_value || *pid_value > std::numeric_limits<std::int64_t>::max()) {
    return error("the pid before the command name is not a number");
  }
  stat.pid = static_cast<std::int64_t>(*pid_value);
  stat.comm = std::string(contents.substr(open + 1, close - open - 1));
  const std::vector<std::string_view> fields = Fields(contents.substr(close + 1));
  if (fields.size() < kRss - kFirstFieldAfterComm + 1) {
    return error("expected at least " + std::to_string(kRss - kFirstFieldAfterComm + 1) +
                 " fields after the command name, got " + std::to_string(fields.size()));
  }
  if (fields[0].size() != 1) return error("the state is not one letter: " + Excerpt(fields[0]));
  stat.state = fields[0][0];
  const std::array<std::pair<std::size_t, std::uint64_t*>, 6> wanted = {{
      {kUtime, &stat.user_ticks},
      {kStime, &stat.system_ticks},
      {kNumThreads, &stat.num_threads},
      {kStartTime, &stat.start_ticks},
      {kVsize, &stat.virtual_memory_bytes},
      {kRss, &stat.resident_pages},
  }};
  for (const auto& [field, out] : wanted) {
    const std::string_view text = fields[field - kFirstFieldAfterComm];
    const std::optional<std::uint64_t> n = ToU64(text);
    if (!n) return error("field " + std::to_string(field) + " is not a number: " + Excerpt(text));
    *out = *n;
  }
  return stat;
}

ProcessCpuTime CpuTimeOf(const ProcessStat& stat, std::uint64_t ticks_per_second) {
  return {stat.user_ticks * 1'000'000'000ULL / ticks_per_second,
          stat.system_ticks * 1'000'000'000ULL / ticks_per_second};
}

std::optional<std::uint64_t> StatusNumber(std::string_view status, std::string_view key) {
  const std::optional<std::string_view> value = FieldValue(status, key);
  std::uint64_t number = 0;
  if (!value ||
      std::from_chars(value->data(), value->data() + value->size(), number).ec != std::errc{}) {
    return std::nullopt;
  }
  return number;
}

std::optional<std::uint32_t> FdinfoFlags(std::string_view fdinfo) {
  const std::optional<std::string_view> value = FieldValue(fdinfo, "flags");
  if (!value || value->empty() || value->find_first_not_of("01234567") != std::string_view::npos) {
    return std::nullopt;
  }
  std::uint32_t flags = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), flags, 8);
  if (ec != std::errc{} || end != value->data() + value->size()) return std::nullopt;
  return flags;
}

Result<ProcessMetrics> ComputeProcessMetrics(const ProcessStat& stat, const HostConstants& host,
                                             std::uint64_t open_fds) {
  if (host.ticks_per_second == 0 || host.page_size_bytes == 0) {
    return Status::InvalidArgument("process metrics: clock tick rate and page size must be > 0");
  }
  if (stat.resident_pages > std::numeric_limits<std::uint64_t>::max() / host.page_size_bytes) {
    return Status::InvalidArgument("process metrics: resident size overflows 64 bits");
  }
  const double ticks = static_cast<double>(host.ticks_per_second);
  ProcessMetrics m;
  m.cpu_seconds_total = static_cast<double>(stat.user_ticks + stat.system_ticks) / ticks;
  m.resident_memory_bytes = stat.resident_pages * host.page_size_bytes;
  m.virtual_memory_bytes = stat.virtual_memory_bytes;
  m.start_time_seconds =
      static_cast<double>(host.boot_time_seconds) + static_cast<double>(stat.start_ticks) / ticks;
  m.open_fds = open_fds;
  return m;
}

Result<ProcessStat> ReadProcessStat(const std::string& proc_root, std::uint32_t pid) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/stat";
  Result<std::string> text = ReadRegularFile(path, 4096);
  if (!text.ok()) {
    // Not read (kNotFound: exited): kInvalidArgument is kept for a stat that does not parse.
    return text.status().code() == StatusCode::kNotFound ? text.status()
                                                         : Status::IoError(text.status().message());
  }
  return ParseProcessStat(*text, path);
}

Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  const FdCloser closer{fd};
  std::string contents;
  std::array<char, 16384> chunk;
  for (;;) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read " + path, errno);
    if (n == 0) return contents;
    if (contents.size() + static_cast<std::size_t>(n) > max_bytes) {
      return Status::OutOfRange(path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    contents.append(chunk.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace neuronmon::procfs
