#include "neurondev/kernel_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "proto/common/text.h"

namespace neuronmon::neurondev {
namespace {

// A /dev/kmsg record is at most 8 KiB (the kernel's CONSOLE_EXT_LOG_MAX); a longer dmesg line in a
// file is skipped.
constexpr std::size_t kRecordBytes = 16384;
constexpr std::string_view kHwErr = "NEURON_HW_ERR=";
constexpr std::size_t kMaxFieldBytes = 64;
constexpr std::size_t kMaxTokens = 32;

std::optional<int> SmallIndex(std::string_view digits) {
  int v = 0;
  // Digits only: from_chars would take "-4", and the fuzzer found that.
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != digits.npos) {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

template <typename Pred>
bool Each(std::string_view s, Pred ok) {
  for (const char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}

bool Upper(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
bool Lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }
bool Value(char c) { return c > ' ' && c < 0x7f && c != '='; }

// The keys the monitor reads, each with what it sets; every other well-formed key is ignored.
struct KeyRule {
  std::string_view key;
  void (*set)(KernelHwError&, std::string_view value);
};
constexpr KeyRule kKeys[] = {
    {"nd-id", [](KernelHwError& e, std::string_view v) { e.device = SmallIndex(v).value_or(-1); }},
    {"nc-id", [](KernelHwError& e, std::string_view v) { e.core = SmallIndex(v).value_or(-1); }},
    {"serial-num", [](KernelHwError& e, std::string_view v) { e.serial = std::string(v); }},
    {"action", [](KernelHwError& e, std::string_view v) { e.action = std::string(v); }},
};

// A serial number as a key: hexadecimal digits in lower case without leading zeros ("0" for
// zero), surrounding white space and an optional "0x" dropped; nothing when `serial` is empty or
// not hexadecimal.
std::optional<std::string> SerialKey(std::string_view serial) {
  serial = Trim(serial, " \t\r\n");
  if (serial.starts_with("0x") || serial.starts_with("0X")) serial.remove_prefix(2);
  if (serial.empty() || serial.size() > kMaxFieldBytes ||
      serial.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) {
    return std::nullopt;
  }
  return ToLowerAscii(serial.substr(std::min(serial.find_first_not_of('0'), serial.size() - 1)));
}

}  // namespace

std::optional<KernelHwError> ParseHwErrorMessage(std::string_view message) {
  while (!message.empty() && (message.back() == ' ' || message.back() == '\r')) {
    message.remove_suffix(1);
  }
  if (message.substr(0, kHwErr.size()) != kHwErr) return std::nullopt;
  message.remove_prefix(kHwErr.size());
  const std::size_t type_end = std::min(message.find(' '), message.size());
  const std::string_view type = message.substr(0, type_end);
  if (type.empty() || type.size() > kMaxFieldBytes || !Each(type, Upper)) return std::nullopt;
  message.remove_prefix(type_end);
  KernelHwError e;
  e.type = std::string(type);
  e.count = KernelLogFieldOf(type).member;
  std::string_view seen[kMaxTokens];
  std::size_t tokens = 0;
  while (!message.empty()) {
    if (message.front() == ' ') {
      message.remove_prefix(1);
      continue;
    }
    const std::size_t end = std::min(message.find(' '), message.size());
    const std::string_view token = message.substr(0, end);
    message.remove_prefix(end);
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos || tokens == kMaxTokens) return std::nullopt;
    const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
    if (key.empty() || key.size() > kMaxFieldBytes || key.front() < 'a' || key.front() > 'z' ||
        !Each(key, Lower) || value.size() > kMaxFieldBytes || !Each(value, Value)) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < tokens; ++i) {
      if (seen[i] == key) return std::nullopt;  // each key once
    }
    seen[tokens++] = key;
    for (const KeyRule& rule : kKeys) {
      if (rule.key == key) rule.set(e, value);
    }
  }
  return e;
}

std::optional<KernelLogRecord> SplitKernelLogRecord(std::string_view record) {
  std::string_view prefix;
  if (!record.empty() && record.front() == '<') {  // dmesg --raw
    const std::size_t close = record.find('>');
    if (close == std::string_view::npos) return std::nullopt;
    prefix = record.substr(1, close - 1);
    record.remove_prefix(close + 1);
    if (!record.empty() && record.front() == '[') {
      const std::size_t stamp = record.find(']');
      if (stamp == std::string_view::npos) return std::nullopt;
      record.remove_prefix(stamp + 1);
      if (!record.empty() && record.front() == ' ') record.remove_prefix(1);
    }
  } else {  // /dev/kmsg: "prefix,seq,us,flags[,...];message"
    const std::size_t semi = record.find(';');
    if (semi == std::string_view::npos) return std::nullopt;
    const std::string_view header = record.substr(0, semi);
    const std::size_t comma = header.find(',');
    if (comma == std::string_view::npos || header.find(',', comma + 1) == std::string_view::npos ||
        !Each(header, [](char c) { return Lower(c) || c == ',' || c == '+'; })) {
      return std::nullopt;
    }
    prefix = header.substr(0, comma);
    record.remove_prefix(semi + 1);
  }
  const std::optional<int> value = SmallIndex(prefix);
  if (!value) return std::nullopt;
  return KernelLogRecord{
      .facility = *value >> 3, .level = *value & 7, .message = record.substr(0, record.find('\n'))};
}

std::optional<KernelHwError> ParseKernelLogRecord(std::string_view record) {
  const std::optional<KernelLogRecord> r = SplitKernelLogRecord(record);
  if (!r || r->facility != kKernelFacility || r->level != kLevelErr) return std::nullopt;
  return ParseHwErrorMessage(r->message);
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

void KernelLog::Take(std::string_view record) {
  if (std::optional<KernelHwError> e = ParseKernelLogRecord(record)) {
    Count(*e);
  } else if (record.find(kHwErr.substr(0, kHwErr.size() - 1)) != std::string_view::npos) {
    ++refused_;
  }
}

void KernelLog::SetDevices(const std::map<int, std::string>& serials) {
  by_serial_.clear();
  indices_.emplace();
  std::set<std::string> shared;
  for (const auto& [index, serial] : serials) {
    indices_->insert(index);
    const std::optional<std::string> key = SerialKey(serial);
    if (!key) continue;
    if (!by_serial_.emplace(*key, index).second) shared.insert(*key);
  }
  for (const std::string& key : shared) by_serial_.erase(key);  // names no one device
}

int KernelLog::DeviceOf(const KernelHwError& e) const {
  if (const std::optional<std::string> key = SerialKey(e.serial)) {
    if (const auto it = by_serial_.find(*key); it != by_serial_.end()) return it->second;
  }
  // nd-id is the runtime's index among the devices it sees: inside a container given a subset of
  // them it names another device than the driver's neuron<N>. It is all there is when the line
  // has no serial (or the device's serial reads empty), and on a host without containers it is N.
  if (indices_ && !indices_->contains(e.device)) return -1;
  return e.device;
}

void KernelLog::Count(const KernelHwError& e) {
  const int device = DeviceOf(e);
  if (device < 0 || device >= options_.max_devices) {
    ++unattributed_;
    return;
  }
  const auto index = static_cast<std::size_t>(device);
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
      Take(chunk);
      continue;
    }
    pending_.append(chunk);
    std::size_t start = 0;
    for (std::size_t end; (end = pending_.find('\n', start)) != std::string::npos;
         start = end + 1) {
      ++records;
      Take(std::string_view(pending_).substr(start, end - start));
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
