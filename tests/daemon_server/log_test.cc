#include "daemon/server/log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace neuronmon::daemon {
namespace {

using namespace std::chrono_literals;

// 2026-12-02T12:34:56.789Z
WallTime FixedTime() {
  return std::chrono::sys_days{std::chrono::year{2026} / 12 / 2} + 12h + 34min + 56s + 789ms;
}

// A pipe whose read end is drained without blocking.
class Pipe {
 public:
  Pipe() {
    EXPECT_EQ(::pipe2(fds_, O_CLOEXEC), 0);
    EXPECT_EQ(::fcntl(fds_[0], F_SETFL, O_NONBLOCK), 0);
  }
  ~Pipe() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int write_fd() const { return fds_[1]; }
  // Everything written so far.
  std::string Drain() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds_[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

 private:
  int fds_[2] = {-1, -1};
};

LoggerOptions Options(int fd, std::optional<std::string> journal_stream = std::nullopt) {
  LoggerOptions options;
  options.fd = fd;
  options.wall_now = [] { return FixedTime(); };
  options.env_lookup = [journal_stream](const std::string& name) -> std::optional<std::string> {
    return name == "JOURNAL_STREAM" ? journal_stream : std::nullopt;
  };
  return options;
}

std::string StreamId(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

TEST(FormatLogMessage, TimestampedLineHasUtcMillisAndSeverity) {
  EXPECT_EQ(FormatLogMessage(LogFormat::kTimestamped, LogSeverity::kWarn, FixedTime(),
                             "client 12 (uid 1000 pid 4242) dropped 3 reports"),
            "2026-12-02T12:34:56.789Z warn: client 12 (uid 1000 pid 4242) dropped 3 reports\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kTimestamped, LogSeverity::kError, FixedTime(), "x"),
            "2026-12-02T12:34:56.789Z error: x\n");
}

TEST(FormatLogMessage, TimestampTruncatesToMillisAndPadsFields) {
  const WallTime t =
      std::chrono::sys_days{std::chrono::year{2027} / 1 / 5} + 3h + 4min + 5s + 7ms + 999us;
  EXPECT_EQ(FormatLogMessage(LogFormat::kTimestamped, LogSeverity::kDebug, t, "m"),
            "2027-01-05T03:04:05.007Z debug: m\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kTimestamped, LogSeverity::kInfo, WallTime{}, "m"),
            "1970-01-01T00:00:00.000Z info: m\n");
}

TEST(FormatLogMessage, JournalLinesCarryPriorityAndNoTimestamp) {
  const WallTime t = FixedTime();
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kError, t, "e"), "<3>e\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kWarn, t, "w"), "<4>w\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kInfo, t, "i"), "<6>i\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kDebug, t, "d"), "<7>d\n");
}

TEST(FormatLogMessage, SplitsMultiLineMessagesAndPrefixesEachLine) {
  const WallTime t = FixedTime();
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kError, t, "bad config\n  line 3"),
            "<3>bad config\n<3>  line 3\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kInfo, t, "a\n\nb"),
            "<6>a\n<6>\n<6>b\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kTimestamped, LogSeverity::kInfo, t, "a\nb"),
            "2026-12-02T12:34:56.789Z info: a\n2026-12-02T12:34:56.789Z info: b\n");
}

TEST(FormatLogMessage, TrailingNewlineAddsNoEmptyLineAndEmptyMessageIsOneLine) {
  const WallTime t = FixedTime();
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kInfo, t, "done\n"), "<6>done\n");
  EXPECT_EQ(FormatLogMessage(LogFormat::kJournal, LogSeverity::kInfo, t, ""), "<6>\n");
}

TEST(Logger, WritesTimestampedLinesToItsFd) {
  Pipe pipe;
  Logger logger(Options(pipe.write_fd()));
  EXPECT_EQ(logger.format(), LogFormat::kTimestamped);
  logger.Warn("client 12 (uid 1000 pid 4242) dropped 3 reports");
  logger.Error("two\nlines");
  EXPECT_EQ(pipe.Drain(),
            "2026-12-02T12:34:56.789Z warn: client 12 (uid 1000 pid 4242) dropped 3 reports\n"
            "2026-12-02T12:34:56.789Z error: two\n"
            "2026-12-02T12:34:56.789Z error: lines\n");
}

TEST(Logger, ThresholdDropsLessSevereMessages) {
  Pipe pipe;
  Logger logger(Options(pipe.write_fd()));
  EXPECT_EQ(logger.threshold(), LogSeverity::kInfo);
  logger.Debug("hidden");
  logger.Info("shown");
  EXPECT_EQ(pipe.Drain(), "2026-12-02T12:34:56.789Z info: shown\n");

  logger.SetThreshold(LogSeverity::kDebug);
  EXPECT_TRUE(logger.Enabled(LogSeverity::kDebug));
  logger.Debug("now shown");
  EXPECT_EQ(pipe.Drain(), "2026-12-02T12:34:56.789Z debug: now shown\n");

  logger.SetThreshold(LogSeverity::kError);
  EXPECT_FALSE(logger.Enabled(LogSeverity::kWarn));
  logger.Warn("hidden");
  logger.Log(LogSeverity::kError, "kept");
  EXPECT_EQ(pipe.Drain(), "2026-12-02T12:34:56.789Z error: kept\n");
}

TEST(Logger, UsesJournalPrefixesWhenJournalStreamMatchesTheFd) {
  Pipe pipe;
  Logger logger(Options(pipe.write_fd(), StreamId(pipe.write_fd())));
  EXPECT_EQ(logger.format(), LogFormat::kJournal);
  logger.Info("listening on /run/neuron-monitor/neuron-monitord.sock");
  logger.Warn("slow\nclient");
  EXPECT_EQ(pipe.Drain(),
            "<6>listening on /run/neuron-monitor/neuron-monitord.sock\n<4>slow\n<4>client\n");
}

TEST(Logger, KeepsTimestampsWhenJournalStreamIsAnotherFileOrMalformed) {
  Pipe pipe;
  Pipe other;
  for (const std::string& stream : {StreamId(other.write_fd()), std::string("garbage"),
                                    std::string("12:"), std::string(":34"), std::string("1:2x")}) {
    Logger logger(Options(pipe.write_fd(), stream));
    EXPECT_EQ(logger.format(), LogFormat::kTimestamped) << stream;
  }
  EXPECT_FALSE(IsJournalStream(-1, "1:2"));
  EXPECT_TRUE(IsJournalStream(pipe.write_fd(), StreamId(pipe.write_fd())));
}

TEST(Logger, ConcurrentMessagesNeverInterleave) {
  std::string path = (std::filesystem::temp_directory_path() / "neuronmon-log-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0);
  ::unlink(path.c_str());
  constexpr int kThreads = 4;
  constexpr int kMessages = 200;
  {
    Logger logger(Options(fd));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&logger, t] {
        const std::string body(300, static_cast<char>('a' + t));
        for (int i = 0; i < kMessages; ++i) logger.Info(body + "\n" + body);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  std::string contents(static_cast<size_t>(::lseek(fd, 0, SEEK_END)), '\0');
  ASSERT_EQ(::pread(fd, contents.data(), contents.size(), 0),
            static_cast<ssize_t>(contents.size()));
  ::close(fd);

  std::istringstream lines(contents);
  std::string first;
  std::string second;
  int messages = 0;
  const std::string prefix = "2026-12-02T12:34:56.789Z info: ";
  while (std::getline(lines, first) && std::getline(lines, second)) {
    ASSERT_EQ(first, second) << "a message's two lines were separated";
    ASSERT_EQ(first.substr(0, prefix.size()), prefix);
    ASSERT_EQ(first.substr(prefix.size()), std::string(300, first.back()));
    ++messages;
  }
  EXPECT_EQ(messages, kThreads * kMessages);
}

TEST(LogRateLimiter, LetsOnePerIntervalThroughAndCountsTheRest) {
  LogRateLimiter limiter(10s);
  const MonoTime t0 = MonoTime{} + 1000s;
  EXPECT_TRUE(limiter.Admit("slow-client", t0).allowed);
  EXPECT_FALSE(limiter.Admit("slow-client", t0 + 1s).allowed);
  EXPECT_FALSE(limiter.Admit("slow-client", t0 + 9999ms).allowed);

  const LogRateLimiter::Decision next = limiter.Admit("slow-client", t0 + 10s);
  EXPECT_TRUE(next.allowed);
  EXPECT_EQ(next.suppressed, 2u);
  EXPECT_EQ(WithSuppressedCount("client 12 dropped 3 reports", next.suppressed),
            "client 12 dropped 3 reports (2 similar messages suppressed)");

  // The window restarts at the message let through, and the count starts over.
  EXPECT_FALSE(limiter.Admit("slow-client", t0 + 19s).allowed);
  const LogRateLimiter::Decision later = limiter.Admit("slow-client", t0 + 20s);
  EXPECT_TRUE(later.allowed);
  EXPECT_EQ(later.suppressed, 1u);
}

TEST(LogRateLimiter, KeysAreIndependent) {
  LogRateLimiter limiter(5s);
  const MonoTime t0 = MonoTime{} + 1000s;
  EXPECT_TRUE(limiter.Admit("a", t0).allowed);
  EXPECT_TRUE(limiter.Admit("b", t0).allowed);
  EXPECT_FALSE(limiter.Admit("a", t0 + 1s).allowed);
  EXPECT_EQ(limiter.Admit("b", t0 + 5s).suppressed, 0u);
}

TEST(LogRateLimiter, FullTableForgetsExpiredKeysThenLetsNewKeysThroughUntracked) {
  LogRateLimiter limiter(5s, /*max_keys=*/2);
  const MonoTime t0 = MonoTime{} + 1000s;
  EXPECT_TRUE(limiter.Admit("a", t0).allowed);
  EXPECT_TRUE(limiter.Admit("b", t0 + 3s).allowed);
  // Full, nothing expired: "c" is let through every time rather than silenced.
  EXPECT_TRUE(limiter.Admit("c", t0 + 4s).allowed);
  EXPECT_TRUE(limiter.Admit("c", t0 + 4s).allowed);
  // "a" has expired and is forgotten to make room; "c" is tracked from now on.
  EXPECT_TRUE(limiter.Admit("c", t0 + 6s).allowed);
  EXPECT_FALSE(limiter.Admit("c", t0 + 7s).allowed);
  EXPECT_FALSE(limiter.Admit("b", t0 + 7s).allowed);
}

TEST(WithSuppressedCount, SaysNothingForZeroAndSingularForOne) {
  EXPECT_EQ(WithSuppressedCount("m", 0), "m");
  EXPECT_EQ(WithSuppressedCount("m", 1), "m (1 similar message suppressed)");
}

TEST(LogSeverityName, NamesEachSeverity) {
  EXPECT_STREQ(LogSeverityName(LogSeverity::kError), "error");
  EXPECT_STREQ(LogSeverityName(LogSeverity::kWarn), "warn");
  EXPECT_STREQ(LogSeverityName(LogSeverity::kInfo), "info");
  EXPECT_STREQ(LogSeverityName(LogSeverity::kDebug), "debug");
}

}  // namespace
}  // namespace neuronmon::daemon
