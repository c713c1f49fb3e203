#include "daemon/server/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace neuronmon::daemon {
namespace {

const char* JournalPrefix(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kError:
      return "<3>";
    case LogSeverity::kWarn:
      return "<4>";
    case LogSeverity::kInfo:
      return "<6>";
    case LogSeverity::kDebug:
      return "<7>";
  }
  return "<6>";
}

std::string LinePrefix(LogFormat format, LogSeverity severity, WallTime time) {
  if (format == LogFormat::kJournal) return JournalPrefix(severity);
  return FormatUtcMillis(time) + " " + LogSeverityName(severity) + ": ";
}

bool ParseDecimal(std::string_view text, std::uint64_t& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return !text.empty() && ec == std::errc() && ptr == end;
}

// Short writes are finished so one message stays whole; any other failure drops the rest.
void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::optional<std::string> GetEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

WallTime SystemWallNow() { return std::chrono::system_clock::now(); }

LogFormat DetectFormat(int fd, const LoggerOptions& options) {
  const std::optional<std::string> stream =
      options.env_lookup ? options.env_lookup("JOURNAL_STREAM") : GetEnv("JOURNAL_STREAM");
  return stream && IsJournalStream(fd, *stream) ? LogFormat::kJournal : LogFormat::kTimestamped;
}

}  // namespace

const char* LogSeverityName(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kError:
      return "error";
    case LogSeverity::kWarn:
      return "warn";
    case LogSeverity::kInfo:
      return "info";
    case LogSeverity::kDebug:
      return "debug";
  }
  return "info";
}

std::string FormatLogMessage(LogFormat format, LogSeverity severity, WallTime time,
                             std::string_view message) {
  const std::string prefix = LinePrefix(format, severity, time);
  if (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  std::string out;
  out.reserve(message.size() + prefix.size() + 1);
  while (true) {
    const std::size_t newline = message.find('\n');
    out += prefix;
    out += message.substr(0, newline);
    out += '\n';
    if (newline == std::string_view::npos) return out;
    message.remove_prefix(newline + 1);
  }
}

bool IsJournalStream(int fd, std::string_view journal_stream) {
  const std::size_t colon = journal_stream.find(':');
  if (colon == std::string_view::npos) return false;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  if (!ParseDecimal(journal_stream.substr(0, colon), device) ||
      !ParseDecimal(journal_stream.substr(colon + 1), inode)) {
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  return st.st_dev == device && st.st_ino == inode;
}

Logger::Logger() : Logger(LoggerOptions{}) {}

Logger::Logger(LoggerOptions options)
    : fd_(options.fd),
      format_(DetectFormat(options.fd, options)),
      wall_now_(options.wall_now ? std::move(options.wall_now) : SystemWallNow),
      threshold_(options.threshold) {}

void Logger::SetThreshold(LogSeverity threshold) { threshold_.store(threshold); }

LogSeverity Logger::threshold() const { return threshold_.load(); }

bool Logger::Enabled(LogSeverity severity) const { return severity <= threshold_.load(); }

void Logger::Log(LogSeverity severity, std::string_view message) {
  if (!Enabled(severity)) return;
  // The clock is read under the lock so lines reach the file in timestamp order.
  std::lock_guard lock(write_mu_);
  WriteAll(fd_, FormatLogMessage(format_, severity, wall_now_(), message));
}

LogRateLimiter::LogRateLimiter(Nanos interval, std::size_t max_keys)
    : interval_(interval), max_keys_(max_keys) {
  assert(interval > Nanos::zero() && max_keys > 0);
}

LogRateLimiter::Decision LogRateLimiter::Admit(std::string_view key, MonoTime now) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= max_keys_) ForgetExpired(now);
    if (entries_.size() < max_keys_) entries_.emplace(std::string(key), Entry{now, 0});
    return {true, 0};
  }
  Entry& entry = it->second;
  if (now - entry.window_start < interval_) {
    ++entry.suppressed;
    return {false, 0};
  }
  const std::uint64_t suppressed = std::exchange(entry.suppressed, 0);
  entry.window_start = now;
  return {true, suppressed};
}

void LogRateLimiter::ForgetExpired(MonoTime now) {
  std::erase_if(entries_,
                [&](const auto& kv) { return now - kv.second.window_start >= interval_; });
}

std::string WithSuppressedCount(std::string_view message, std::uint64_t suppressed) {
  std::string out(message);
  if (suppressed == 0) return out;
  out += " (" + std::to_string(suppressed) +
         (suppressed == 1 ? " similar message suppressed)" : " similar messages suppressed)");
  return out;
}

}  // namespace neuronmon::daemon
