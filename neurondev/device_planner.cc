#include "neurondev/device_planner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "neurondev/device_files.h"
#include "neurondev/sysfs_attributes.h"

namespace neuronmon::neurondev {

// The subdirectories of a directory under a device's, sorted, at most `max` (the first `max` it
// lists); the directory stays open while its entries are planned.
class Subdirectories {
 public:
  Subdirectories() = default;
  Subdirectories(const DevicePlan& d, const std::string& relative, std::size_t max) {
    const int fd = OpenUnder(d, relative, kDirectoryFlags);
    if (fd < 0) {
      missing_ = errno == ENOENT;
      return;
    }
    dir_ = ::fdopendir(fd);
    if (dir_ == nullptr) {
      ::close(fd);
      return;
    }
    for (const dirent* entry; (entry = ::readdir(dir_)) != nullptr;) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      bool is_directory = entry->d_type == DT_DIR;
      if (entry->d_type == DT_LNK || entry->d_type == DT_UNKNOWN) {
        struct stat st {};
        is_directory = ::fstatat(fd, entry->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
      }
      if (!is_directory) continue;
      names.emplace_back(name);
      // Keep the first `max` by name rather than by the filesystem's order, within a bound.
      if (names.size() >= 4 * max) break;
    }
    std::sort(names.begin(), names.end());
    if (names.size() > max) names.resize(max);
  }
  // The directory does not exist (as opposed to existing empty, or not opening).
  bool missing() const { return missing_; }
  ~Subdirectories() {
    if (dir_ != nullptr) ::closedir(dir_);
  }
  Subdirectories(const Subdirectories&) = delete;
  Subdirectories& operator=(const Subdirectories&) = delete;

  int fd() const { return dir_ != nullptr ? ::dirfd(dir_) : -1; }

  std::vector<std::string> names;

 private:
  DIR* dir_ = nullptr;
  bool missing_ = false;
};

DevicePlan DevicePlanner::PlanDevice(const std::string& root, int index,
                                     const std::string& driver_version) {
  DevicePlan d;
  d.dir = IdentifyDeviceDir(root, index);
  UniqueFd fd(::open(d.dir.path.c_str(), kDirectoryFlags));
  struct stat st {};
  if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0) d.dir = Identity(std::move(d.dir.path), st);
  if (fd.get() >= 0) {
    d.nodes = NodeIndex::Build(fd.get(), driver_version,
                               {.max_entries_per_directory = limits_.max_entries_per_directory});
  }
  if (fd.get() >= 0 && kept_ < budget_) {
    d.dir_fd = std::move(fd);
    ++kept_;
  }
  fd.Reset();
  const auto at = [&](std::string_view canonical) {
    return d.nodes.Resolve(NodeScope::kDevice, canonical);
  };
  d.constants.index = index;
  ReadConstants(d);
  d.host_memory = PlanMemory(d, at("stats/memory_usage/host_mem"));
  d.hardware = {PlanPaced(d, at("stats/hardware/sram_ecc_uncorrected"), Pace::kErrors),
                PlanPaced(d, at("stats/hardware/mem_ecc_uncorrected"), Pace::kErrors),
                PlanPaced(d, at("stats/hardware/mem_ecc_repairable_uncorrected"), Pace::kErrors)};
  const std::string health = at("stats/hardware/health_status");
  d.has_health_status = DirectoryUnder(d, health, &d.health_error);
  if (d.has_health_status) d.health = PlanHealth(d, health);
  // The driver refreshes the power reading once a minute.
  d.power = PlanPaced(d, at("stats/power/utilization"), Pace::kRare);
  d.reset = PlanPaced(d, at("reset"), Pace::kErrors);
  for (std::uint32_t k : CoreIndices(d)) d.cores.push_back(PlanCore(d, k));
  d.missing = std::move(missing_);
  missing_.clear();
  return d;
}

std::vector<PlannedCounter> DevicePlanner::PlanHealth(const DevicePlan& d, const std::string& dir) {
  std::vector<PlannedCounter> out;
  const int fd = OpenUnder(d, dir, kDirectoryFlags);
  if (fd < 0) return out;
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    ::close(fd);
    return out;
  }
  std::vector<std::string> names;
  for (const dirent* e; (e = ::readdir(listing)) != nullptr;) {
    if (e->d_name[0] == '.') continue;
    if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
    names.emplace_back(e->d_name);
    if (names.size() >= limits_.max_entries_per_directory) break;
  }
  ::closedir(listing);
  std::sort(names.begin(), names.end());
  for (std::string& name : names) {
    PlannedFile file = PlanPaced(d, dir + "/" + name, Pace::kErrors);
    out.push_back({std::move(name), std::move(file)});
  }
  return out;
}

void DevicePlanner::Paced(PlannedFile& file, Pace pace) {
  file.pace = pace;
  file.phase = phase_++;
}

PlannedFile DevicePlanner::PlanPaced(const DevicePlan& d, std::string relative, Pace pace) {
  PlannedFile file = Plan(d, std::move(relative));
  Paced(file, pace);
  return file;
}

PlannedFile DevicePlanner::Plan(const DevicePlan& d, std::string relative) {
  return Plan(d, std::move(relative), Subdirectories(), 0);
}

PlannedFile DevicePlanner::Plan(const DevicePlan& d, std::string relative,
                                const Subdirectories& listing, std::size_t leaf) {
  PlannedFile file = ByPath(std::move(relative));
  if (kept_ >= budget_) return file;
  auto open = [&](int flags) {
    return listing.fd() >= 0 ? ::openat(listing.fd(), file.relative.c_str() + leaf, flags)
                             : OpenUnder(d, file.relative, flags);
  };
  // A kept file is re-read every second: spare the file system an access-time update per read
  // where the daemon may (it owns the file); elsewhere O_NOATIME is refused, once per plan.
  UniqueFd fd(open(noatime_ ? kFileFlags | O_NOATIME : kFileFlags));
  if (fd.get() < 0 && noatime_ && errno == EPERM) {
    noatime_ = false;
    fd = UniqueFd(open(kFileFlags));
  }
  if (fd.get() < 0) {
    if (errno == EMFILE || errno == ENFILE) budget_ = kept_;  // the process has no more
    return file;
  }
  // What is not a small regular file is read by path, to be refused as SysfsTree refuses it.
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uint64_t>(st.st_size) <= limits_.max_file_bytes) {
    file.fd = std::move(fd);
    ++kept_;
  }
  return file;
}

std::vector<PlannedCounter> DevicePlanner::PlanCounters(
    const DevicePlan& d, const std::string& dir, Pace pace,
    std::initializer_list<std::string_view> live) {
  std::vector<PlannedCounter> out;
  Subdirectories listing(d, dir, limits_.max_entries_per_directory);
  if (listing.missing()) missing_.push_back(dir);
  for (std::string& name : listing.names) {
    PlannedFile total = Plan(d, dir + "/" + name + "/total", listing, dir.size() + 1);
    if (std::find(live.begin(), live.end(), name) == live.end()) Paced(total, pace);
    out.push_back({std::move(name), std::move(total)});
  }
  return out;
}

std::vector<PlannedMemory> DevicePlanner::PlanMemory(const DevicePlan& d, const std::string& dir) {
  std::vector<PlannedMemory> out;
  Subdirectories listing(d, dir, limits_.max_entries_per_directory);
  if (listing.missing()) missing_.push_back(dir);
  for (std::string& name : listing.names) {
    PlannedFile total = Plan(d, dir + "/" + name + "/total", listing, dir.size() + 1);
    PlannedFile peak = Plan(d, dir + "/" + name + "/peak", listing, dir.size() + 1);
    // The usage moves with every allocation; the high-water mark, which is never below it
    // (ReadPlanned keeps it so), matters less.
    Paced(total, Pace::kSlow);
    Paced(peak, Pace::kRare);
    out.push_back({std::move(name), std::move(total), std::move(peak)});
  }
  return out;
}

std::vector<std::uint32_t> DevicePlanner::CoreIndices(const DevicePlan& d) {
  const std::size_t max = limits_.max_cores_per_device;
  std::vector<std::uint32_t> out;
  for (const std::string& name : Subdirectories(d, ".", max * 4 + 16).names) {
    if (const std::optional<std::uint32_t> k = CoreDirectoryNumber(name)) out.push_back(*k);
  }
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

PlannedCore DevicePlanner::PlanCore(const DevicePlan& d, std::uint32_t k) {
  const std::string dir = "neuron_core" + std::to_string(k) + "/";
  const auto at = [&](std::string_view canonical) {
    return dir + d.nodes.Resolve(NodeScope::kCore, canonical);
  };
  PlannedCore core;
  core.index = k;
  core.outcomes = PlanCounters(d, at("stats/status"), Pace::kSlow, {});
  // Busy time and FLOPs move every second; load, reset and inference counts rarely matter.
  core.other_info =
      PlanCounters(d, at("stats/other_info"), Pace::kRare, {"nc_time_in_use", "flop_count"});
  core.device_memory = PlanMemory(d, at("stats/memory_usage/device_mem"));
  core.pe_counters = Plan(d, at("stats/tensor_engine/pe_cntrs"));
  if (slow_pe_) Paced(core.pe_counters, Pace::kRare);
  return core;
}

void DevicePlanner::ReadConstants(DevicePlan& d) {
  DeviceReading& out = d.constants;
  const Refresh every_time;
  DeviceFiles files(limits_, every_time, d, buffer_, out);
  const auto at = [&](std::string_view canonical) {
    return d.nodes.Resolve(NodeScope::kDevice, canonical);
  };
  PlannedFile core_count = ByPath(at("core_count"));
  if (std::optional<std::uint64_t> cores = files.Counter(core_count)) {
    if (*cores == 0) {
      files.Error(files.Path(core_count) + ": 0 cores");
    } else if (*cores <= limits_.max_cores_per_device) {
      out.core_count = static_cast<std::uint32_t>(*cores);
    } else {
      files.Error(files.Path(core_count) + ": " + std::to_string(*cores) + " cores is more than " +
                  std::to_string(limits_.max_cores_per_device));
    }
  }
  PlannedFile connected_devices = ByPath(at("connected_devices"));
  if (std::optional<std::string_view> text = files.Text(connected_devices)) {
    Result<std::vector<int>> connected = ParseConnectedDevices(*text);
    if (connected.ok()) {
      out.connected_devices = std::move(*connected);
    } else {
      files.Error(files.Path(connected_devices) + ": " + connected.status().message());
    }
  }
  auto line = [&](const char* relative) -> std::optional<std::string> {
    PlannedFile file = ByPath(at(relative));
    std::optional<std::string_view> text = files.Text(file);
    if (!text) return std::nullopt;
    return std::string(TrimNewline(*text));
  };
  out.serial_number = line("info/serial_number");
  out.arch_type = line("info/architecture/arch_type");
  out.instance_type = line("info/architecture/instance_type");
  out.device_name = line("info/architecture/device_name");
}

}  // namespace neuronmon::neurondev
