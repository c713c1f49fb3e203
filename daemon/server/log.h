// Logger: the daemon's diagnostic log, written to a file descriptor (stderr by default). Each
// message becomes one '\n'-terminated line per line of its text, every line with its own prefix,
// and the whole message goes out in a single write(), so messages from concurrent threads never
// interleave. When the descriptor is the systemd journal's stream (JOURNAL_STREAM names its device
// and inode), lines carry the sd-daemon priority prefix ("<4>") and no timestamp, because the
// journal records both; otherwise each line starts with an RFC 3339 UTC timestamp and the severity:
//   2026-12-02T12:34:56.789Z warn: client 12 (uid 1000 pid 4242) dropped 3 reports
// Logging never fails: a write error drops the message, as there is nowhere left to report it.
// The Logger does not own the descriptor. Thread-safe: every method may be called concurrently.
//
// LogRateLimiter keeps a message that repeats (per client, per tick) from flooding the log.
// Thread-safe.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "proto/common/clock.h"

namespace neuronmon::daemon {

// Most severe first: a threshold of kInfo lets kError, kWarn and kInfo through.
enum class LogSeverity { kError, kWarn, kInfo, kDebug };

enum class LogFormat {
  kTimestamped,  // "<RFC 3339 UTC, ms> <severity>: <text>"
  kJournal,      // "<N><text>" with N the syslog priority: 3 error, 4 warn, 6 info, 7 debug
};

// "error", "warn", "info" or "debug".
const char* LogSeverityName(LogSeverity severity);

// The exact bytes Logger writes for one message: a '\n'-terminated, prefixed line per line of
// `message`. A single trailing '\n' adds no empty line; an empty message gives one empty line.
std::string FormatLogMessage(LogFormat format, LogSeverity severity, WallTime time,
                             std::string_view message);

// True when `journal_stream` (JOURNAL_STREAM's value, "<device>:<inode>" in decimal) names the file
// `fd` refers to. False when it is malformed or `fd` cannot be inspected.
bool IsJournalStream(int fd, std::string_view journal_stream);

struct LoggerOptions {
  int fd = STDERR_FILENO;  // not owned; must stay open for the Logger's lifetime
  LogSeverity threshold = LogSeverity::kInfo;
  // Timestamps. Called with the Logger's write lock held, so it need not be thread-safe.
  // Default: the system clock.
  std::function<WallTime()> wall_now;
  // Environment lookup, consulted once at construction for JOURNAL_STREAM. Default: getenv.
  std::function<std::optional<std::string>(const std::string& name)> env_lookup;
};

class Logger {
 public:
  // stderr, threshold kInfo, the real clock and environment.
  Logger();
  explicit Logger(LoggerOptions options);
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // Messages less severe than `threshold` are discarded from now on.
  void SetThreshold(LogSeverity threshold);
  LogSeverity threshold() const;
  // Whether Log(severity, ...) would write; check it before building an expensive debug message.
  bool Enabled(LogSeverity severity) const;
  // kJournal when the descriptor was the journal stream at construction.
  LogFormat format() const { return format_; }

  // Writes `message` when Enabled(severity). Never fails, never throws on I/O errors.
  void Log(LogSeverity severity, std::string_view message);
  void Error(std::string_view message) { Log(LogSeverity::kError, message); }
  void Warn(std::string_view message) { Log(LogSeverity::kWarn, message); }
  void Info(std::string_view message) { Log(LogSeverity::kInfo, message); }
  void Debug(std::string_view message) { Log(LogSeverity::kDebug, message); }

 private:
  const int fd_;
  const LogFormat format_;
  const std::function<WallTime()> wall_now_;
  std::atomic<LogSeverity> threshold_;
  std::mutex write_mu_;  // one message's write()s at a time, in timestamp order
};

// At most one message per key per interval; the rest are counted, and the count is handed to the
// next message let through so it can say how many were dropped:
//   if (auto d = limiter.Admit("slow-client", now); d.allowed)
//     logger.Warn(WithSuppressedCount("client 12 dropped 3 reports", d.suppressed));
// Memory is bounded by `max_keys`. When the table is full, keys whose interval has passed are
// forgotten (with any count not yet reported); if it is still full, a new key is let through
// untracked.
class LogRateLimiter {
 public:
  struct Decision {
    bool allowed = false;
    // When allowed: messages under this key suppressed since the previous allowed one.
    std::uint64_t suppressed = 0;
  };

  // REQUIRES: interval > 0, max_keys > 0.
  explicit LogRateLimiter(Nanos interval, std::size_t max_keys = 256);

  // Decides for one message under `key` at monotonic time `now`. REQUIRES: `now` does not go
  // backwards between calls.
  Decision Admit(std::string_view key, MonoTime now);

 private:
  struct Entry {
    MonoTime window_start;
    std::uint64_t suppressed = 0;
  };
  void ForgetExpired(MonoTime now);  // REQUIRES: mu_ held

  const Nanos interval_;
  const std::size_t max_keys_;
  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;  // guarded by mu_
};

// `message` followed by " (N similar messages suppressed)" when `suppressed` > 0, else `message`.
std::string WithSuppressedCount(std::string_view message, std::uint64_t suppressed);

}  // namespace neuronmon::daemon
