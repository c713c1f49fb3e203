#include "neurondev/sysfs_tree.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "proto/common/file_reader.h"

namespace neuronmon::neurondev {
namespace {

namespace fs = std::filesystem;

std::string_view TrimNewline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

// Shows a file's contents in a message: short, and without control characters.
std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 32)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + (text.size() > 32 ? "...\"" : "\"");
}

// The names in `dir` that are directories (`directories`) or files, sorted, at most `max`.
std::vector<std::string> List(const std::string& dir, bool directories, std::size_t max) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) != directories) continue;
    names.push_back(it->path().filename().string());
    if (names.size() >= max) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Reads the files of one device, collecting what is absent and what is wrong.
class DeviceFiles {
 public:
  DeviceFiles(const TreeLimits& limits, DeviceReading& out) : limits_(limits), out_(out) {}

  std::optional<std::string> Text(const std::string& path) {
    Result<std::string> text = ReadRegularFile(path, limits_.max_file_bytes);
    if (!text.ok()) {
      if (text.status().code() == StatusCode::kNotFound) {
        out_.absent.push_back(path);
      } else {
        out_.errors.push_back(text.status().message());
      }
      return std::nullopt;
    }
    return std::move(*text);
  }

  void Error(std::string message) { out_.errors.push_back(std::move(message)); }

  std::optional<std::uint64_t> Counter(const std::string& path) {
    std::optional<std::string> text = Text(path);
    if (!text) return std::nullopt;
    Result<std::uint64_t> value = ParseCounter(*text);
    if (!value.ok()) {
      out_.errors.push_back(path + ": " + value.status().message());
      return std::nullopt;
    }
    return *value;
  }

  // `<dir>/<name>/total` for every subdirectory `name` of `dir`.
  std::vector<NamedCounter> Counters(const std::string& dir) {
    std::vector<NamedCounter> out;
    for (const std::string& name : List(dir, true, limits_.max_entries_per_directory)) {
      if (std::optional<std::uint64_t> v = Counter(dir + "/" + name + "/total"))
        out.push_back({name, *v});
    }
    return out;
  }

  // `<dir>/<category>/{total,peak}` for every subdirectory of `dir`.
  std::vector<MemoryCategory> Memory(const std::string& dir) {
    std::vector<MemoryCategory> out;
    for (const std::string& name : List(dir, true, limits_.max_entries_per_directory)) {
      const std::string path = dir + "/" + name + "/total";
      std::optional<std::uint64_t> total = Counter(path);
      if (!total) continue;
      if (*total > limits_.max_memory_bytes) {
        out_.errors.push_back(path + ": " + std::to_string(*total) +
                              " bytes is not a plausible usage (the counter wrapped)");
        continue;
      }
      out.push_back({name, *total, Counter(dir + "/" + name + "/peak")});
    }
    return out;
  }

 private:
  const TreeLimits& limits_;
  DeviceReading& out_;
};

void ReadArchitecture(const std::string& dir, DeviceFiles& files, DeviceReading& out) {
  auto line = [&](const std::string& path) -> std::optional<std::string> {
    std::optional<std::string> text = files.Text(path);
    if (!text) return std::nullopt;
    return std::string(TrimNewline(*text));
  };
  out.serial_number = line(dir + "/info/serial_number");
  out.arch_type = line(dir + "/info/architecture/arch_type");
  out.instance_type = line(dir + "/info/architecture/instance_type");
  out.device_name = line(dir + "/info/architecture/device_name");
}

void ReadHardware(const std::string& dir, DeviceFiles& files, DeviceReading& out) {
  const std::string hw = dir + "/stats/hardware/";
  out.sram_ecc_uncorrected = files.Counter(hw + "sram_ecc_uncorrected");
  out.mem_ecc_uncorrected = files.Counter(hw + "mem_ecc_uncorrected");
  out.mem_ecc_repairable_uncorrected = files.Counter(hw + "mem_ecc_repairable_uncorrected");
  std::error_code ec;
  if (!fs::exists(hw + "health_status", ec)) {
    out.absent.push_back(hw + "health_status");  // before driver 2.28
    return;
  }
  const std::string health = hw + "health_status/";
  out.hbm_ecc_err_count = files.Counter(health + "hbm_ecc_err_count");
  out.repairable_hbm_ecc_err_count = files.Counter(health + "repairable_hbm_ecc_err_count");
  out.sram_ecc_err_count = files.Counter(health + "sram_ecc_err_count");
  out.hw_error_event = files.Counter(health + "hw_error_event");
}

CoreReading ReadCore(const std::string& dir, std::uint32_t index, DeviceFiles& files) {
  CoreReading core;
  core.index = index;
  core.outcomes = files.Counters(dir + "/stats/status");
  core.other_info = files.Counters(dir + "/stats/other_info");
  core.device_memory = files.Memory(dir + "/stats/memory_usage/device_mem");
  if (std::optional<std::string> pe = files.Text(dir + "/stats/tensor_engine/pe_cntrs")) {
    Result<std::vector<PeCounters>> rows = ParsePeCounters(*pe);
    if (rows.ok()) {
      core.pe_counters = std::move(*rows);
    } else {
      files.Error(dir + "/stats/tensor_engine/pe_cntrs: " + rows.status().message());
    }
  }
  return core;
}

// The physical cores' directories, `neuron_core<K>`, ascending K.
std::vector<std::uint32_t> CoreIndices(const std::string& dir, std::size_t max) {
  std::vector<std::uint32_t> out;
  for (const std::string& name : List(dir, true, max * 4 + 16)) {
    constexpr std::string_view kPrefix = "neuron_core";
    if (name.rfind(kPrefix, 0) != 0) continue;
    Result<std::uint64_t> k = ParseCounter(std::string_view(name).substr(kPrefix.size()));
    if (k.ok() && *k < 4096) out.push_back(static_cast<std::uint32_t>(*k));
  }
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace

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
  const Status bad =
      Status::InvalidArgument(Quote(text) + " is not STATUS,EPOCH,MIN,MAX,AVG (percent)");
  if (parts.size() != 5) return bad;
  PowerReading p;
  if (parts[0] == "POWER_STATUS_VALID") {
    p.status = PowerReading::Status::kValid;
  } else if (parts[0] == "POWER_STATUS_NO_DATA") {
    p.status = PowerReading::Status::kNoData;
  } else if (parts[0] == "POWER_STATUS_INVALID" || parts[0] == "POWER_STATUS_MAX") {
    p.status = PowerReading::Status::kInvalid;
  } else {
    return bad;
  }
  Result<std::uint64_t> epoch = ParseCounter(parts[1]);
  if (!epoch.ok()) return bad;
  p.epoch_seconds = *epoch;
  double* values[3] = {&p.min_percent, &p.max_percent, &p.avg_percent};
  for (int i = 0; i < 3; ++i) {
    const std::string_view v = parts[static_cast<std::size_t>(i) + 2];
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *values[i]);
    // NaN fails both comparisons: refused too.
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() ||
        !(*values[i] >= 0 && *values[i] <= 100)) {
      return bad;
    }
  }
  return p;
}

Result<std::vector<PeCounters>> ParsePeCounters(std::string_view text) {
  const Status bad = Status::InvalidArgument(
      Quote(text) + " is not a header \"xrow_grp,mm_active,wl_active,idle\" and rows of counters");
  std::string_view rest = text;
  auto line = [&] {
    const std::size_t nl = rest.find('\n');
    const std::string_view l = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    return l;
  };
  if (line() != "xrow_grp,mm_active,wl_active,idle") return bad;
  std::vector<PeCounters> out;
  while (!rest.empty()) {
    const std::string_view row = line();
    std::uint64_t v[4] = {};
    std::string_view fields = row;
    for (int i = 0; i < 4; ++i) {
      const std::size_t comma = fields.find(',');
      if ((comma == std::string_view::npos) != (i == 3)) return bad;
      Result<std::uint64_t> n = ParseCounter(fields.substr(0, comma));
      if (!n.ok()) return bad;
      v[i] = *n;
      fields = i == 3 ? std::string_view() : fields.substr(comma + 1);
    }
    if (v[0] > 255 || out.size() >= 64) return bad;
    out.push_back({static_cast<std::uint32_t>(v[0]), v[1], v[2], v[3]});
  }
  return out;
}

SysfsTree::SysfsTree(std::string root, TreeLimits limits)
    : root_(std::move(root)), limits_(limits) {}

Result<std::vector<int>> SysfsTree::ListDevices() const {
  for (const char* dir : {"/devices/virtual/neuron_device", "/class/neuron_device"}) {
    const std::string path = root_ + dir;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) continue;
    std::vector<int> out;
    fs::directory_iterator it(path, ec);
    if (ec) return Status::IoError(path + ": cannot list: " + ec.message());
    for (fs::directory_iterator end; it != end; it.increment(ec)) {
      if (ec) return Status::IoError(path + ": cannot list: " + ec.message());
      const std::string name = it->path().filename().string();
      if (name.rfind("neuron", 0) != 0) continue;
      Result<std::uint64_t> n = ParseCounter(std::string_view(name).substr(6));
      if (n.ok() && *n < 4096) out.push_back(static_cast<int>(*n));
    }
    std::sort(out.begin(), out.end());
    if (out.size() > limits_.max_devices) out.resize(limits_.max_devices);
    return out;
  }
  return std::vector<int>{};
}

std::string SysfsTree::DeviceDir(int index) const {
  const std::string name = "/neuron" + std::to_string(index);
  const std::string virtual_dir = root_ + "/devices/virtual/neuron_device" + name;
  std::error_code ec;
  if (fs::is_directory(virtual_dir, ec)) return virtual_dir;
  return root_ + "/class/neuron_device" + name;
}

DeviceReading SysfsTree::ReadDevice(int index) const {
  DeviceReading out;
  out.index = index;
  const std::string dir = DeviceDir(index);
  DeviceFiles files(limits_, out);
  if (std::optional<std::uint64_t> cores = files.Counter(dir + "/core_count")) {
    if (*cores <= limits_.max_cores_per_device) {
      out.core_count = static_cast<std::uint32_t>(*cores);
    } else {
      out.errors.push_back(dir + "/core_count: " + std::to_string(*cores) + " cores is more than " +
                           std::to_string(limits_.max_cores_per_device));
    }
  }
  if (std::optional<std::string> text = files.Text(dir + "/connected_devices")) {
    Result<std::vector<int>> connected = ParseConnectedDevices(*text);
    if (connected.ok()) {
      out.connected_devices = std::move(*connected);
    } else {
      out.errors.push_back(dir + "/connected_devices: " + connected.status().message());
    }
  }
  ReadArchitecture(dir, files, out);
  out.host_memory = files.Memory(dir + "/stats/memory_usage/host_mem");
  ReadHardware(dir, files, out);
  if (std::optional<std::string> text = files.Text(dir + "/stats/power/utilization")) {
    Result<PowerReading> power = ParsePower(*text);
    if (power.ok()) {
      out.power = *power;
    } else {
      out.errors.push_back(dir + "/stats/power/utilization: " + power.status().message());
    }
  }
  for (std::uint32_t k : CoreIndices(dir, limits_.max_cores_per_device)) {
    out.cores.push_back(ReadCore(dir + "/neuron_core" + std::to_string(k), k, files));
  }
  // core_count is readable by root only; the driver makes one directory per core.
  if (!out.core_count && !out.cores.empty() && out.cores.size() < limits_.max_cores_per_device)
    out.core_count = static_cast<std::uint32_t>(out.cores.size());
  return out;
}

TreeReading SysfsTree::Read() const {
  TreeReading out;
  const std::string version_path = root_ + "/module/neuron/version";
  std::error_code ec;
  if (fs::exists(version_path, ec)) {
    Result<std::string> version = ReadRegularFile(version_path, limits_.max_file_bytes);
    if (version.ok()) {
      out.driver_version = std::string(TrimNewline(*version));
    } else {
      out.errors.push_back(version.status().message());
    }
  }
  Result<std::vector<int>> devices = ListDevices();
  if (!devices.ok()) {
    out.errors.push_back(devices.status().message());
    return out;
  }
  for (int n : *devices) out.devices.push_back(ReadDevice(n));
  return out;
}

}  // namespace neuronmon::neurondev
