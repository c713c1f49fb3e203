#include "neurondev/sysfs_attributes.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>

namespace neuronmon::neurondev {
namespace {

// Shows a file's contents in a message: short, and without control characters.
std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 32)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + (text.size() > 32 ? "...\"" : "\"");
}

}  // namespace

std::string_view TrimNewline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

Result<std::uint64_t> ParseCounter(std::string_view text) {
  const std::string_view digits = TrimNewline(text);
  if (digits.empty()) return Status::InvalidArgument("empty");
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range)
    return Status::OutOfRange(Quote(digits) + " is out of range");
  if (ec != std::errc() || end != digits.data() + digits.size())
    return Status::InvalidArgument(Quote(digits) + " is not a number");
  return value;
}

Result<std::vector<int>> ParseConnectedDevices(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("empty (the driver could not fit the list)");
  std::vector<int> out;
  std::string_view rest = TrimNewline(text);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    Result<std::uint64_t> n = ParseCounter(item);
    if (!n.ok() || *n > 4095)
      return Status::InvalidArgument(Quote(text) + " is not a list of device numbers");
    out.push_back(static_cast<int>(*n));
    if (out.size() > 4096) return Status::InvalidArgument("more than 4096 connected devices");
  }
  return out;
}

Result<PowerReading> ParsePower(std::string_view text) {
  std::vector<std::string_view> parts;
  std::string_view rest = TrimNewline(text);
  for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos && parts.size() < 5;) {
    parts.push_back(rest.substr(0, comma));
    rest.remove_prefix(comma + 1);
  }
  parts.push_back(rest);
  const auto bad = [&] {
    return Status::InvalidArgument(Quote(text) + " is not STATUS,EPOCH,MIN,MAX,AVG (percent)");
  };
  if (parts.size() != 5) return bad();
  PowerReading p;
  if (parts[0] == "POWER_STATUS_VALID") {
    p.status = PowerReading::Status::kValid;
  } else if (parts[0] == "POWER_STATUS_NO_DATA") {
    p.status = PowerReading::Status::kNoData;
  } else if (parts[0] == "POWER_STATUS_INVALID" || parts[0] == "POWER_STATUS_MAX") {
    p.status = PowerReading::Status::kInvalid;
  } else {
    return bad();
  }
  Result<std::uint64_t> epoch = ParseCounter(parts[1]);
  if (!epoch.ok()) return bad();
  p.epoch_seconds = *epoch;
  double* values[3] = {&p.min_percent, &p.max_percent, &p.avg_percent};
  for (int i = 0; i < 3; ++i) {
    const std::string_view v = parts[static_cast<std::size_t>(i) + 2];
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *values[i]);
    // NaN fails both comparisons: refused too.
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() ||
        !(*values[i] >= 0 && *values[i] <= 100)) {
      return bad();
    }
  }
  return p;
}

Result<std::vector<PeCounters>> ParsePeCounters(std::string_view text) {
  const auto bad = [&] {
    return Status::InvalidArgument(
        Quote(text) +
        " is not a header \"xrow_grp,mm_active,wl_active,idle\" and rows of counters");
  };
  std::string_view rest = text;
  auto line = [&] {
    const std::size_t nl = rest.find('\n');
    const std::string_view l = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    return l;
  };
  if (line() != "xrow_grp,mm_active,wl_active,idle") return bad();
  std::vector<PeCounters> out;
  while (!rest.empty()) {
    const std::string_view row = line();
    std::uint64_t v[4] = {};
    std::string_view fields = row;
    for (int i = 0; i < 4; ++i) {
      const std::size_t comma = fields.find(',');
      if ((comma == std::string_view::npos) != (i == 3)) return bad();
      Result<std::uint64_t> n = ParseCounter(fields.substr(0, comma));
      if (!n.ok()) return bad();
      v[i] = *n;
      fields = i == 3 ? std::string_view() : fields.substr(comma + 1);
    }
    if (v[0] > 255 || out.size() >= 64) return bad();
    out.push_back({static_cast<std::uint32_t>(v[0]), v[1], v[2], v[3]});
  }
  return out;
}

std::vector<std::string> ParseComponents(std::string_view text) {
  std::vector<std::string> out;
  std::string name;
  auto flush = [&] {
    if (!name.empty() && out.size() < 32) out.push_back(name.substr(0, 64));
    name.clear();
  };
  for (char c : text) {
    if (c == '\n' || c == ',' || c == ' ' || c == '\t') {
      flush();
      continue;
    }
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == '-';
    name += plain ? c : '?';
  }
  flush();
  return out;
}

std::string PeCountersTorn(const std::vector<PeCounters>& before,
                           const std::vector<PeCounters>& now) {
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (i > 0 && now[i].row_group <= now[i - 1].row_group) return "row groups out of order";
  }
  if (before.empty()) return "";
  if (before.size() != now.size()) {
    return std::to_string(now.size()) + " rows after " + std::to_string(before.size());
  }
  constexpr std::uint64_t kTear = std::uint64_t{1} << 31;
  std::uint64_t least = UINT64_MAX, most = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const PeCounters& a = before[i];
    const PeCounters& b = now[i];
    if (a.row_group != b.row_group) return "row group " + std::to_string(b.row_group) + " moved";
    if (b.mm_active < a.mm_active || b.wl_active < a.wl_active || b.idle < a.idle)
      return "row group " + std::to_string(b.row_group) + " went backwards";
    const std::uint64_t grown =
        (b.mm_active - a.mm_active) + (b.wl_active - a.wl_active) + (b.idle - a.idle);
    least = std::min(least, grown);
    most = std::max(most, grown);
  }
  if (most - least >= kTear) return "one row group's cycles grew 2^31 more than another's";
  return "";
}

}  // namespace neuronmon::neurondev
