#include "neurondev/sysfs_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "proto/common/file_reader.h"
#include "proto/common/unique_fd.h"

namespace neuronmon::neurondev {
namespace {

namespace fs = std::filesystem;

// As ReadRegularFile opens: O_NONBLOCK so that a FIFO cannot block the read; its type is refused.
constexpr int kFileFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
constexpr int kDirectoryFlags = O_RDONLY | O_CLOEXEC | O_DIRECTORY;

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

// Which directory holds a device's files. A device whose directory was replaced (removed and
// added again, as a driver reload does) is a new device to the sampler: while the sampler keeps
// the old directory open, the new one cannot have its inode number.
struct DirIdentity {
  std::string path;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const DirIdentity&) const = default;
};

DirIdentity Identity(std::string path, const struct stat& st) {
  return {std::move(path), true, st.st_dev, st.st_ino};
}

// `devices/virtual/neuron_device/neuron<N>` when that is a directory, else the class link.
DirIdentity IdentifyDeviceDir(const std::string& root, int index) {
  const std::string name = "/neuron" + std::to_string(index);
  DirIdentity id;
  struct stat st {};
  id.path = root + "/devices/virtual/neuron_device" + name;
  if (::stat(id.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    id.path = root + "/class/neuron_device" + name;
    if (::stat(id.path.c_str(), &st) != 0) return id;
  }
  return Identity(std::move(id.path), st);
}

// How often a file is re-read (SamplerOptions): at every sample, or at one sample in
// errors_every, slow_every or rare_every.
enum class Pace : std::uint8_t { kLive, kErrors, kSlow, kRare };

// A file a plan reads: where it is under its device's directory, and the descriptor kept open
// for it (none: it is opened, read and closed at every read). A file of a pace other than kLive
// may be re-read only at some samples: `last` is what it said then.
struct PlannedFile {
  std::string relative;
  UniqueFd fd;
  Pace pace = Pace::kLive;
  std::uint32_t phase = 0;  // re-read at samples s with (s + phase) % every == 0
  std::optional<Result<std::string>> last;
};

PlannedFile ByPath(std::string relative) {
  PlannedFile file;
  file.relative = std::move(relative);
  return file;
}

// Which sample a reading is, and how often the files of each pace are re-read (all 1: every
// file at every read).
struct Refresh {
  std::uint64_t sample = 0;
  std::array<std::uint32_t, 4> every{1, 1, 1, 1};  // by Pace
};

struct PlannedCounter {
  std::string name;
  PlannedFile total;
};

struct PlannedMemory {
  std::string name;
  PlannedFile total;
  PlannedFile peak;
};

struct PlannedCore {
  std::uint32_t index = 0;
  std::vector<PlannedCounter> outcomes;
  std::vector<PlannedCounter> other_info;
  std::vector<PlannedMemory> device_memory;
  PlannedFile pe_counters;
};

// One device's layout as discovered, and what its constant files said then.
struct DevicePlan {
  DirIdentity dir;
  UniqueFd dir_fd;
  DeviceReading constants;  // index, the constant files, their errors and absences
  std::vector<PlannedMemory> host_memory;
  // Directories of counters or categories this device's tree lacks (relative paths): absent, as
  // a missing file is, rather than an empty list that looks like a driver without such counters.
  std::vector<std::string> missing;
  std::array<PlannedFile, 3> hardware;
  bool has_health_status = false;
  std::string health_error;  // health_status exists but is not a readable directory
  std::array<PlannedFile, 4> health;
  PlannedFile power;
  std::vector<PlannedCore> cores;
};

int OpenUnder(const DevicePlan& device, const std::string& relative, int flags) {
  if (device.dir_fd.get() >= 0) return ::openat(device.dir_fd.get(), relative.c_str(), flags);
  return ::open((device.dir.path + "/" + relative).c_str(), flags);
}

// Whether `relative` is a directory (symlinks followed); false with `*error` empty when it does
// not exist, false with `*error` saying why when it exists but is not one or cannot be checked.
bool DirectoryUnder(const DevicePlan& device, const std::string& relative, std::string* error) {
  struct stat st {};
  const std::string path = device.dir.path + "/" + relative;
  const int rc = device.dir_fd.get() >= 0 ? ::fstatat(device.dir_fd.get(), relative.c_str(), &st, 0)
                                          : ::stat(path.c_str(), &st);
  if (rc == 0 && S_ISDIR(st.st_mode)) return true;
  if (rc != 0 && errno == ENOENT) return false;
  *error = path + ": " + (rc == 0 ? std::string("not a directory") : std::strerror(errno));
  return false;
}

// Reads `fd` from its start with one call: sysfs serves an attribute whole, and a regular file's
// short read is its end.
ssize_t ReadFromStart(int fd, std::string& buffer) {
  ssize_t n;
  do {
    n = ::pread(fd, buffer.data(), buffer.size(), 0);
  } while (n < 0 && errno == EINTR);
  return n;
}

// ReadRegularFile's checks and messages, for a file opened relative to its device's directory,
// into `buffer` (max_bytes + 1 long).
Result<std::string_view> ReadByPath(const DevicePlan& device, const std::string& relative,
                                    const std::string& path, std::string& buffer) {
  const std::size_t max_bytes = buffer.size() - 1;
  const UniqueFd fd(OpenUnder(device, relative, kFileFlags));
  if (fd.get() < 0) {
    const int error = errno;
    std::string message = path + ": cannot open: " + std::strerror(error);
    if (error == ENOENT) return Status::NotFound(std::move(message));
    return Status::IoError(std::move(message));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int error = errno;
    return Status::IoError(path + ": cannot stat: " + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": not a regular file");
  const Status too_large =
      Status::InvalidArgument(path + ": file larger than " + FormatBytes(max_bytes));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large;
  const ssize_t n = ReadFromStart(fd.get(), buffer);
  if (n < 0) {
    const int error = errno;
    return Status::IoError(path + ": cannot read: " + std::strerror(error));
  }
  if (static_cast<std::size_t>(n) > max_bytes) return too_large;
  return std::string_view(buffer.data(), static_cast<std::size_t>(n));
}

// Reads the files of one device plan, collecting what is absent and what is wrong into `out`.
class DeviceFiles {
 public:
  DeviceFiles(const TreeLimits& limits, const Refresh& refresh, const DevicePlan& device,
              std::string& buffer, DeviceReading& out)
      : limits_(limits), refresh_(refresh), device_(device), buffer_(buffer), out_(out) {}

  std::string Path(const PlannedFile& file) const { return device_.dir.path + "/" + file.relative; }

  // The file's contents, valid until the next read; nullopt when absent or unreadable.
  std::optional<std::string_view> Text(PlannedFile& file) {
    const std::uint32_t every = refresh_.every[static_cast<std::size_t>(file.pace)];
    const bool rotating = every > 1;
    if (rotating && file.last && (refresh_.sample + file.phase) % every != 0) {
      const Result<std::string>& last = *file.last;
      return Deliver(file, last.ok() ? Result<std::string_view>(*last) : last.status());
    }
    Result<std::string_view> text = ReadNow(file);
    if (rotating) file.last = text.ok() ? Result<std::string>(std::string(*text)) : text.status();
    return Deliver(file, text);
  }

  void Error(std::string message) { out_.errors.push_back(std::move(message)); }

  std::optional<std::uint64_t> Counter(PlannedFile& file) {
    std::optional<std::string_view> text = Text(file);
    if (!text) return std::nullopt;
    Result<std::uint64_t> value = ParseCounter(*text);
    if (!value.ok()) {
      out_.errors.push_back(Path(file) + ": " + value.status().message());
      return std::nullopt;
    }
    return *value;
  }

  std::vector<NamedCounter> Counters(std::vector<PlannedCounter>& planned) {
    std::vector<NamedCounter> out;
    out.reserve(planned.size());
    for (PlannedCounter& c : planned) {
      if (std::optional<std::uint64_t> v = Counter(c.total)) out.push_back({c.name, *v});
    }
    return out;
  }

  std::vector<MemoryCategory> Memory(std::vector<PlannedMemory>& planned) {
    std::vector<MemoryCategory> out;
    out.reserve(planned.size());
    for (PlannedMemory& m : planned) {
      std::optional<std::uint64_t> total = Counter(m.total);
      if (!total) continue;
      if (*total > limits_.max_memory_bytes) {
        out_.errors.push_back(Path(m.total) + ": " + std::to_string(*total) +
                              " bytes is not a plausible usage (the counter wrapped)");
        continue;
      }
      std::optional<std::uint64_t> peak = Counter(m.peak);
      if (peak && *peak > limits_.max_memory_bytes) {
        // The high-water mark of a counter that once wrapped stays wrapped: unknown, not huge.
        out_.errors.push_back(Path(m.peak) + ": " + std::to_string(*peak) +
                              " bytes is not a plausible high-water mark (the counter wrapped)");
        peak.reset();
      }
      // A high-water mark re-read less often than its usage may predate it: never below it.
      if (peak && *peak < *total) peak = *total;
      out.push_back({m.name, *total, peak});
    }
    return out;
  }

 private:
  Result<std::string_view> ReadNow(PlannedFile& file) {
    if (file.fd.get() >= 0) {
      const ssize_t n = ReadFromStart(file.fd.get(), buffer_);
      if (n >= 0 && static_cast<std::size_t>(n) < buffer_.size()) {
        return std::string_view(buffer_.data(), static_cast<std::size_t>(n));
      }
      if (n >= 0) {
        return Status::InvalidArgument(Path(file) + ": file larger than " +
                                       FormatBytes(limits_.max_file_bytes));
      }
      // Gone or failing (ENODEV once sysfs removed it): what a read by path says now.
      file.fd.Reset();
    }
    return ReadByPath(device_, file.relative, Path(file), buffer_);
  }

  std::optional<std::string_view> Deliver(const PlannedFile& file,
                                          const Result<std::string_view>& text) {
    if (text.ok()) return *text;
    if (text.status().code() == StatusCode::kNotFound) {
      out_.absent.push_back(Path(file));
    } else {
      out_.errors.push_back(text.status().message());
    }
    return std::nullopt;
  }

  const TreeLimits& limits_;
  const Refresh& refresh_;
  const DevicePlan& device_;
  std::string& buffer_;
  DeviceReading& out_;
};

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

// Discovers devices' layouts as SysfsTree reads them and opens their files, keeping at most
// `budget` descriptors (device directories first); the rest are opened at every read. Reads the
// constant files on the way.
class Planner {
 public:
  // `slow_pe`: pe_cntrs is read as a slow-moving file (busy time comes from nc_time_in_use).
  Planner(const TreeLimits& limits, std::string& buffer, std::size_t budget, bool slow_pe = false)
      : limits_(limits), buffer_(buffer), budget_(budget), slow_pe_(slow_pe) {}

  DevicePlan PlanDevice(const std::string& root, int index) {
    DevicePlan d;
    d.dir = IdentifyDeviceDir(root, index);
    if (kept_ < budget_) {
      UniqueFd fd(::open(d.dir.path.c_str(), kDirectoryFlags));
      struct stat st {};
      if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0) {
        d.dir = Identity(std::move(d.dir.path), st);
        d.dir_fd = std::move(fd);
        ++kept_;
      }
    }
    d.constants.index = index;
    ReadConstants(d);
    d.host_memory = PlanMemory(d, "stats/memory_usage/host_mem");
    d.hardware = {PlanPaced(d, "stats/hardware/sram_ecc_uncorrected", Pace::kErrors),
                  PlanPaced(d, "stats/hardware/mem_ecc_uncorrected", Pace::kErrors),
                  PlanPaced(d, "stats/hardware/mem_ecc_repairable_uncorrected", Pace::kErrors)};
    d.has_health_status = DirectoryUnder(d, "stats/hardware/health_status", &d.health_error);
    if (d.has_health_status) {
      const std::string h = "stats/hardware/health_status/";
      d.health = {PlanPaced(d, h + "hbm_ecc_err_count", Pace::kErrors),
                  PlanPaced(d, h + "repairable_hbm_ecc_err_count", Pace::kErrors),
                  PlanPaced(d, h + "sram_ecc_err_count", Pace::kErrors),
                  PlanPaced(d, h + "hw_error_event", Pace::kErrors)};
    }
    // The driver refreshes the power reading once a minute.
    d.power = PlanPaced(d, "stats/power/utilization", Pace::kRare);
    for (std::uint32_t k : CoreIndices(d)) d.cores.push_back(PlanCore(d, k));
    d.missing = std::move(missing_);
    missing_.clear();
    return d;
  }

 private:
  // Re-reads `file` at `pace`, at the samples of the next phase: consecutive files of a pace
  // are spread over its samples.
  void Paced(PlannedFile& file, Pace pace) {
    file.pace = pace;
    file.phase = phase_++;
  }

  PlannedFile PlanPaced(const DevicePlan& d, std::string relative, Pace pace) {
    PlannedFile file = Plan(d, std::move(relative));
    Paced(file, pace);
    return file;
  }

  PlannedFile Plan(const DevicePlan& d, std::string relative) {
    return Plan(d, std::move(relative), Subdirectories(), 0);
  }

  // Opens `relative` from `listing`, the directory it is in from `leaf` on, when that is open:
  // fewer names to look up than from the device's directory.
  PlannedFile Plan(const DevicePlan& d, std::string relative, const Subdirectories& listing,
                   std::size_t leaf) {
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

  // `<dir>/<name>/total` for every subdirectory `name` of `dir`, at `pace` unless `name` is one
  // of `live`.
  std::vector<PlannedCounter> PlanCounters(const DevicePlan& d, const std::string& dir, Pace pace,
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

  // `<dir>/<category>/{total,peak}` for every subdirectory of `dir`.
  std::vector<PlannedMemory> PlanMemory(const DevicePlan& d, const std::string& dir) {
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

  // The physical cores' directories, `neuron_core<K>`, ascending K.
  std::vector<std::uint32_t> CoreIndices(const DevicePlan& d) {
    const std::size_t max = limits_.max_cores_per_device;
    std::vector<std::uint32_t> out;
    for (const std::string& name : Subdirectories(d, ".", max * 4 + 16).names) {
      constexpr std::string_view kPrefix = "neuron_core";
      if (name.rfind(kPrefix, 0) != 0) continue;
      Result<std::uint64_t> k = ParseCounter(std::string_view(name).substr(kPrefix.size()));
      if (k.ok() && *k < 4096) out.push_back(static_cast<std::uint32_t>(*k));
    }
    std::sort(out.begin(), out.end());
    if (out.size() > max) out.resize(max);
    return out;
  }

  PlannedCore PlanCore(const DevicePlan& d, std::uint32_t k) {
    const std::string dir = "neuron_core" + std::to_string(k) + "/stats/";
    PlannedCore core;
    core.index = k;
    core.outcomes = PlanCounters(d, dir + "status", Pace::kSlow, {});
    // Busy time and FLOPs move every second; load, reset and inference counts rarely matter.
    core.other_info =
        PlanCounters(d, dir + "other_info", Pace::kRare, {"nc_time_in_use", "flop_count"});
    core.device_memory = PlanMemory(d, dir + "memory_usage/device_mem");
    core.pe_counters = Plan(d, dir + "tensor_engine/pe_cntrs");
    if (slow_pe_) Paced(core.pe_counters, Pace::kRare);
    return core;
  }

  // core_count, connected_devices, serial_number and architecture/*, read by path.
  void ReadConstants(DevicePlan& d) {
    DeviceReading& out = d.constants;
    const Refresh every_time;
    DeviceFiles files(limits_, every_time, d, buffer_, out);
    PlannedFile core_count = ByPath("core_count");
    if (std::optional<std::uint64_t> cores = files.Counter(core_count)) {
      if (*cores == 0) {
        files.Error(files.Path(core_count) + ": 0 cores");
      } else if (*cores <= limits_.max_cores_per_device) {
        out.core_count = static_cast<std::uint32_t>(*cores);
      } else {
        files.Error(files.Path(core_count) + ": " + std::to_string(*cores) +
                    " cores is more than " + std::to_string(limits_.max_cores_per_device));
      }
    }
    PlannedFile connected_devices = ByPath("connected_devices");
    if (std::optional<std::string_view> text = files.Text(connected_devices)) {
      Result<std::vector<int>> connected = ParseConnectedDevices(*text);
      if (connected.ok()) {
        out.connected_devices = std::move(*connected);
      } else {
        files.Error(files.Path(connected_devices) + ": " + connected.status().message());
      }
    }
    auto line = [&](const char* relative) -> std::optional<std::string> {
      PlannedFile file = ByPath(relative);
      std::optional<std::string_view> text = files.Text(file);
      if (!text) return std::nullopt;
      return std::string(TrimNewline(*text));
    };
    out.serial_number = line("info/serial_number");
    out.arch_type = line("info/architecture/arch_type");
    out.instance_type = line("info/architecture/instance_type");
    out.device_name = line("info/architecture/device_name");
  }

  const TreeLimits& limits_;
  std::string& buffer_;
  std::size_t budget_;
  bool slow_pe_;
  bool noatime_ = true;
  std::vector<std::string> missing_;  // directories found missing, for the device being planned
  std::size_t kept_ = 0;
  std::uint32_t phase_ = 0;
};

// One reading of a planned device: its constants as discovered, every other file read now.
DeviceReading ReadPlanned(DevicePlan& d, const TreeLimits& limits, const Refresh& refresh,
                          std::string& buffer) {
  DeviceReading out = d.constants;
  DeviceFiles files(limits, refresh, d, buffer, out);
  out.host_memory = files.Memory(d.host_memory);
  out.sram_ecc_uncorrected = files.Counter(d.hardware[0]);
  out.mem_ecc_uncorrected = files.Counter(d.hardware[1]);
  out.mem_ecc_repairable_uncorrected = files.Counter(d.hardware[2]);
  if (d.has_health_status) {
    out.hbm_ecc_err_count = files.Counter(d.health[0]);
    out.repairable_hbm_ecc_err_count = files.Counter(d.health[1]);
    out.sram_ecc_err_count = files.Counter(d.health[2]);
    out.hw_error_event = files.Counter(d.health[3]);
  } else if (d.health_error.empty()) {
    out.absent.push_back(d.dir.path + "/stats/hardware/health_status");  // before driver 2.28
  } else {
    files.Error(d.health_error);
  }
  for (const std::string& dir : d.missing) out.absent.push_back(d.dir.path + "/" + dir);
  if (std::optional<std::string_view> text = files.Text(d.power)) {
    Result<PowerReading> power = ParsePower(*text);
    if (power.ok()) {
      out.power = *power;
    } else {
      files.Error(files.Path(d.power) + ": " + power.status().message());
    }
  }
  out.cores.reserve(d.cores.size());
  for (PlannedCore& c : d.cores) {
    CoreReading& core = out.cores.emplace_back();
    core.index = c.index;
    core.outcomes = files.Counters(c.outcomes);
    core.other_info = files.Counters(c.other_info);
    core.device_memory = files.Memory(c.device_memory);
    if (std::optional<std::string_view> pe = files.Text(c.pe_counters)) {
      Result<std::vector<PeCounters>> rows = ParsePeCounters(*pe);
      if (rows.ok()) {
        core.pe_counters = std::move(*rows);
      } else {
        files.Error(files.Path(c.pe_counters) + ": " + rows.status().message());
      }
    }
  }
  // core_count is readable by root only; the driver makes one directory per core.
  if (!out.core_count && !out.cores.empty() && out.cores.size() < limits.max_cores_per_device)
    out.core_count = static_cast<std::uint32_t>(out.cores.size());
  return out;
}

std::size_t OpenIn(const PlannedFile& file) { return file.fd.get() >= 0 ? 1 : 0; }

std::size_t OpenIn(const DevicePlan& d) {
  std::size_t n = OpenIn(d.power) + (d.dir_fd.get() >= 0 ? 1 : 0);
  for (const PlannedMemory& m : d.host_memory) n += OpenIn(m.total) + OpenIn(m.peak);
  for (const PlannedFile& f : d.hardware) n += OpenIn(f);
  for (const PlannedFile& f : d.health) n += OpenIn(f);
  for (const PlannedCore& c : d.cores) {
    n += OpenIn(c.pe_counters);
    for (const PlannedCounter& o : c.outcomes) n += OpenIn(o.total);
    for (const PlannedCounter& o : c.other_info) n += OpenIn(o.total);
    for (const PlannedMemory& m : c.device_memory) n += OpenIn(m.total) + OpenIn(m.peak);
  }
  return n;
}

// /module/neuron/version: nothing when it does not exist, an error when it cannot be read.
void ReadVersion(const std::string& root, const TreeLimits& limits, TreeReading& out) {
  const std::string version_path = root + "/module/neuron/version";
  std::error_code ec;
  if (!fs::exists(version_path, ec)) return;
  Result<std::string> version = ReadRegularFile(version_path, limits.max_file_bytes);
  if (version.ok()) {
    out.driver_version = std::string(TrimNewline(*version));
  } else {
    out.errors.push_back(version.status().message());
  }
}

// Reads a device by path, keeping nothing but its directory open while it reads.
DeviceReading ReadOnce(const std::string& root, const TreeLimits& limits, int index,
                       std::string& buffer) {
  DevicePlan plan = Planner(limits, buffer, 1).PlanDevice(root, index);
  return ReadPlanned(plan, limits, Refresh(), buffer);
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

DeviceReading SysfsTree::ReadDevice(int index) const {
  std::string buffer(limits_.max_file_bytes + 1, '\0');
  return ReadOnce(root_, limits_, index, buffer);
}

TreeReading SysfsTree::Read() const {
  TreeReading out;
  ReadVersion(root_, limits_, out);
  Result<std::vector<int>> devices = ListDevices();
  if (!devices.ok()) {
    out.errors.push_back(devices.status().message());
    return out;
  }
  std::string buffer(limits_.max_file_bytes + 1, '\0');
  for (int n : *devices) out.devices.push_back(ReadOnce(root_, limits_, n, buffer));
  return out;
}

class TreePlan {
 public:
  PlannedFile version;  // relative to the root
  std::vector<DevicePlan> devices;
};

SysfsSampler::SysfsSampler(std::string root, TreeLimits limits, SamplerOptions options)
    : root_(std::move(root)),
      limits_(limits),
      options_(options),
      plan_(std::make_unique<TreePlan>()),
      buffer_(limits_.max_file_bytes + 1, '\0') {}

SysfsSampler::~SysfsSampler() = default;
SysfsSampler::SysfsSampler(SysfsSampler&&) noexcept = default;
SysfsSampler& SysfsSampler::operator=(SysfsSampler&&) noexcept = default;

std::size_t SysfsSampler::open_files() const {
  std::size_t n = OpenIn(plan_->version);
  for (const DevicePlan& d : plan_->devices) n += OpenIn(d);
  return n;
}

void SysfsSampler::Discover() {
  plan_ = std::make_unique<TreePlan>();  // closes every descriptor first
  fd_budget_ = limits_.max_open_files;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    fd_budget_ = std::min<std::size_t>(fd_budget_, limit.rlim_cur / 2);
  plan_->version.relative = root_ + "/module/neuron/version";
  if (fd_budget_ > 0) {
    UniqueFd fd(::open(plan_->version.relative.c_str(), kFileFlags));
    struct stat st {};
    if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) <= limits_.max_file_bytes) {
      plan_->version.fd = std::move(fd);
    }
  }
  discover_ = false;
  samples_since_discovery_ = 0;
}

// Keeps the plans of devices still listed in the same directory; plans the others.
void SysfsSampler::FollowDeviceList(const std::vector<int>& devices) {
  std::vector<DevicePlan> old = std::move(plan_->devices);
  std::vector<DevicePlan> next(devices.size());
  std::vector<bool> kept(devices.size(), false);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DirIdentity id = IdentifyDeviceDir(root_, devices[i]);
    for (DevicePlan& d : old) {
      if (d.constants.index == devices[i] && d.dir == id) {
        next[i] = std::move(d);
        d.constants.index = -1;  // taken
        kept[i] = true;
        break;
      }
    }
  }
  old.clear();  // the descriptors of devices gone or replaced, before opening new ones
  plan_->devices = std::move(next);
  if (std::all_of(kept.begin(), kept.end(), [](bool k) { return k; })) return;
  const std::size_t in_use = open_files();
  Planner planner(limits_, buffer_, fd_budget_ > in_use ? fd_budget_ - in_use : 0,
                  options_.slow_pe_counters);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (!kept[i]) plan_->devices[i] = planner.PlanDevice(root_, devices[i]);
  }
}

TreeReading SysfsSampler::Sample() {
  if (discover_ || samples_since_discovery_ >= options_.rediscover_every) Discover();
  ++samples_since_discovery_;
  ++samples_;
  TreeReading out;
  PlannedFile& version = plan_->version;
  if (version.fd.get() >= 0) {
    const ssize_t n = ReadFromStart(version.fd.get(), buffer_);
    if (n >= 0 && static_cast<std::size_t>(n) < buffer_.size()) {
      out.driver_version =
          std::string(TrimNewline(std::string_view(buffer_.data(), static_cast<std::size_t>(n))));
    } else {
      version.fd.Reset();  // read by path from now on: that names the problem
    }
  }
  if (version.fd.get() < 0) ReadVersion(root_, limits_, out);
  Result<std::vector<int>> devices = SysfsTree(root_, limits_).ListDevices();
  if (!devices.ok()) {
    out.errors.push_back(devices.status().message());
    return out;
  }
  FollowDeviceList(*devices);
  out.devices.reserve(plan_->devices.size());
  const Refresh refresh{samples_,
                        {1, options_.errors_every, options_.slow_every, options_.rare_every}};
  for (DevicePlan& d : plan_->devices) {
    out.devices.push_back(ReadPlanned(d, limits_, refresh, buffer_));
  }
  return out;
}

}  // namespace neuronmon::neurondev
