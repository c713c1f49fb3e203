#include "neurondev/kernel_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace neuronmon::neurondev {
namespace {

// A /dev/kmsg record is at most 8 KiB (the kernel's CONSOLE_EXT_LOG_MAX); a longer dmesg line in a
// file is skipped.
constexpr std::size_t kRecordBytes = 16384;
constexpr std::size_t kMaxFieldBytes = 64;

std::optional<int> SmallIndex(std::string_view digits) {
  int v = 0;
  if (digits.empty() || digits.size() > 6) return std::nullopt;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

// "neuron12:" names device 12.
std::optional<int> DevicePrefix(std::string_view token) {
  constexpr std::string_view kPrefix = "neuron";
  if (token.size() < kPrefix.size() + 2 || token.substr(0, kPrefix.size()) != kPrefix ||
      token.back() != ':') {
    return std::nullopt;
  }
  return SmallIndex(token.substr(kPrefix.size(), token.size() - kPrefix.size() - 1));
}

}  // namespace

std::optional<KernelHwError> ParseKernelLogRecord(std::string_view record) {
  if (record.empty() || record.front() == ' ') return std::nullopt;
  // A /dev/kmsg record starts with "priority,sequence,microseconds,flags[,...];".
  const std::size_t semi = record.find(';');
  if (semi != std::string_view::npos &&
      record.substr(0, semi).find_first_not_of("0123456789,-cf+") == std::string_view::npos &&
      semi > 0 && record[0] >= '0' && record[0] <= '9') {
    record.remove_prefix(semi + 1);
  }
  record = record.substr(0, record.find('\n'));  // the message; dictionary lines follow
  if (record.find("NEURON_HW_ERR=") == std::string_view::npos) return std::nullopt;
  KernelHwError e;
  std::optional<int> nd_id, prefix, device;
  bool found = false;
  const auto value = [](std::string_view token, std::string_view key) {
    return token.substr(0, key.size()) == key ? std::optional(token.substr(key.size()))
                                              : std::nullopt;
  };
  while (!record.empty()) {
    const std::size_t space = record.find(' ');
    const std::string_view token = record.substr(0, space);
    record.remove_prefix(space == std::string_view::npos ? record.size() : space + 1);
    if (token.empty()) continue;
    if (auto v = value(token, "NEURON_HW_ERR="); v && !found) {
      if (v->empty() || v->size() > kMaxFieldBytes) return std::nullopt;
      e.type = std::string(*v);
      e.count = KernelLogFieldOf(*v).member;
      found = true;
    } else if (auto id = value(token, "nd-id=")) {
      nd_id = SmallIndex(*id);
    } else if (auto d = value(token, "device=")) {
      device = SmallIndex(*d);
    } else if (auto a = value(token, "action=")) {
      e.action = std::string(a->substr(0, kMaxFieldBytes));
    } else if (!prefix) {
      prefix = DevicePrefix(token);
    }
  }
  if (!found) return std::nullopt;
  e.device = nd_id ? *nd_id : prefix ? *prefix : device ? *device : -1;
  return e;
}

KernelLog::KernelLog(KernelLogOptions options) : options_(std::move(options)) { Open(); }

KernelLog::~KernelLog() {
  if (fd_ >= 0) ::close(fd_);
}

void KernelLog::Open() {
  polls_since_open_ = 0;
  fd_ = ::open(options_.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    const int error = errno;
    unavailable_ = "cannot read " + options_.path + ": " + std::strerror(error);
    if (error == EPERM || error == EACCES) {
      unavailable_ += " (needs CAP_SYSLOG, and ProtectKernelLogs=no under systemd)";
    }
    return;
  }
  struct stat st {};
  regular_file_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  unavailable_.clear();
}

void KernelLog::Count(const KernelHwError& e) {
  if (e.device < 0 || e.device >= options_.max_devices) {
    ++unattributed_;
    return;
  }
  const auto index = static_cast<std::size_t>(e.device);
  if (counts_.size() <= index) counts_.resize(index + 1);
  ++(counts_[index].*e.count);
}

void KernelLog::Poll() {
  if (fd_ < 0) {
    if (++polls_since_open_ >= options_.reopen_every) Open();
    if (fd_ < 0) return;
  }
  std::string buffer(kRecordBytes, '\0');
  std::size_t records = 0;
  while (records < options_.max_records_per_poll) {
    const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      // EPIPE: the kernel overwrote records before they were read; the next read goes on from
      // the oldest one left.
      if (errno == EPIPE) continue;
      if (errno == EAGAIN) return;
      if (errno == EINVAL) {  // a record longer than the buffer: skipped
        ++unattributed_;
        continue;
      }
      unavailable_ = "reading " + options_.path + " failed: " + std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
    if (n == 0) return;  // the end of a regular file, for now
    const std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    if (!regular_file_) {  // one record per read
      ++records;
      if (auto e = ParseKernelLogRecord(chunk)) Count(*e);
      continue;
    }
    pending_.append(chunk);
    std::size_t start = 0;
    for (std::size_t end; (end = pending_.find('\n', start)) != std::string::npos;
         start = end + 1) {
      ++records;
      if (auto e = ParseKernelLogRecord(std::string_view(pending_).substr(start, end - start))) {
        Count(*e);
      }
    }
    pending_.erase(0, start);
    if (pending_.size() > kRecordBytes) {  // a line too long to be a record: dropped
      pending_.clear();
      ++unattributed_;
    }
  }
}

HardwareErrors KernelLog::Counts(int device) const {
  if (device < 0 || static_cast<std::size_t>(device) >= counts_.size()) return {};
  return counts_[static_cast<std::size_t>(device)];
}

void KernelLog::SetCounts(int device, HardwareErrors& errors) const {
  const HardwareErrors mine = Counts(device);
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    if (f.source == ErrorSource::kKernelLog) errors.*f.member = mine.*f.member;
  }
}

void KernelLog::Clear() { counts_.clear(); }

}  // namespace neuronmon::neurondev
