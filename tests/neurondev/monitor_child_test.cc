// MonitorChild against real processes: the fake_neuron_monitor executable told to print lines,
// exit, die by a signal, print garbage or a huge line, go silent or ignore SIGTERM. Time for
// backoff and stall decisions is a ManualClock the tests advance; the only real waiting is poll()
// on the child's stdout or on a pidfd of the child (an event, with a timeout), never a sleep.
// Every test leaves no process and no descriptor behind.
#include "neurondev/monitor_child.h"

#include <dirent.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/process_gone.h"
#include "tests/temp_dir.h"

namespace neuronmon::neurondev {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Lines = std::vector<std::string>;

constexpr const char* kFake = NEURONMON_FAKE_NEURON_MONITOR;
constexpr const char* kFakeName = "fake_neuron_monitor";

ChildSpec Fake(std::vector<std::string> args) { return ChildSpec{kFake, std::move(args), {}}; }

// Blocks up to 100 ms for the child's next event: output on its stdout, or, when it has no stdout
// any more, its exit. False when there is nothing to wait for.
bool WaitForEvent(const MonitorChild& child) {
  if (child.fd() >= 0) {
    pollfd ready{child.fd(), POLLIN, 0};
    ::poll(&ready, 1, 100);
    return true;
  }
  const pid_t pid = child.status().pid;
  if (pid <= 0) return false;
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return true;  // already gone: the next Poll reaps it
  pollfd ready{pidfd, POLLIN, 0};
  ::poll(&ready, 1, 100);
  ::close(pidfd);
  return true;
}

// Polls at `now` until `done(lines so far)` holds, waiting for the child's events in between.
// Fails the test after 3 s of real time or when there is nothing left to wait for.
Lines PollUntil(MonitorChild& child, MonoTime now, const std::function<bool(const Lines&)>& done) {
  Lines all;
  const auto give_up = std::chrono::steady_clock::now() + seconds(3);
  for (;;) {
    for (std::string& line : child.Poll(now)) all.push_back(std::move(line));
    if (done(all)) return all;
    if (std::chrono::steady_clock::now() > give_up || !WaitForEvent(child)) {
      ADD_FAILURE() << "gave up waiting; state " << ChildStateName(child.status().state)
                    << ", error: " << child.status().last_error;
      return all;
    }
  }
}

Lines PollForLines(MonitorChild& child, MonoTime now, std::size_t count) {
  return PollUntil(child, now, [count](const Lines& lines) { return lines.size() >= count; });
}

void PollUntilReaped(MonitorChild& child, MonoTime now) {
  PollUntil(child, now, [&](const Lines&) { return child.status().pid < 0; });
}

int OpenFds() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

bool Reaped(pid_t pid) {
  errno = 0;
  return ::waitpid(pid, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

class TempDir : public test_util::TempDir {
 public:
  TempDir() : test_util::TempDir("monitor_child") {}
};

class MonitorChildTest : public ::testing::Test {
 protected:
  MonoTime Now() const { return clock_.Now(); }
  ManualClock clock_;
};

TEST(MonitorChildLineSplitter, SplitsLinesAcrossChunks) {
  LineSplitter splitter(100);
  Lines lines;
  EXPECT_EQ(splitter.Feed("{\"a\":1}\n{\"b\"", lines), 0u);
  EXPECT_EQ(lines, Lines{"{\"a\":1}"});
  EXPECT_EQ(splitter.Feed(":2}\r\n\n", lines), 0u);
  EXPECT_EQ(lines, (Lines{"{\"a\":1}", "{\"b\":2}"}));
  splitter.Feed("cut off by a restart", lines);
  splitter.Reset();
  splitter.Feed("{}\n", lines);
  EXPECT_EQ(lines.back(), "{}");
}

TEST(MonitorChildLineSplitter, DropsAnOverlongLineUpToItsNewlineAndCountsItOnce) {
  LineSplitter splitter(8);
  Lines lines;
  EXPECT_EQ(splitter.Feed("12345678\n", lines), 0u);  // exactly the limit is kept
  EXPECT_EQ(splitter.Feed("123456789", lines), 1u);
  EXPECT_EQ(splitter.Feed("and more of the same line", lines), 0u);
  EXPECT_EQ(splitter.Feed("\nok\n", lines), 0u);
  EXPECT_EQ(splitter.Feed(std::string(20, 'a') + "\n" + std::string(9, 'b') + "\nz\n", lines), 2u);
  EXPECT_EQ(lines, (Lines{"12345678", "ok", "z"}));
}

TEST_F(MonitorChildTest, LinesArriveFromAChildStartedWithoutAShell) {
  ASSERT_EQ(::setenv("NEURONMON_FAKE_VAR", "inherited", 1), 0);
  MonitorChild child(ChildSpec{kFake,
                               {"-c", "/etc/neuron-monitor.json", "--period-ms", "5", "--echo",
                                "$(touch x); *", "--env", "NEURONMON_FAKE_VAR"},
                               {"NEURONMON_FAKE_VAR=from the spec"}});
  ::unsetenv("NEURONMON_FAKE_VAR");
  EXPECT_EQ(child.status().state, ChildState::kStarting);
  EXPECT_EQ(child.status().pid, -1);  // nothing runs before the first Poll
  EXPECT_EQ(child.fd(), -1);

  const Lines lines = PollForLines(child, Now(), 4);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "$(touch x); *");
  EXPECT_EQ(lines[1], "from the spec");
  EXPECT_EQ(lines[2], "{\"seq\":0}");
  EXPECT_EQ(lines[3], "{\"seq\":1}");
  const ChildStatus status = child.status();
  EXPECT_EQ(status.state, ChildState::kRunning);
  EXPECT_GT(status.pid, 0);
  EXPECT_GE(child.fd(), 0);
  EXPECT_EQ(status.restarts, 0u);
  EXPECT_EQ(status.lines, lines.size());
  EXPECT_EQ(status.last_error, "");
}

TEST_F(MonitorChildTest, ChildInheritsOnlyStdinStdoutAndStderr) {
  const int leaky = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaky, 0);
  {
    MonitorChild child(Fake({"--count-fds", "--silent"}));
    EXPECT_EQ(PollForLines(child, Now(), 1), Lines{"fds 0"});
  }
  ::close(leaky);
}

TEST_F(MonitorChildTest, ExitIsReportedAndRestartedAfterABackoffThatDoublesUpToItsCap) {
  ChildLimits limits;
  limits.max_backoff = seconds(4);
  MonitorChild child(Fake({"--period-ms", "1", "--count", "1", "--exit-code", "3"}), limits);
  EXPECT_EQ(PollUntil(child, Now(), [&](const Lines&) { return child.status().pid < 0; }),
            Lines{"{\"seq\":0}"});
  ChildStatus status = child.status();
  EXPECT_EQ(status.state, ChildState::kBackoff);
  EXPECT_EQ(status.last_error, "fake_neuron_monitor exited with status 3");
  ASSERT_TRUE(status.next_start.has_value());
  EXPECT_EQ(*status.next_start, Now() + seconds(1));

  const int restarts[] = {1, 2, 4, 4};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    clock_.Advance(seconds(restarts[i]) - milliseconds(1));
    child.Poll(Now());
    EXPECT_EQ(child.status().pid, -1);  // not yet
    clock_.Advance(milliseconds(1));
    child.Poll(Now());
    EXPECT_GT(child.status().pid, 0);
    EXPECT_EQ(child.status().restarts, static_cast<std::uint64_t>(i + 1));
    PollUntilReaped(child, Now());
    status = child.status();
    EXPECT_EQ(status.last_error, "fake_neuron_monitor exited with status 3");
    const int next = i + 1 < 4 ? restarts[i + 1] : 4;
    EXPECT_EQ(status.next_start, Now() + seconds(next));
  }
}

TEST_F(MonitorChildTest, ExitReportIncludesTheLastLineOfStderr) {
  MonitorChild child(Fake(
      {"--count", "0", "--exit-code", "2", "--stderr", "error: cannot read /etc/nm.json\x1b[2J"}));
  PollUntilReaped(child, Now());
  EXPECT_EQ(child.status().last_error,
            "fake_neuron_monitor exited with status 2: error: cannot read /etc/nm.json");
  EXPECT_EQ(child.status().stderr_tail, "error: cannot read /etc/nm.json\x1b[2J\n");
}

TEST_F(MonitorChildTest, DeathBySignalIsReported) {
  MonitorChild child(Fake({"--period-ms", "1", "--count", "1", "--signal", "9"}));
  PollUntilReaped(child, Now());
  EXPECT_EQ(child.status().state, ChildState::kBackoff);
  EXPECT_EQ(child.status().last_error, "fake_neuron_monitor killed by signal 9 (SIGKILL)");
}

TEST_F(MonitorChildTest, LinesReportedBadRestartTheChildAfterTenInARow) {
  MonitorChild child(Fake({"--garbage", "--period-ms", "2"}));
  std::uint64_t reported = 0;
  PollUntil(child, Now(), [&](const Lines& lines) {
    for (; reported < lines.size(); ++reported) {
      EXPECT_THAT(lines[reported], StartsWith("this is not JSON"));
      child.ReportBadLine("not JSON");
      if (reported == 0) {
        EXPECT_EQ(child.status().last_error,
                  "fake_neuron_monitor printed something that is not a document: not JSON");
      }
    }
    return child.status().state == ChildState::kBackoff;
  });
  const ChildStatus status = child.status();
  EXPECT_GE(reported, 10u);
  EXPECT_EQ(status.bad_lines, reported);
  EXPECT_THAT(status.last_error,
              HasSubstr("lines in a row that are not documents; restarting it (last: not JSON)"));
  EXPECT_EQ(child.fd(), -1);  // nothing more is read from it
  EXPECT_EQ(status.next_start, Now() + seconds(1));
  PollUntilReaped(child, Now());
  clock_.Advance(seconds(1));
  child.Poll(Now());
  EXPECT_EQ(child.status().state, ChildState::kStarting);
  EXPECT_EQ(child.status().restarts, 1u);
}

TEST_F(MonitorChildTest, OverlongLineIsDiscardedAndCounted) {
  ChildLimits limits;
  limits.max_line_bytes = 64 << 10;
  MonitorChild child(Fake({"--huge", "200000", "--period-ms", "2"}), limits);
  const Lines lines = PollForLines(child, Now(), 2);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "{\"seq\":0}");
  const ChildStatus status = child.status();
  EXPECT_EQ(status.overlong_lines, 1u);
  EXPECT_GT(status.bytes_read, 200000u);
  EXPECT_EQ(status.state, ChildState::kRunning);
  EXPECT_EQ(status.last_error,
            "fake_neuron_monitor printed a line longer than 64 KiB; discarded it");
}

TEST_F(MonitorChildTest, EachPollReadsAtMostItsBudget) {
  ChildLimits limits;
  limits.max_read_bytes_per_poll = 4096;
  MonitorChild child(Fake({"--huge", "100000", "--period-ms", "1000"}), limits);
  std::uint64_t last = 0;
  const Lines lines = PollUntil(child, Now(), [&](const Lines& so_far) {
    EXPECT_LE(child.status().bytes_read - last, 4096u);
    last = child.status().bytes_read;
    return so_far.size() >= 2;
  });
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::string(100000, 'x'));
  EXPECT_EQ(lines[1], "{\"seq\":0}");
}

TEST_F(MonitorChildTest, StalledChildIsKilledAndRestarted) {
  MonitorChild child(Fake({"--silent"}));
  child.Poll(Now());
  const pid_t pid = child.status().pid;
  ASSERT_GT(pid, 0);
  clock_.Advance(seconds(29));
  child.Poll(Now());
  EXPECT_EQ(child.status().state, ChildState::kStarting);
  clock_.Advance(seconds(1));
  child.Poll(Now());
  const ChildStatus status = child.status();
  EXPECT_EQ(status.state, ChildState::kBackoff);
  EXPECT_EQ(status.last_error, "fake_neuron_monitor printed nothing for 30s; restarting it");
  EXPECT_EQ(status.next_start, Now() + seconds(1));
  EXPECT_EQ(child.fd(), -1);
  PollUntilReaped(child, Now());
  EXPECT_TRUE(Reaped(pid));
  clock_.Advance(seconds(1));
  child.Poll(Now());
  EXPECT_GT(child.status().pid, 0);
  EXPECT_EQ(child.status().restarts, 1u);
}

TEST_F(MonitorChildTest, IgnoredSigtermIsFollowedBySigkillAfterTheGracePeriod) {
  MonitorChild child(Fake({"--ignore-term", "--hang-after", "1", "--period-ms", "1"}));
  PollForLines(child, Now(), 1);  // SIGTERM is ignored from here on
  const pid_t pid = child.status().pid;
  clock_.Advance(seconds(30));
  child.Poll(Now());  // stalled: SIGTERM
  EXPECT_EQ(child.status().state, ChildState::kBackoff);
  clock_.Advance(milliseconds(4900));
  child.Poll(Now());
  EXPECT_EQ(child.status().pid, pid);  // still alive
  clock_.Advance(milliseconds(100));
  PollUntil(child, Now(), [&](const Lines&) { return child.status().pid != pid; });  // SIGKILL
  EXPECT_TRUE(Reaped(pid));
  EXPECT_EQ(child.status().restarts, 1u);  // its restart was due before it died
}

TEST_F(MonitorChildTest, MissingExecutableIsNotInstalledAndRecheckedEveryMinute) {
  TempDir dir;
  const std::string path = dir.File("neuron-monitor");
  MonitorChild child(ChildSpec{path, {"--period-ms", "5"}, {}});
  child.Poll(Now());
  ChildStatus status = child.status();
  EXPECT_EQ(status.state, ChildState::kNotInstalled);
  EXPECT_EQ(status.last_error, "not found: " + path + " — install aws-neuronx-tools");
  EXPECT_EQ(status.next_start, Now() + seconds(60));
  EXPECT_EQ(status.pid, -1);

  ASSERT_EQ(::symlink(kFake, path.c_str()), 0);  // installed meanwhile
  clock_.Advance(seconds(59));
  child.Poll(Now());
  EXPECT_EQ(child.status().state, ChildState::kNotInstalled);
  clock_.Advance(seconds(1));
  const Lines lines = PollForLines(child, Now(), 1);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "{\"seq\":0}");
  status = child.status();
  EXPECT_EQ(status.state, ChildState::kRunning);
  EXPECT_EQ(status.last_error, "");
  EXPECT_EQ(status.restarts, 0u);
}

TEST_F(MonitorChildTest, FilesThatCannotBeExecutedAreReported) {
  TempDir dir;
  const std::string plain = dir.File("plain");
  const std::string garbage = dir.File("garbage");
  std::ofstream(plain) << "#!/bin/sh\n";
  std::ofstream(garbage) << "not a program\n";
  ASSERT_EQ(::chmod(plain.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(garbage.c_str(), 0755), 0);
  const std::pair<std::string, std::string> cases[] = {
      {plain, "not executable: " + plain + " (Permission denied)"},
      {garbage, "not executable: " + garbage + " (Exec format error)"},
      {dir.File(""), "not executable: " + dir.File("") + " (Is a directory)"},
      {"neuron-monitor", "not an absolute path: neuron-monitor"},
  };
  for (const auto& [path, error] : cases) {
    MonitorChild child(ChildSpec{path, {}, {}});
    child.Poll(Now());
    EXPECT_EQ(child.status().state, ChildState::kNotInstalled) << path;
    EXPECT_EQ(child.status().last_error, error);
    EXPECT_EQ(child.status().next_start, Now() + seconds(60)) << path;
  }
}

TEST_F(MonitorChildTest, DestructionKillsAndReapsTheChildAndClosesEveryFd) {
  const int fds_before = OpenFds();
  pid_t pid = -1;
  {
    MonitorChild child(Fake({"--ignore-term", "--period-ms", "5"}));
    PollForLines(child, Now(), 1);
    pid = child.status().pid;
    ASSERT_GT(pid, 0);
    EXPECT_EQ(OpenFds(), fds_before + 2);  // stdout and stderr pipes
  }
  EXPECT_TRUE(Reaped(pid));
  EXPECT_EQ(OpenFds(), fds_before);
}

TEST_F(MonitorChildTest, StopEndsTheChildForGood) {
  MonitorChild child(Fake({"--period-ms", "5"}));
  PollForLines(child, Now(), 1);
  const pid_t pid = child.status().pid;
  child.Stop(Now());
  EXPECT_EQ(child.status().state, ChildState::kStopped);
  EXPECT_EQ(child.fd(), -1);
  PollUntilReaped(child, Now());
  EXPECT_TRUE(Reaped(pid));
  clock_.Advance(seconds(300));
  EXPECT_EQ(child.Poll(Now()), Lines{});
  EXPECT_EQ(child.status().state, ChildState::kStopped);
  EXPECT_EQ(child.status().pid, -1);
  EXPECT_EQ(child.status().restarts, 0u);
  EXPECT_EQ(child.status().last_error, "");
}

TEST_F(MonitorChildTest, AMinuteOfGoodOutputResetsTheBackoff) {
  MonitorChild child(Fake({"--period-ms", "5"}));
  PollForLines(child, Now(), 1);
  ASSERT_EQ(::kill(child.status().pid, SIGKILL), 0);
  PollUntilReaped(child, Now());
  EXPECT_EQ(child.status().last_error, "fake_neuron_monitor killed by signal 9 (SIGKILL)");
  EXPECT_EQ(child.status().next_start, Now() + seconds(1));  // the next one would wait 2 s
  clock_.Advance(seconds(1));
  for (int i = 0; i < 4; ++i) {  // lines at +0 s, +25 s, +50 s and +75 s: never stalled
    PollForLines(child, Now(), 1);
    if (i < 3) clock_.Advance(seconds(25));
  }
  EXPECT_EQ(child.status().restarts, 1u);
  ASSERT_EQ(::kill(child.status().pid, SIGKILL), 0);
  PollUntilReaped(child, Now());
  EXPECT_EQ(child.status().next_start, Now() + seconds(1));
}

}  // namespace
}  // namespace neuronmon::neurondev

namespace neuronmon::neurondev {
namespace {

ChildSpec Sh(const std::string& script) { return ChildSpec{"/bin/sh", {"-c", script}, {}}; }

TEST(RunToCompletion, KeepsStdoutAndTheTailOfStderrOfAProgramThatExits) {
  const ChildRun ok = RunToCompletion(Sh("echo table; echo Avg 1; echo note >&2"));
  EXPECT_TRUE(ok.started);
  EXPECT_EQ(ok.error, "");
  EXPECT_EQ(ok.exit_status, 0);
  EXPECT_EQ(ok.out, "table\nAvg 1\n");
  EXPECT_EQ(ok.stderr_tail, "note\n");

  const ChildRun failed = RunToCompletion(Sh("echo partial; printf 'first\\nlast\\n' >&2; exit 3"));
  EXPECT_EQ(failed.error, "sh exited with status 3");
  EXPECT_EQ(failed.exit_status, 3);
  EXPECT_EQ(failed.out, "partial\n");
  EXPECT_EQ(failed.last_stderr_line, "last");
  EXPECT_FALSE(failed.timed_out);
}

TEST(RunToCompletion, KillsAProgramThatOutlivesItsTimeoutWithItsProcessGroup) {
  ChildRunLimits limits;
  limits.timeout = milliseconds(100);
  limits.kill_grace = milliseconds(100);
  // Ignores SIGTERM, and its child (a second process in its group) holds the pipes.
  const auto start = std::chrono::steady_clock::now();
  const ChildRun hung =
      RunToCompletion(Sh("trap '' TERM; sleep 30 & echo $!; wait; sleep 30"), limits);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_TRUE(hung.timed_out);
  EXPECT_EQ(hung.error, "sh did not finish within 100ms");
  EXPECT_FALSE(hung.exit_status.has_value());
  const pid_t sleeper = std::atoi(hung.out.c_str());
  ASSERT_GT(sleeper, 0) << hung.out;
  EXPECT_TRUE(test_util::Gone(sleeper)) << "its child outlived it";
}

TEST(RunToCompletion, WhatAChildLeavesInItsGroupIsKilledWhenItExits) {
  // Exits at once, leaving a worker that ignores SIGTERM and holds stdout.
  const auto start = std::chrono::steady_clock::now();
  const ChildRun run = RunToCompletion(Sh("(trap '' TERM; exec sleep 30) & echo $!"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_EQ(run.error, "");
  const pid_t worker = std::atoi(run.out.c_str());
  ASSERT_GT(worker, 0) << run.out;
  EXPECT_TRUE(test_util::Gone(worker)) << "its worker outlived it";
}

TEST(RunToCompletion, AnExitIsSeenWhenThisProcessIgnoresSigchld) {
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &old), 0);
  const ChildRun run = RunToCompletion(Sh("exit 4"));
  struct sigaction now {};
  ::sigaction(SIGCHLD, &old, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN) << "the caller's disposition is put back";
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_status, 4);
  EXPECT_EQ(run.error, "sh exited with status 4");
}

TEST(RunToCompletion, SaysWhyAProgramCannotRunAndCapsWhatItKeeps) {
  const ChildRun missing = RunToCompletion(ChildSpec{"/nonexistent/nccom-test", {}, {}});
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(missing.error, "not found: /nonexistent/nccom-test");
  const ChildRun relative = RunToCompletion(ChildSpec{"nccom-test", {}, {}});
  EXPECT_EQ(relative.error, "not an absolute path: nccom-test");
  const ChildRun directory = RunToCompletion(ChildSpec{"/tmp", {}, {}});
  EXPECT_EQ(directory.error, "cannot run /tmp: Is a directory");

  ChildRunLimits limits;
  limits.max_stdout_bytes = 10;
  limits.stderr_tail_bytes = 4;
  const ChildRun chatty =
      RunToCompletion(Sh("head -c 100000 /dev/zero | tr '\\0' x; printf 0123456789; "
                         "echo 123456789 >&2"),
                      limits);
  EXPECT_EQ(chatty.error, "");
  EXPECT_EQ(chatty.out, "0123456789");  // the last bytes: a verdict comes last
  EXPECT_TRUE(chatty.out_truncated);
  EXPECT_EQ(chatty.stderr_tail, "789\n");
}

}  // namespace
}  // namespace neuronmon::neurondev
