// Parsers for the Linux /proc files the daemon reads about its host and itself, and neurondev about
// the processes that hold Neuron devices — /proc/stat, /proc/meminfo, /proc/<pid>/stat and
// /proc/<pid>/status and /proc/<pid>/fdinfo/<fd> — and the arithmetic that turns them into
// neuron-monitor's vcpu_usage and memory_info groups, the standard process_* metrics and a
// process's CPU time. The parse functions take a file's contents and never touch the filesystem
// (read → pure parse → publish); on malformed, truncated or garbage input they return
// kInvalidArgument naming the file, the line and what is wrong (`/proc/stat: line 3: expected at
// least 7 numbers after "cpu0", got 2`) and never crash. ReadSmallFile and ReadProcessStat are the
// only functions here that do I/O. All functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::procfs {

// One "cpuN" line of /proc/stat.
struct NumberedCpuTimes {
  std::uint32_t cpu = 0;
  CpuTimes times;
};

struct ProcStat {
  CpuTimes total;                         // the aggregate "cpu" line
  std::vector<NumberedCpuTimes> per_cpu;  // ascending; offline CPUs have no line
  std::uint64_t context_switches = 0;     // "ctxt", since boot
  std::uint64_t boot_time_seconds = 0;    // "btime", seconds since the epoch
};

// Parses /proc/stat. Requires the "cpu", "ctxt" and "btime" lines; "cpuN" lines must ascend. A cpu
// line needs the 7 fields user..softirq; steal (Linux 2.6.11+) is read when present, else 0.
// guest and guest_nice are ignored: the kernel already counts them in user and nice.
Result<ProcStat> ParseProcStat(std::string_view contents);

// Percent of the CPU time that elapsed between two readings, each rounded to 2 decimals as
// neuron-monitor prints its system vcpu_usage (26.32, 16.67, 73.68).
struct CpuUsagePercent {
  double user = 0, nice = 0, system = 0, idle = 0, io_wait = 0, irq = 0, soft_irq = 0;
  double steal = 0;  // not a neuron-monitor key: exporters may drop it or add it
};

// The share of each state in the time between `before` and `after`. The denominator includes
// steal (as top and mpstat count it), so all 8 fields add up to 100 and, on a VM whose hypervisor
// steals time, neuron-monitor's 7 keys add up to 100 - steal rather than hiding the theft in the
// other states. A state whose counter went backwards (iowait can, on tickless kernels) counts 0;
// when no time elapsed every field is 0.
CpuUsagePercent CpuUsageBetween(const CpuTimes& before, const CpuTimes& after);

struct NumberedCpuUsage {
  std::uint32_t cpu = 0;
  CpuUsagePercent usage;
};

struct VcpuUsage {
  CpuUsagePercent average;  // from the aggregate line, so each CPU weighs by its elapsed time
  std::vector<NumberedCpuUsage> per_cpu;   // CPUs present in both readings, ascending
  std::uint64_t context_switch_count = 0;  // during the period; 0 if the counter went backwards
};

// neuron-monitor's system vcpu_usage group for the period from `before` to `after`.
VcpuUsage ComputeVcpuUsage(const ProcStat& before, const ProcStat& after);

// neuron-monitor's memory_info group, in bytes.
struct MemInfo {
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_used_bytes = 0;
  std::uint64_t swap_total_bytes = 0;
  std::uint64_t swap_used_bytes = 0;
};

// Parses /proc/meminfo (kB values, converted to bytes). memory_used = MemTotal - MemAvailable;
// on kernels without MemAvailable (before 3.14) MemTotal - MemFree - Buffers - Cached.
// swap_used = SwapTotal - SwapFree. Differences stop at 0. Requires MemTotal, SwapTotal, SwapFree
// and MemAvailable or all of MemFree, Buffers and Cached, so a truncated file is an error.
Result<MemInfo> ParseMeminfo(std::string_view contents);

// The fields of /proc/<pid>/stat that the process_* metrics need.
struct ProcessStat {
  std::int64_t pid = 0;
  std::string comm;  // without the parentheses; may contain spaces, '(' and ')'
  char state = '?';
  std::uint64_t user_ticks = 0;    // utime
  std::uint64_t system_ticks = 0;  // stime
  std::uint64_t num_threads = 0;
  std::uint64_t start_ticks = 0;  // starttime: clock ticks after boot
  std::uint64_t virtual_memory_bytes = 0;
  std::uint64_t resident_pages = 0;
};

// Parses the contents of /proc/<pid>/stat; `path` only names the file in errors. The command
// name is taken up to the last ')', since it may itself contain ") ".
Result<ProcessStat> ParseProcessStat(std::string_view contents,
                                     std::string_view path = "/proc/self/stat");

// A process's CPU time in nanoseconds: utime and stime of its stat at `ticks_per_second`
// (sysconf(_SC_CLK_TCK)), each rounded down. REQUIRES: ticks_per_second > 0.
struct ProcessCpuTime {
  std::uint64_t user_ns = 0;
  std::uint64_t system_ns = 0;
};
ProcessCpuTime CpuTimeOf(const ProcessStat& stat, std::uint64_t ticks_per_second);

// The number that begins a field of /proc/<pid>/status ("Uid:\t1000\t1000\t1000\t1000" → 1000 for
// "Uid", "FDSize:\t256" → 256): the first line that starts with `key` and ':', then spaces or
// tabs, then decimal digits (what follows them is not read). nullopt when there is no such line
// or its value does not begin with a number that fits 64 bits.
std::optional<std::uint64_t> StatusNumber(std::string_view status, std::string_view key);

// The open flags of a /proc/<pid>/fdinfo/<fd> file: its "flags:" line, which the kernel prints in
// octal ("flags:\t02100002" is O_RDWR | O_CLOEXEC | O_LARGEFILE); `flags & O_ACCMODE` is the
// access mode. nullopt when there is no such line or its value is not all octal digits within
// 32 bits.
std::optional<std::uint32_t> FdinfoFlags(std::string_view fdinfo);

// What turns ticks and pages into seconds and bytes; the caller reads them once at startup.
struct HostConstants {
  std::uint64_t boot_time_seconds = 0;  // ProcStat::boot_time_seconds
  std::uint64_t ticks_per_second = 0;   // sysconf(_SC_CLK_TCK), normally 100
  std::uint64_t page_size_bytes = 0;    // sysconf(_SC_PAGESIZE)
};

// The standard process collector's values (names as client_golang exports them).
struct ProcessMetrics {
  double cpu_seconds_total = 0;  // (utime + stime) / ticks
  std::uint64_t resident_memory_bytes = 0;
  std::uint64_t virtual_memory_bytes = 0;
  double start_time_seconds = 0;  // btime + starttime / ticks, seconds since the epoch
  std::uint64_t open_fds = 0;
  // The soft limit on open descriptors (RLIMIT_NOFILE); absent when unlimited or unknown.
  std::optional<std::uint64_t> max_fds = std::nullopt;
};

// Errors (kInvalidArgument) when `host` has a zero tick rate or page size, or the resident size
// overflows. `open_fds` is the caller's count of /proc/self/fd entries, passed through.
Result<ProcessMetrics> ComputeProcessMetrics(const ProcessStat& stat, const HostConstants& host,
                                             std::uint64_t open_fds);

// Reads all of `path`, a /proc or /sys file (whose size stat() does not tell). Errors read like
// neuron-monitor's Go error strings: kNotFound "open /proc/9/stat: no such file or directory",
// kIoError for other failures, kOutOfRange when the file exceeds `max_bytes`.
Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes = 4 << 20);

// The parsed /proc/<pid>/stat of process `pid` under `proc_root` (its CPU time, and its start
// time: a pid whose start time differs from the one recorded is another process), read as a
// regular file of at most 4 KiB (a FIFO planted in a fabricated tree is refused, not waited on).
// Errors: kNotFound (the process has exited) or kIoError when the file cannot be read,
// kInvalidArgument only when it does not parse.
Result<ProcessStat> ReadProcessStat(const std::string& proc_root, std::uint32_t pid);

}  // namespace neuronmon::procfs
