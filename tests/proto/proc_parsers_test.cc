#include "proto/procfs/proc_parsers.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace neuronmon::procfs {
namespace {

// Linux 6.1 on a 4-vCPU VM (the aggregate line is the sum of the cpuN lines).
constexpr std::string_view kProcStat =
    "cpu  10132152 290695 3084718 46828482 16683 0 25194 1200 0 0\n"
    "cpu0 1393280 32966 572056 13343292 6130 0 17875 300 0 0\n"
    "cpu1 1335990 29561 572826 13434620 4029 0 3262 300 0 0\n"
    "cpu2 3705384 113855 968879 10051012 3341 0 2313 300 0 0\n"
    "cpu3 3697498 114313 970957 9999558 3183 0 1744 300 0 0\n"
    "intr 1188458458 28 9 0 0 0 0 3 0 1 0 0 36 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "ctxt 2134870145\n"
    "btime 1700000000\n"
    "processes 1853217\n"
    "procs_running 2\n"
    "procs_blocked 0\n"
    "softirq 401932349 2 130403473 37 1203405 0 0 1087 143906548 0 125317797\n";

std::string ErrorOf(const Status& s) {
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(ParseProcStat, ReadsAggregatePerCpuContextSwitchesAndBootTime) {
  Result<ProcStat> stat = ParseProcStat(kProcStat);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->total.user, 10132152u);
  EXPECT_EQ(stat->total.nice, 290695u);
  EXPECT_EQ(stat->total.system, 3084718u);
  EXPECT_EQ(stat->total.idle, 46828482u);
  EXPECT_EQ(stat->total.iowait, 16683u);
  EXPECT_EQ(stat->total.irq, 0u);
  EXPECT_EQ(stat->total.softirq, 25194u);
  EXPECT_EQ(stat->total.steal, 1200u);
  ASSERT_EQ(stat->per_cpu.size(), 4u);
  EXPECT_EQ(stat->per_cpu[3].cpu, 3u);
  EXPECT_EQ(stat->per_cpu[3].times.user, 3697498u);
  EXPECT_EQ(stat->context_switches, 2134870145u);
  EXPECT_EQ(stat->boot_time_seconds, 1700000000u);
}

TEST(ParseProcStat, AcceptsOldKernelsAndOfflineCpus) {
  // Linux < 2.6.11 has no steal column; cpu1 is offline; newer kernels may add columns.
  Result<ProcStat> stat = ParseProcStat(
      "cpu  10 0 5 100 1 0 2\ncpu0 5 0 2 50 1 0 1\ncpu2 5 0 3 50 0 0 1 0 0 0 9\n"
      "ctxt 7\nbtime 1\n");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->total.steal, 0u);
  ASSERT_EQ(stat->per_cpu.size(), 2u);
  EXPECT_EQ(stat->per_cpu[1].cpu, 2u);
}

TEST(ParseProcStat, NamesTheLineAndWhatIsMalformed) {
  EXPECT_EQ(ErrorOf(ParseProcStat("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4\n").status()),
            "/proc/stat: line 2: expected at least 7 numbers after \"cpu0\", got 4");
  EXPECT_EQ(
      ErrorOf(
          ParseProcStat("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\ncpu1 1 2 3 12x 5 6 7\n").status()),
      "/proc/stat: line 3: field 4 after \"cpu1\" is not a number: \"12x\"");
  EXPECT_EQ(ErrorOf(ParseProcStat("cpu  1 2 3 4 5 6 7\nctxt 1\n").status()),
            "/proc/stat: no \"btime\" line");
  EXPECT_EQ(ErrorOf(ParseProcStat("ctxt 1\nbtime 2\n").status()), "/proc/stat: no \"cpu\" line");
  EXPECT_EQ(ErrorOf(ParseProcStat("cpu  1 2 3 4 5 6 7\nbtime 2\n").status()),
            "/proc/stat: no \"ctxt\" line");
  EXPECT_EQ(ErrorOf(ParseProcStat("cpu  1 2 3 4 5 6 7\nctxt\nbtime 2\n").status()),
            "/proc/stat: line 2: expected one number after \"ctxt\"");
  EXPECT_EQ(
      ErrorOf(
          ParseProcStat("cpu 1 2 3 4 5 6 7\ncpu1 1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n").status()),
      "/proc/stat: line 3: \"cpu0\" is out of order or repeated");
  EXPECT_EQ(ErrorOf(ParseProcStat("cpu 1 2 3 4 5 6 7\ncpu 1 2 3 4 5 6 7\n").status()),
            "/proc/stat: line 2: repeated \"cpu\" line");
  EXPECT_NE(
      ErrorOf(ParseProcStat("cpu 99999999999999999999 2 3 4 5 6 7\nctxt 1\nbtime 1\n").status())
          .find("is not a number: \"99999999999999999999\""),
      std::string::npos);
  EXPECT_NE(ErrorOf(ParseProcStat("cpu -1 2 3 4 5 6 7\nctxt 1\nbtime 1\n").status()), "");
}

// Every prefix of `contents` (a file cut short) and seeded random bytes must give a value or a
// clean error, never a crash.
template <typename Parse>
void SurvivesTruncationAndGarbage(std::string_view contents, Parse parse) {
  for (std::size_t n = 0; n < contents.size(); ++n) {
    (void)parse(contents.substr(0, n)).ok();
  }
  std::mt19937 rng(42);
  for (int i = 0; i < 300; ++i) {
    std::string garbage(rng() % 200, '\0');
    for (char& c : garbage) c = static_cast<char>(rng() % 4 == 0 ? "0 \n()"[rng() % 5] : rng());
    EXPECT_FALSE(parse(garbage).ok());
  }
}

TEST(ParseProcStat, TruncatedOrGarbageInputIsAnError) {
  SurvivesTruncationAndGarbage(kProcStat, ParseProcStat);
  // Cut inside the cpu lines: an error, not zeros.
  EXPECT_FALSE(ParseProcStat(kProcStat.substr(0, 80)).ok());
}

std::string StatFile(std::string_view cpu_lines, std::uint64_t ctxt) {
  return std::string(cpu_lines) + "ctxt " + std::to_string(ctxt) + "\nbtime 1700000000\n";
}

ProcStat Parsed(const std::string& contents) {
  Result<ProcStat> stat = ParseProcStat(contents);
  EXPECT_TRUE(stat.ok()) << stat.status().ToString();
  return stat.ok() ? *stat : ProcStat{};
}

TEST(ComputeVcpuUsage, MatchesNeuronMonitorsRecordedSample) {
  // Deltas that produce neuron-monitor's inf1.xlarge record: per CPU 50/50, 16.67/83.33, 0/100,
  // 20/80 user/idle, and an average of 26.32/73.68 (5 of 19 ticks: the aggregate, not the mean).
  const ProcStat before = Parsed(StatFile(
      "cpu  100 0 0 100 0 0 0 0 0 0\ncpu0 25 0 0 25 0 0 0 0 0 0\ncpu1 25 0 0 25 0 0 0 0 0 0\n"
      "cpu2 25 0 0 25 0 0 0 0 0 0\ncpu3 25 0 0 25 0 0 0 0 0 0\n",
      1000));
  const ProcStat after = Parsed(StatFile(
      "cpu  105 0 0 114 0 0 0 0 0 0\ncpu0 28 0 0 28 0 0 0 0 0 0\ncpu1 26 0 0 30 0 0 0 0 0 0\n"
      "cpu2 25 0 0 27 0 0 0 0 0 0\ncpu3 26 0 0 29 0 0 0 0 0 0\n",
      2978));
  const VcpuUsage usage = ComputeVcpuUsage(before, after);
  EXPECT_DOUBLE_EQ(usage.average.user, 26.32);
  EXPECT_DOUBLE_EQ(usage.average.idle, 73.68);
  EXPECT_DOUBLE_EQ(usage.average.system, 0);
  ASSERT_EQ(usage.per_cpu.size(), 4u);
  EXPECT_DOUBLE_EQ(usage.per_cpu[0].usage.user, 50);
  EXPECT_DOUBLE_EQ(usage.per_cpu[1].usage.user, 16.67);
  EXPECT_DOUBLE_EQ(usage.per_cpu[1].usage.idle, 83.33);
  EXPECT_DOUBLE_EQ(usage.per_cpu[2].usage.idle, 100);
  EXPECT_DOUBLE_EQ(usage.per_cpu[3].usage.user, 20);
  EXPECT_EQ(usage.context_switch_count, 1978u);
}

TEST(CpuUsageBetween, CountsStealInTheDenominatorAndIgnoresGuest) {
  const CpuTimes before{100, 100, 100, 100, 100, 100, 100, 100};
  const CpuTimes after{110, 105, 120, 140, 105, 101, 104, 115};  // 100 ticks, 15 stolen
  const CpuUsagePercent u = CpuUsageBetween(before, after);
  EXPECT_DOUBLE_EQ(u.user, 10);
  EXPECT_DOUBLE_EQ(u.nice, 5);
  EXPECT_DOUBLE_EQ(u.system, 20);
  EXPECT_DOUBLE_EQ(u.idle, 40);
  EXPECT_DOUBLE_EQ(u.io_wait, 5);
  EXPECT_DOUBLE_EQ(u.irq, 1);
  EXPECT_DOUBLE_EQ(u.soft_irq, 4);
  EXPECT_DOUBLE_EQ(u.steal, 15);
  // guest/guest_nice are already inside user/nice, so a growing guest column changes nothing.
  const ProcStat a = Parsed(StatFile("cpu  100 0 0 100 0 0 0 0 0 0\n", 1));
  const ProcStat b = Parsed(StatFile("cpu  150 0 0 150 0 0 0 0 40 5\n", 1));
  EXPECT_DOUBLE_EQ(ComputeVcpuUsage(a, b).average.user, 50);
}

TEST(CpuUsageBetween, BackwardsCountersAndNoElapsedTimeGiveZeros) {
  const CpuTimes before{100, 0, 0, 100, 50, 0, 0, 0};
  const CpuTimes after{150, 0, 0, 150, 40, 0, 0, 0};  // iowait went backwards
  const CpuUsagePercent u = CpuUsageBetween(before, after);
  EXPECT_DOUBLE_EQ(u.user, 50);
  EXPECT_DOUBLE_EQ(u.io_wait, 0);
  const CpuUsagePercent none = CpuUsageBetween(before, before);
  EXPECT_DOUBLE_EQ(none.user + none.idle + none.steal, 0);
}

TEST(ComputeVcpuUsage, SkipsCpusThatWentOfflineOrOnline) {
  const ProcStat before = Parsed(StatFile(
      "cpu  3 0 0 3 0 0 0\ncpu0 1 0 0 1 0 0 0\ncpu1 1 0 0 1 0 0 0\ncpu2 1 0 0 1 0 0 0\n", 10));
  const ProcStat after = Parsed(StatFile(
      "cpu  9 0 0 9 0 0 0\ncpu0 3 0 0 3 0 0 0\ncpu2 3 0 0 3 0 0 0\ncpu3 3 0 0 3 0 0 0\n", 5));
  const VcpuUsage usage = ComputeVcpuUsage(before, after);
  ASSERT_EQ(usage.per_cpu.size(), 2u);
  EXPECT_EQ(usage.per_cpu[0].cpu, 0u);
  EXPECT_EQ(usage.per_cpu[1].cpu, 2u);
  EXPECT_EQ(usage.context_switch_count, 0u);  // the counter went backwards
}

// Debian 12 (Linux 6.1), abridged in the middle.
constexpr std::string_view kMeminfo =
    "MemTotal:       16318440 kB\n"
    "MemFree:         1234567 kB\n"
    "MemAvailable:   12000000 kB\n"
    "Buffers:          456789 kB\n"
    "Cached:          9876543 kB\n"
    "SwapCached:            0 kB\n"
    "Active:          5000000 kB\n"
    "Active(anon):     100000 kB\n"
    "SwapTotal:       2097148 kB\n"
    "SwapFree:        2000000 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n"
    "DirectMap1G:    2097152 kB\n";

TEST(ParseMeminfo, UsedIsTotalMinusAvailable) {
  Result<MemInfo> m = ParseMeminfo(kMeminfo);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->memory_total_bytes, 16318440ull * 1024);
  EXPECT_EQ(m->memory_used_bytes, (16318440ull - 12000000) * 1024);
  EXPECT_EQ(m->swap_total_bytes, 2097148ull * 1024);
  EXPECT_EQ(m->swap_used_bytes, 97148ull * 1024);
}

TEST(ParseMeminfo, WithoutMemAvailableSubtractsFreeBuffersAndCached) {
  Result<MemInfo> m = ParseMeminfo(
      "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n"
      "SwapTotal: 0 kB\nSwapFree: 0 kB\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->memory_used_bytes, 600u * 1024);
  EXPECT_EQ(m->swap_used_bytes, 0u);
  // Inconsistent numbers stop at 0 rather than wrapping around.
  Result<MemInfo> odd =
      ParseMeminfo("MemTotal: 1000 kB\nMemAvailable: 2000 kB\nSwapTotal: 10 kB\nSwapFree: 20 kB\n");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->memory_used_bytes, 0u);
  EXPECT_EQ(odd->swap_used_bytes, 0u);
}

TEST(ParseMeminfo, MalformedOrMissingLinesAreErrors) {
  EXPECT_EQ(ErrorOf(ParseMeminfo("MemTotal: 12x kB\n").status()),
            "/proc/meminfo: line 1: \"MemTotal\": expected \"<number> kB\", got \" 12x kB\"");
  EXPECT_EQ(ErrorOf(ParseMeminfo("MemTotal: 12\n").status()),
            "/proc/meminfo: line 1: \"MemTotal\": expected \"<number> kB\", got \" 12\"");
  EXPECT_EQ(ErrorOf(ParseMeminfo("MemFree: 1 kB\n").status()), "/proc/meminfo: no MemTotal line");
  EXPECT_EQ(ErrorOf(ParseMeminfo("MemTotal: 1 kB\nMemTotal: 2 kB\n").status()),
            "/proc/meminfo: line 2: repeated \"MemTotal\"");
  EXPECT_EQ(ErrorOf(ParseMeminfo("MemTotal: 1 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n").status()),
            "/proc/meminfo: no MemAvailable line, nor MemFree, Buffers and Cached");
  EXPECT_EQ(ErrorOf(ParseMeminfo("MemTotal: 99999999999999999 kB\n").status()).substr(0, 24),
            "/proc/meminfo: line 1: \"");
  // Cut before the swap lines: an error, not swap 0.
  EXPECT_EQ(ErrorOf(ParseMeminfo(kMeminfo.substr(0, kMeminfo.find("SwapTotal"))).status()),
            "/proc/meminfo: no SwapTotal line");
  SurvivesTruncationAndGarbage(kMeminfo, ParseMeminfo);
}

constexpr std::string_view kSelfStat =
    "12345 (neuron-monitord) S 1 12345 12345 0 -1 4194560 1534 0 0 0 25 13 0 0 20 0 3 0 5234567 "
    "123456789 2048 18446744073709551615 94000000000000 94000000100000 140720000000000 0 0 0 0 0 "
    "0 0 0 0 17 2 0 0 0 0 0 94000000200000 94000000210000 94000001000000 140720000001000 "
    "140720000001100 140720000001100 140720000002000 0\n";

TEST(ParseProcessStat, ReadsTheFieldsAfterTheCommandName) {
  Result<ProcessStat> stat = ParseProcessStat(kSelfStat);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->pid, 12345);
  EXPECT_EQ(stat->comm, "neuron-monitord");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->user_ticks, 25u);
  EXPECT_EQ(stat->system_ticks, 13u);
  EXPECT_EQ(stat->num_threads, 3u);
  EXPECT_EQ(stat->start_ticks, 5234567u);
  EXPECT_EQ(stat->virtual_memory_bytes, 123456789u);
  EXPECT_EQ(stat->resident_pages, 2048u);
}

TEST(ParseProcessStat, CommandNamesMayContainSpacesAndParentheses) {
  std::string odd(kSelfStat);
  odd.replace(odd.find("(neuron-monitord)"), 17, "(a) R 1 (b c) )");
  Result<ProcessStat> stat = ParseProcessStat(odd);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->comm, "a) R 1 (b c) ");
  EXPECT_EQ(stat->user_ticks, 25u);
  EXPECT_EQ(stat->resident_pages, 2048u);
}

TEST(ParseProcessStat, MalformedInputNamesTheFile) {
  EXPECT_EQ(ErrorOf(ParseProcessStat("12345 (x) S 1 2 3", "/proc/784315/stat").status()),
            "/proc/784315/stat: expected at least 22 fields after the command name, got 4");
  EXPECT_EQ(ErrorOf(ParseProcessStat("").status()),
            "/proc/self/stat: expected \"<pid> (<command>) ...\", got \"\"");
  EXPECT_EQ(ErrorOf(ParseProcessStat("abc (x) S").status()),
            "/proc/self/stat: the pid before the command name is not a number");
  std::string bad(kSelfStat);
  bad.replace(bad.find(" 25 13 "), 7, " 25 1x ");
  EXPECT_EQ(ErrorOf(ParseProcessStat(bad).status()),
            "/proc/self/stat: field 15 is not a number: \"1x\"");
  SurvivesTruncationAndGarbage(kSelfStat, [](std::string_view c) { return ParseProcessStat(c); });
}

TEST(CpuTimeOf, TurnsTicksIntoNanosecondsRoundingDown) {
  Result<ProcessStat> stat = ParseProcessStat(kSelfStat);
  ASSERT_TRUE(stat.ok());
  const ProcessCpuTime at100 = CpuTimeOf(*stat, 100);
  EXPECT_EQ(at100.user_ns, 250'000'000u);  // 25 ticks
  EXPECT_EQ(at100.system_ns, 130'000'000u);
  const ProcessCpuTime at3 = CpuTimeOf(*stat, 3);
  EXPECT_EQ(at3.user_ns, 8'333'333'333u);  // 25 / 3 s, rounded down
  EXPECT_EQ(at3.system_ns, 4'333'333'333u);
}

constexpr std::string_view kSelfStatus =
    "Name:\tneuron-monitord\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t12345\n"
    "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nFDSize:\t256\n"
    "VmRSS:\t    8192 kB\nThreads:\t3\n";

TEST(StatusNumber, ReadsTheNumberThatBeginsAField) {
  EXPECT_EQ(StatusNumber(kSelfStatus, "Uid"), 1000u);
  EXPECT_EQ(StatusNumber(kSelfStatus, "FDSize"), 256u);
  EXPECT_EQ(StatusNumber(kSelfStatus, "VmRSS"), 8192u) << "spaces before the number are skipped";
  EXPECT_EQ(StatusNumber(kSelfStatus, "Threads"), 3u) << "the last line needs no newline";
  EXPECT_EQ(StatusNumber("Uid:\t7\nUid:\t8\n", "Uid"), 7u) << "the first line counts";
}

TEST(StatusNumber, AbsentOrMalformedIsNothing) {
  EXPECT_EQ(StatusNumber(kSelfStatus, "Name"), std::nullopt);   // not a number
  EXPECT_EQ(StatusNumber(kSelfStatus, "NSpid"), std::nullopt);  // no such line
  EXPECT_EQ(StatusNumber(kSelfStatus, "Ui"), std::nullopt);     // a key is matched whole
  EXPECT_EQ(StatusNumber("Uid:\tgarbage\n", "Uid"), std::nullopt);
  EXPECT_EQ(StatusNumber("Uid:\t-1\n", "Uid"), std::nullopt);
  EXPECT_EQ(StatusNumber("Uid:\t99999999999999999999999\n", "Uid"), std::nullopt);
  EXPECT_EQ(StatusNumber(" Uid:\t5\n", "Uid"), std::nullopt) << "the key starts the line";
  EXPECT_EQ(StatusNumber("", "Uid"), std::nullopt);
}

// A device opened by a Neuron runtime (O_RDWR | O_CLOEXEC | O_LARGEFILE) and by a query tool
// (O_WRONLY), as the kernel prints their fdinfo.
TEST(FdinfoFlags, ReadsTheOctalFlagsLine) {
  EXPECT_EQ(FdinfoFlags("pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t1035\n"), 02100002u);
  EXPECT_EQ(FdinfoFlags("pos:\t0\nflags:\t0100001\nmnt_id:\t25\n"), 0100001u);
  EXPECT_EQ(FdinfoFlags("flags:\t00\n"), 0u);
  EXPECT_EQ(FdinfoFlags("pos:\t0\nflags:\t02\n"), 02u) << "the last line needs no newline";
}

TEST(FdinfoFlags, AbsentOrMalformedIsNothing) {
  EXPECT_EQ(FdinfoFlags(""), std::nullopt);
  EXPECT_EQ(FdinfoFlags("pos:\t0\nmnt_id:\t25\n"), std::nullopt);
  EXPECT_EQ(FdinfoFlags("flags:\t\n"), std::nullopt);
  EXPECT_EQ(FdinfoFlags("flags:\t0800\n"), std::nullopt) << "not octal";
  EXPECT_EQ(FdinfoFlags("flags:\t02x\n"), std::nullopt);
  EXPECT_EQ(FdinfoFlags("flags:\t-1\n"), std::nullopt);
  EXPECT_EQ(FdinfoFlags("flags:\t777777777777\n"), std::nullopt) << "beyond 32 bits";
  EXPECT_EQ(FdinfoFlags("eflags:\t02\n"), std::nullopt) << "the key starts the line";
}

TEST(ComputeProcessMetrics, ConvertsTicksAndPages) {
  Result<ProcessStat> stat = ParseProcessStat(kSelfStat);
  ASSERT_TRUE(stat.ok());
  Result<ProcessMetrics> m = ComputeProcessMetrics(*stat, {1700000000, 100, 4096}, 17);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_DOUBLE_EQ(m->cpu_seconds_total, 0.38);
  EXPECT_EQ(m->resident_memory_bytes, 2048u * 4096);
  EXPECT_EQ(m->virtual_memory_bytes, 123456789u);
  EXPECT_DOUBLE_EQ(m->start_time_seconds, 1700000000 + 52345.67);
  EXPECT_EQ(m->open_fds, 17u);
  EXPECT_FALSE(ComputeProcessMetrics(*stat, {1700000000, 0, 4096}, 0).ok());
  EXPECT_FALSE(ComputeProcessMetrics(*stat, {1700000000, 100, 0}, 0).ok());
}

TEST(ReadSmallFile, ReadsThisProcessAndThisMachine) {
  Result<std::string> self = ReadSmallFile("/proc/self/stat");
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  Result<ProcessStat> stat = ParseProcessStat(*self);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->pid, getpid());
  Result<std::string> proc_stat = ReadSmallFile("/proc/stat");
  ASSERT_TRUE(proc_stat.ok());
  EXPECT_TRUE(ParseProcStat(*proc_stat).ok()) << ParseProcStat(*proc_stat).status().ToString();
  Result<std::string> meminfo = ReadSmallFile("/proc/meminfo");
  ASSERT_TRUE(meminfo.ok());
  EXPECT_TRUE(ParseMeminfo(*meminfo).ok()) << ParseMeminfo(*meminfo).status().ToString();
}

TEST(ReadSmallFile, ErrorsReadLikeNeuronMonitors) {
  Result<std::string> missing = ReadSmallFile("/proc/999999999/stat");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "open /proc/999999999/stat: no such file or directory");

  std::string path = (std::filesystem::temp_directory_path() / "proc_parsers_XXXXXX").string();
  const int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << std::string(100, 'x');
  EXPECT_EQ(ReadSmallFile(path, 99).status().code(), StatusCode::kOutOfRange);
  Result<std::string> fits = ReadSmallFile(path, 100);
  EXPECT_TRUE(fits.ok() && fits->size() == 100);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace neuronmon::procfs
