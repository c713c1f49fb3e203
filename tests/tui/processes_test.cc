// The Processes view's table: rows from the model, unavailable figures, sorting, filtering,
// grouping by job, cell formatting; and the guard in front of kill(2).
#include "tui/processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <utility>
#include <vector>

#include "proto/common/file_reader.h"
#include "proto/names/names.h"
#include "proto/procfs/proc_parsers.h"
#include "tests/tui/process_model_fixture.h"
#include "tui/process_signal.h"

namespace neuronmon::tui {
namespace {

std::vector<std::uint32_t> Pids(const std::vector<ProcessRow>& rows) {
  std::vector<std::uint32_t> out;
  for (const ProcessRow& r : rows) out.push_back(r.pid);
  return out;
}

const ProcessRow& Row(const std::vector<ProcessRow>& rows, std::uint32_t pid) {
  for (const ProcessRow& r : rows) {
    if (r.pid == pid) return r;
  }
  static const ProcessRow kNone;
  ADD_FAILURE() << "no row for pid " << pid;
  return kNone;
}

std::string Cell(const ProcessRow& r, ProcessColumn c) { return ProcessCell(r, c, 40); }

TEST(ProcessRows, OneRowPerApplicationWithWhoRunsItAndWhatItHolds) {
  const std::vector<ProcessRow> rows = BuildProcessRows(testing::ProcessModel(false));
  ASSERT_EQ(Pids(rows), (std::vector<std::uint32_t>{100, 200, 300}));
  const ProcessRow& train = Row(rows, 100);
  EXPECT_EQ(Cell(train, ProcessColumn::kUser), "alice");
  EXPECT_EQ(Cell(train, ProcessColumn::kJob), "70_3");  // array job 70, task 3
  EXPECT_EQ(Cell(train, ProcessColumn::kDevices), "0");
  EXPECT_EQ(Cell(train, ProcessColumn::kCores), "0-3");
  EXPECT_EQ(Cell(train, ProcessColumn::kDeviceMemory), "2.0GB");
  EXPECT_EQ(Cell(train, ProcessColumn::kHostMemory), "1.0GB");
  EXPECT_EQ(Cell(train, ProcessColumn::kUtilization), "25.0%");    // mean of 10, 20, 30, 40
  EXPECT_EQ(Cell(train, ProcessColumn::kVerdict), "input_bound");  // worse than healthy
  EXPECT_EQ(Cell(train, ProcessColumn::kCommand), "python train.py --lr 3e-4");
  EXPECT_EQ(Cell(Row(rows, 200), ProcessColumn::kJob), "inference/vllm-0");
  EXPECT_EQ(Cell(Row(rows, 200), ProcessColumn::kVerdict), "-");
}

TEST(ProcessRows, WhatTheBackendCannotMeasureIsUnavailableNotZero) {
  const std::vector<ProcessRow> rows = BuildProcessRows(testing::ProcessModel(false));
  const ProcessRow& serve = Row(rows, 200);
  EXPECT_FALSE(serve.utilization.has_value());
  EXPECT_FALSE(serve.device_bytes.has_value());
  EXPECT_EQ(Cell(serve, ProcessColumn::kUtilization), "n/a");
  EXPECT_EQ(Cell(serve, ProcessColumn::kDeviceMemory), "n/a");
  EXPECT_EQ(Cell(serve, ProcessColumn::kHostMemory), "n/a");
  // Its devices and cores still come from the inventory.
  EXPECT_EQ(Cell(serve, ProcessColumn::kDevices), "1");
  EXPECT_EQ(Cell(serve, ProcessColumn::kCores), "4-7");
}

// Memory known only in part (a device shared with another process) is not shown as the whole.
TEST(ProcessRows, APartialMemoryFigureIsUnavailable) {
  v1::Report report;
  report.set_seq(1);
  report.set_period_ns(1000000000);
  report.add_groups(v1::GROUP_MEMORY_USED);
  v1::RuntimeReport& r = *report.add_runtimes();
  r.set_pid(7);
  r.mutable_memory_used()->set_device_bytes(100);
  r.mutable_memory_used()->set_device_unavailable("ND1 is shared");
  Model model;
  model.Apply(report);
  const std::vector<ProcessRow> rows = BuildProcessRows(model);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(Cell(rows[0], ProcessColumn::kDeviceMemory), "n/a");
}

TEST(ProcessRows, AnApplicationMissingFromTheInventoryShowsWhatItsCountersSay) {
  const std::vector<ProcessRow> rows = BuildProcessRows(testing::ProcessModel(false));
  const ProcessRow& late = Row(rows, 300);
  EXPECT_EQ(Cell(late, ProcessColumn::kCommand), "late");  // its tag: no command line known
  EXPECT_EQ(Cell(late, ProcessColumn::kCores), "4-5");
  EXPECT_EQ(Cell(late, ProcessColumn::kDevices), "1");
  EXPECT_EQ(Cell(late, ProcessColumn::kUser), "-");
  EXPECT_EQ(Cell(late, ProcessColumn::kJob), "-");
  EXPECT_EQ(Cell(late, ProcessColumn::kUtilization), "60.0%");
  EXPECT_EQ(Cell(late, ProcessColumn::kDeviceMemory), "512.0MB");
}

TEST(ProcessRows, JobIsSlurmThenPodThenContainer) {
  v1::Attribution a;
  EXPECT_EQ(JobOf(a), "");
  a.set_container_id("3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e");
  EXPECT_EQ(JobOf(a), "3f4e5d6c7b8a");
  a.set_pod("vllm-0");
  EXPECT_EQ(JobOf(a), "vllm-0");
  a.set_namespace_("inference");
  EXPECT_EQ(JobOf(a), "inference/vllm-0");
  a.set_slurm_job_id("4242");
  EXPECT_EQ(JobOf(a), "4242");
  a.set_slurm_array_task_id("7");
  EXPECT_EQ(JobOf(a), "4242_7");
}

TEST(ProcessCells, RangesCountsAndClipping) {
  EXPECT_EQ(RangesText({}), "");
  EXPECT_EQ(RangesText({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(RangesText({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  ProcessRow r;
  for (std::uint32_t c = 0; c < 64; c += 2) r.cores.push_back(c);  // 32 ranges of one
  EXPECT_EQ(ProcessCell(r, ProcessColumn::kCores, 6), "32");       // too long to read: the count
  EXPECT_EQ(ProcessCell(r, ProcessColumn::kDevices, 6), "n/a");
  r.command = "torchrun --nproc-per-node 6 train.py";
  EXPECT_EQ(ProcessCell(r, ProcessColumn::kCommand, 8), "torchrun");
  r.job = "inference/vllm-llama2-7b-0";
  EXPECT_EQ(ProcessCell(r, ProcessColumn::kJob, 12), "inference/v…");  // cut short, and says so
  EXPECT_EQ(ProcessCell(r, ProcessColumn::kJob, 40), "inference/vllm-llama2-7b-0");
  r.utilization = 100.0;
  EXPECT_EQ(ProcessCell(r, ProcessColumn::kUtilization, 6), "100.0%");
}

TEST(ProcessSort, EveryColumnBothWaysWithUnavailableLast) {
  const std::vector<ProcessRow> base = BuildProcessRows(testing::ProcessModel(false));
  auto sorted = [&](ProcessColumn c, bool descending) {
    std::vector<ProcessRow> rows = base;
    SortProcessRows(rows, c, descending);
    return Pids(rows);
  };
  using P = std::vector<std::uint32_t>;
  EXPECT_EQ(sorted(ProcessColumn::kUtilization, true), (P{300, 100, 200}));
  EXPECT_EQ(sorted(ProcessColumn::kUtilization, false), (P{100, 300, 200}));  // n/a still last
  EXPECT_EQ(sorted(ProcessColumn::kDeviceMemory, true), (P{100, 300, 200}));
  EXPECT_EQ(sorted(ProcessColumn::kDeviceMemory, false), (P{300, 100, 200}));
  EXPECT_EQ(sorted(ProcessColumn::kPid, true), (P{300, 200, 100}));
  EXPECT_EQ(sorted(ProcessColumn::kPid, false), (P{100, 200, 300}));
  EXPECT_EQ(sorted(ProcessColumn::kUser, false), (P{300, 100, 200}));  // "", alice, bob
  EXPECT_EQ(sorted(ProcessColumn::kCommand, false), (P{300, 100, 200}));
  EXPECT_EQ(sorted(ProcessColumn::kVerdict, true), (P{100, 300, 200}));  // warning, info, none
  EXPECT_EQ(sorted(ProcessColumn::kCores, true), (P{100, 200, 300}));    // 4, 4 (by pid), 2
}

TEST(ProcessFilter, CaseInsensitiveOverCommandUserJobAndPid) {
  const std::vector<ProcessRow> rows = BuildProcessRows(testing::ProcessModel(false));
  auto matching = [&](const std::string& filter) {
    std::vector<std::uint32_t> out;
    for (const ProcessRow& r : rows) {
      if (MatchesFilter(r, filter)) out.push_back(r.pid);
    }
    return out;
  };
  using P = std::vector<std::uint32_t>;
  EXPECT_EQ(matching(""), (P{100, 200, 300}));
  EXPECT_EQ(matching("TRAIN.PY"), (P{100}));
  EXPECT_EQ(matching("Bob"), (P{200}));
  EXPECT_EQ(matching("inference/"), (P{200}));
  EXPECT_EQ(matching("70_3"), (P{100}));
  EXPECT_EQ(matching("30"), (P{300}));
  EXPECT_EQ(matching("nothing-like-it"), P{});
}

TEST(ProcessTree, GroupsByJobWithTotalsAndTheJoblessLast) {
  std::vector<ProcessRow> rows = BuildProcessRows(testing::ProcessModel(false));
  rows[1].job = rows[0].job;  // pid 200 joins pid 100's job
  const std::vector<ProcessLine> lines = ProcessLines(rows, true);
  ASSERT_EQ(lines.size(), 5u);
  ASSERT_TRUE(lines[0].group);
  EXPECT_EQ(lines[0].job, "70_3");
  EXPECT_EQ(lines[0].members, 2);
  // Memory sums what is known; utilization averages the members that have it.
  EXPECT_EQ(*lines[0].totals.device_bytes, 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(*lines[0].totals.utilization, 25.0);
  EXPECT_EQ(lines[0].totals.verdict, v1::FINDING_KIND_INPUT_BOUND);
  EXPECT_EQ(RangesText(lines[0].totals.cores), "0-7");
  EXPECT_FALSE(lines[1].group);
  EXPECT_EQ(lines[1].row, 0u);
  EXPECT_EQ(lines[2].row, 1u);
  ASSERT_TRUE(lines[3].group);
  EXPECT_EQ(lines[3].job, "");  // no job: last
  EXPECT_EQ(lines[4].row, 2u);
  // Without the tree, one line per row in order.
  EXPECT_EQ(ProcessLines(rows, false).size(), 3u);
}

// ---- the guard in front of kill(2) ----

struct Sent {
  std::vector<std::pair<std::uint32_t, int>> calls;
  std::vector<std::uint64_t> start_ticks;
  int error = 0;
  SignalTarget Target() {
    SignalTarget t;
    t.sender = [this](std::uint32_t pid, std::uint64_t start, int signal) {
      calls.emplace_back(pid, signal);
      start_ticks.push_back(start);
      return error;
    };
    return t;
  }
};

TEST(SignalGuard, SimulatedPidsAreNeverSignalled) {
  Sent sent;
  const std::string out =
      SendSignal(testing::ProcessModel(true), sent.Target(), 100, SIGTERM, "python train.py");
  EXPECT_EQ(out, "not sent: pid 100 is simulated, not a process on this host");
  EXPECT_TRUE(sent.calls.empty());
}

TEST(SignalGuard, NotOverTcpOrFromARecording) {
  Sent sent;
  SignalTarget tcp = sent.Target();
  tcp.refusal = "neuron-top is connected over TCP (--connect)";
  EXPECT_EQ(SendSignal(testing::ProcessModel(false), tcp, 100, SIGTERM, "x"),
            "not sent: neuron-top is connected over TCP (--connect)");
  EXPECT_EQ(SignalRefusal(testing::ProcessModel(false), SignalTarget{}, 100),
            "not sent: signals cannot be sent from this screen");
  EXPECT_TRUE(sent.calls.empty());
}

TEST(SignalGuard, PidsKillReadsAsGroupsOrInitAreRefused) {
  Sent sent;
  const Model model = testing::ProcessModel(false);
  for (std::uint32_t pid : {0u, 1u, static_cast<std::uint32_t>(INT_MAX) + 1, 0xffffffffu}) {
    EXPECT_NE(SendSignal(model, sent.Target(), pid, SIGKILL, "x").find("not sent"),
              std::string::npos)
        << pid;
  }
  EXPECT_TRUE(sent.calls.empty());
}

TEST(SignalGuard, SentWithThePidAndSignalOrTheErrorSaid) {
  Sent sent;
  const Model model = testing::ProcessModel(false);
  EXPECT_EQ(SendSignal(model, sent.Target(), 100, SIGKILL, "python train.py"),
            "sent SIGKILL to pid 100 (python train.py)");
  ASSERT_EQ(sent.calls.size(), 1u);
  EXPECT_EQ(sent.calls[0], std::make_pair(100u, SIGKILL));
  EXPECT_EQ(sent.start_ticks[0], 100000u);  // the inventory's start time for the pid
  sent.error = EPERM;
  EXPECT_EQ(SendSignal(model, sent.Target(), 100, SIGTERM, "python train.py"),
            "SIGTERM to pid 100 failed: Operation not permitted");
  sent.error = ESRCH;
  EXPECT_EQ(SendSignal(model, sent.Target(), 100, SIGINT, ""),
            "SIGINT to pid 100 failed: No such process");
}

// A pid is a process only with its start time: without one from the daemon nothing is sent, and a
// pid that another process has taken since is not signalled.
TEST(SignalGuard, APidIsSignalledOnlyAsTheProcessThatStartedThen) {
  Sent sent;
  Model model = testing::ProcessModel(false);
  // A report that does not say when pid 300 started (a daemon older than the field).
  v1::Report report;
  report.set_seq(2);
  report.add_groups(v1::GROUP_NEURONCORE_COUNTERS);
  for (const std::uint32_t pid : {100u, 200u, 300u}) {
    v1::RuntimeReport& r = *report.add_runtimes();
    r.set_pid(pid);
    r.set_start_time_ticks(pid == 300 ? 0 : pid * 1000);
  }
  model.Apply(report);
  EXPECT_EQ(SendSignal(model, sent.Target(), 300, SIGTERM, "x"),
            "not sent: the daemon did not say when pid 300 started, so neuron-top cannot tell "
            "it from a process that took its pid since");
  EXPECT_TRUE(sent.calls.empty());
  sent.error = kAnotherProcess;
  EXPECT_EQ(SendSignal(model, sent.Target(), 200, SIGTERM, "vllm serve"),
            "not sent: pid 200 is now another process (it started after the one listed had "
            "exited)");
}

// The real sender, on processes of this test's own: a child signalled as the process it is, and
// refused under a start time that is not its own (as a reused pid's would be).
TEST(SignalGuard, ThePidfdSenderChecksTheStartTimeOfTheProcessItSignals) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  Result<std::string> text = ReadRegularFile("/proc/" + std::to_string(child) + "/stat", 4096);
  ASSERT_TRUE(text.ok());
  Result<procfs::ProcessStat> stat = procfs::ParseProcessStat(*text);
  ASSERT_TRUE(stat.ok());
  const SignalSender send = PidfdSender();
  const auto pid = static_cast<std::uint32_t>(child);
  EXPECT_EQ(send(pid, stat->start_ticks + 1, SIGKILL), kAnotherProcess);
  EXPECT_EQ(send(pid, stat->start_ticks, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(send(pid, stat->start_ticks, SIGKILL), ESRCH);  // gone
}

TEST(SignalGuard, TheChoicesStartWithSigterm) {
  ASSERT_FALSE(SignalChoices().empty());
  EXPECT_EQ(SignalChoices().front().number, SIGTERM);
  EXPECT_EQ(SignalName(SIGHUP), "SIGHUP");
  EXPECT_EQ(SignalName(12), "signal 12");
}

}  // namespace
}  // namespace neuronmon::tui
