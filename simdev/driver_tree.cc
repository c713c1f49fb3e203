#include "simdev/driver_tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

namespace neuronmon::simdev {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExtraHostCategories[] = {"driver_memory", "notifications", "dma_rings",
                                                "uncategorized"};
constexpr const char* kExtraDeviceCategories[] = {
    "driver_memory", "collectives", "nonshared_scratchpad",
    "notifications", "dma_rings",   "uncategorized"};

using Field = std::uint64_t ExecutionCounters::*;
// The driver's 24 execution outcomes (neuron_sysfs_metrics.c order) and the field each shows.
struct Outcome {
  const char* name;
  Field field;  // null: the simulator has no such count
};
constexpr Outcome kOutcomes[] = {
    {"success", &ExecutionCounters::completed},
    {"failure", nullptr},
    {"timeout", &ExecutionCounters::timed_out},
    {"exec_bad_input", &ExecutionCounters::incorrect_input},
    {"hw_error", &ExecutionCounters::hardware},
    {"execute_completed_with_error", &ExecutionCounters::completed_with_err},
    {"execute_completed_with_num_error", &ExecutionCounters::completed_with_num_err},
    {"generic_error", &ExecutionCounters::generic},
    {"resource_error", &ExecutionCounters::runtime},
    {"resource_nc_error", nullptr},
    {"execute_failed_to_queue", &ExecutionCounters::failed_to_queue},
    {"invalid_error", nullptr},
    {"unsupported_neff_version", &ExecutionCounters::model},
    {"oob_error", nullptr},
    {"hw_collectives_error", nullptr},
    {"hw_hbm_ue_error", nullptr},
    {"hw_nc_ue_error", nullptr},
    {"hw_dma_abort_error", nullptr},
    {"execute_sw_nq_overflow", nullptr},
    {"execute_sw_semaphore_error", nullptr},
    {"execute_sw_event_error", nullptr},
    {"execute_sw_psum_collision", nullptr},
    {"execute_sw_sequencer_fatal", nullptr},
    {"hw_repairable_hbm_ue_error", nullptr}};

// The driver's power file: "STATUS,epoch,min,max,avg" in percent with two decimals.
std::string PowerLine(const DevicePower& power, std::uint64_t wall_seconds) {
  if (!power.unavailable.empty())
    return "POWER_STATUS_NO_DATA," + std::to_string(wall_seconds) + ",0.00,0.00,0.00\n";
  char buf[96];
  std::snprintf(buf, sizeof buf, "POWER_STATUS_VALID,%llu,%.2f,%.2f,%.2f\n",
                static_cast<unsigned long long>(wall_seconds), power.min_percent, power.max_percent,
                power.average_percent);
  return buf;
}

constexpr double kCyclesPerNs = 1.4;
constexpr std::size_t kCommBytes = 15;  // TASK_COMM_LEN - 1

struct Arch {
  const char* arch_type;
  const char* instance_type;
  const char* device_name;
};

std::string Line(std::uint64_t value) { return std::to_string(value) + "\n"; }

std::uint64_t RoundToCount(double value) {
  return value > 0 ? static_cast<std::uint64_t>(std::llround(value)) : 0;
}

// "2.30.2.0" -> {2, 30, 2, 0}; empty when it is not dot-separated numbers.
std::vector<int> ParseVersion(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t dot = std::min(text.find('.', start), text.size());
    const std::string part = text.substr(start, dot - start);
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return {};
    }
    out.push_back(std::stoi(part));
    start = dot + 1;
  }
  return out.size() >= 2 ? out : std::vector<int>{};
}

const Arch* ArchOf(const v1::Device& device, const v1::HardwareInfo& hardware) {
  static constexpr Arch kTrn1{"NDv2", "Trn1", "Trainium1"};
  static constexpr Arch kInf2{"NDv3", "Inf2", "Inferentia2"};
  static constexpr Arch kTrn2{"NDv3", "Trn2", "Trainium2"};
  const std::string& name =
      device.device_name().empty() ? hardware.neuron_device_type() : device.device_name();
  if (name == "Trainium1" || name == "Trainium" || name == "trainium") return &kTrn1;
  if (name == "Inferentia2" || name == "inferentia2") return &kInf2;
  if (name == "Trainium2" || name == "trainium2") return &kTrn2;
  return nullptr;
}

// A physical core's busy time: its own counter when the logical core has sub-cores.
std::uint64_t PhysicalBusyNs(const CoreCounters& core, std::uint32_t lnc, std::uint32_t j) {
  if (lnc > 1 && j < core.physical_busy_ns.size()) return core.physical_busy_ns[j];
  return core.busy_ns;
}

// `bytes` of a logical core split over its `lnc` physical cores, the remainder on the first.
std::uint64_t Share(std::uint64_t bytes, std::uint32_t lnc, std::uint32_t j) {
  return bytes / lnc + (j == 0 ? bytes % lnc : 0);
}

std::string PeCounters(std::uint64_t busy_ns, Nanos device_time) {
  const std::uint64_t busy = RoundToCount(static_cast<double>(busy_ns) * kCyclesPerNs);
  const std::uint64_t mm = busy * 3 / 4;
  const double idle_ns = static_cast<double>(device_time.count()) - static_cast<double>(busy_ns);
  const std::string row = "," + std::to_string(mm) + "," + std::to_string(busy - mm) + "," +
                          std::to_string(RoundToCount(idle_ns * kCyclesPerNs)) + "\n";
  std::string out = "xrow_grp,mm_active,wl_active,idle\n";
  for (int r = 0; r < 4; ++r) out += std::to_string(r) + row;
  return out;
}

std::string DeviceDir(const std::string& root, std::uint32_t n) {
  return root + "/devices/virtual/neuron_device/neuron" + std::to_string(n);
}

std::string ClassLink(const std::string& root, std::uint32_t n) {
  return root + "/class/neuron_device/neuron" + std::to_string(n);
}

std::uint64_t PhysicalKey(std::uint32_t device, std::uint32_t k) {
  return std::uint64_t{device} << 32 | k;
}

std::vector<std::string> SplitArgs(const std::string& command) {
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start < command.size()) {
    const std::size_t space = std::min(command.find(' ', start), command.size());
    if (space > start) args.push_back(command.substr(start, space - start));
    start = space + 1;
  }
  return args;
}

Status Errno(const std::string& path, const std::string& what) {
  return Status::IoError(path + ": " + what + ": " + std::strerror(errno));
}

// Replaces `path` with `content` in one rename, so a reader never sees a partial file.
Status ReplaceFile(const std::string& path, const std::string& content) {
  const fs::path p(path);
  const std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(path, "cannot create " + tmp);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = Errno(path, "cannot write " + tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Errno(path, "cannot replace");
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

Status ReplaceSymlink(const std::string& path, const std::string& target) {
  const fs::path p(path);
  const std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
  ::unlink(tmp.c_str());
  if (::symlink(target.c_str(), tmp.c_str()) != 0) return Errno(path, "cannot create " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Errno(path, "cannot replace");
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

Status MakeParent(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::IoError(parent.string() + ": cannot create directory: " + ec.message());
  return Status::Ok();
}

template <typename Map>
void ErasePrefix(Map& map, const std::string& prefix) {
  std::erase_if(map, [&](const auto& entry) { return entry.first.rfind(prefix, 0) == 0; });
}

}  // namespace

struct DriverTreeWriter::View {
  struct Core {
    std::uint32_t device = 0;
    std::uint32_t position = 0;  // i: the logical core's place among its device's
    std::uint32_t lnc = 1;
  };

  View(const v1::Inventory& inv, const Snapshot& snap) : inventory(inv), snapshot(snap) {}
  // Index the inventory's cores and tally the runtimes; errors when the two do not fit together.
  Status IndexDevices();
  Status TallyRuntimes();

  const v1::Inventory& inventory;
  const Snapshot& snapshot;
  std::unordered_map<std::uint32_t, Core> cores;              // by global logical core
  std::map<std::uint32_t, const Arch*> arch;                  // by device
  std::map<std::uint32_t, HostMemory> host;                   // by the runtimes' lowest device
  std::unordered_map<std::uint32_t, CoreMemory> memory;       // by logical core
  std::unordered_map<std::uint32_t, ExecutionCounters> live;  // by runtimes' lowest core
  std::map<std::uint32_t, const v1::Process*> processes;      // by pid
};

Status DriverTreeWriter::View::IndexDevices() {
  for (const v1::Device& d : inventory.devices()) {
    const std::string where = "inventory device " + std::to_string(d.index());
    const auto logical = static_cast<std::uint32_t>(d.core_ids_size());
    if (d.index() >= snapshot.devices.size()) {
      return Status::InvalidArgument(where + ": the snapshot has only " +
                                     std::to_string(snapshot.devices.size()) + " devices");
    }
    if (logical == 0 || logical != d.core_count() || d.physical_core_count() % logical != 0) {
      return Status::InvalidArgument(where + ": " + std::to_string(d.physical_core_count()) +
                                     " physical cores do not split into " +
                                     std::to_string(d.core_count()) + " logical cores");
    }
    arch[d.index()] = ArchOf(d, inventory.hardware_info());
    if (arch[d.index()] == nullptr) {
      return Status::InvalidArgument(where + ": unknown device name \"" + d.device_name() + "\"");
    }
    for (std::uint32_t i = 0; i < logical; ++i) {
      const std::uint32_t g = d.core_ids(static_cast<int>(i));
      if (g >= snapshot.cores.size()) {
        return Status::InvalidArgument(where + ": core " + std::to_string(g) +
                                       " is not in the snapshot");
      }
      cores[g] = {d.index(), i, d.physical_core_count() / logical};
    }
  }
  return Status::Ok();
}

Status DriverTreeWriter::View::TallyRuntimes() {
  for (const v1::Process& p : inventory.processes()) processes[p.pid()] = &p;
  for (const RuntimeSample& r : snapshot.runtimes) {
    if (processes.count(r.pid) == 0) {
      return Status::InvalidArgument("runtime " + std::to_string(r.pid) +
                                     " has no process in the inventory");
    }
    if (r.cores.empty()) continue;
    if (cores.count(r.cores.front()) == 0) {
      return Status::InvalidArgument("runtime " + std::to_string(r.pid) + ": core " +
                                     std::to_string(r.cores.front()) + " is on no device");
    }
    live[r.cores.front()] += r.executions;
    if (r.memory == nullptr) continue;
    std::uint32_t lowest = cores[r.cores.front()].device;
    for (std::uint32_t g : r.cores) {
      if (const auto it = cores.find(g); it != cores.end()) {
        lowest = std::min(lowest, it->second.device);
      }
    }
    HostMemory& h = host[lowest];
    h.application_memory += r.memory->host.application_memory;
    h.constants += r.memory->host.constants;
    h.dma_buffers += r.memory->host.dma_buffers;
    h.tensors += r.memory->host.tensors;
    for (const CoreMemory& c : r.memory->cores) {
      CoreMemory& m = memory[c.core];
      m.constants += c.constants;
      m.model_code += c.model_code;
      m.model_shared_scratchpad += c.model_shared_scratchpad;
      m.runtime_memory += c.runtime_memory;
      m.tensors += c.tensors;
    }
  }
  return Status::Ok();
}

DriverTreeWriter::DriverTreeWriter(std::string sysfs_root, std::string proc_root,
                                   DriverTreeOptions options)
    : sysfs_root_(std::move(sysfs_root)),
      proc_root_(std::move(proc_root)),
      options_(std::move(options)),
      version_(ParseVersion(options_.driver_version)),
      health_status_(version_ >= std::vector<int>{2, 28}),
      live_counters_(version_ >= std::vector<int>{2, 30, 2}) {}

DriverTreeWriter::~DriverTreeWriter() = default;

Status DriverTreeWriter::Write(const v1::Inventory& inventory, const Snapshot& snapshot) {
  files_written_ = 0;
  if (version_.empty()) {
    return Status::InvalidArgument("driver_version \"" + options_.driver_version +
                                   "\" is not a version such as 2.30.2.0; nothing written");
  }
  if (!snapshot.error.empty()) {
    return Status::InvalidArgument("the snapshot is a failed read (" + snapshot.error +
                                   "); nothing written");
  }
  View view(inventory, snapshot);
  if (Status s = view.IndexDevices(); !s.ok()) return s;
  if (Status s = view.TallyRuntimes(); !s.ok()) return s;
  if (!started_ || snapshot.epoch != epoch_) Restart(snapshot.epoch);
  RetireExited(view);

  if (Status s = WriteFile(sysfs_root_ + "/module/neuron/version", options_.driver_version + "\n");
      !s.ok()) {
    return s;
  }
  std::set<std::uint32_t> listed;
  for (const v1::Device& d : inventory.devices()) {
    listed.insert(d.index());
    Status s = snapshot.devices[d.index()].present ? WriteDevice(view, d) : RemoveDevice(d.index());
    if (!s.ok()) return s;
  }
  for (std::uint32_t n : std::set<std::uint32_t>(devices_written_)) {
    if (listed.count(n) != 0) continue;
    if (Status s = RemoveDevice(n); !s.ok()) return s;
  }
  if (Status s = AppendKernelLog(snapshot); !s.ok()) return s;
  return options_.write_proc ? WriteProcesses(view) : Status::Ok();
}

Status DriverTreeWriter::AppendKernelLog(const Snapshot& snapshot) {
  if (options_.kernel_log.empty()) return Status::Ok();
  std::string records;
  for (std::size_t n = 0; n < snapshot.devices.size(); ++n) {
    const HardwareErrors& now = snapshot.devices[n].errors;
    HardwareErrors& logged = kernel_logged_[static_cast<std::uint32_t>(n)];
    for (const HardwareErrorField& f : kHardwareErrorFields) {
      if (f.source != ErrorSource::kKernelLog) continue;
      // The catch-all row counts every type no other row names; one such type stands for them.
      const std::string type =
          f.kernel_type.empty() ? "NOTIFICATION_ERROR" : std::string(f.kernel_type);
      std::uint64_t HardwareErrors::*count = f.member;
      for (; logged.*count < now.*count; ++(logged.*count)) {
        const auto us = std::max<std::int64_t>(0, snapshot.device_time.count() / 1000);
        records += "3," + std::to_string(kernel_seq_++) + "," + std::to_string(us) + ",-;neuron" +
                   std::to_string(n) + ": NEURON_HW_ERR=" + type +
                   " instance-id=i-0000000000000000 hostname=simulated nd-id=" + std::to_string(n) +
                   " nc-id=0 action=TERMINATE_INSTANCE\n";
      }
    }
  }
  // Created at the first Write, as /dev/kmsg is always there.
  if (records.empty() && kernel_log_created_) return Status::Ok();
  if (Status s = MakeParent(options_.kernel_log); !s.ok()) return s;
  const int fd =
      ::open(options_.kernel_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError("cannot open " + options_.kernel_log + ": " + std::strerror(errno));
  }
  kernel_log_created_ = true;
  const bool ok = records.empty() || ::write(fd, records.data(), records.size()) ==
                                         static_cast<ssize_t>(records.size());
  const int error = errno;
  ::close(fd);
  if (!ok) {
    return Status::IoError("cannot append to " + options_.kernel_log + ": " + std::strerror(error));
  }
  return Status::Ok();
}

void DriverTreeWriter::Restart(std::uint64_t epoch) {
  started_ = true;
  epoch_ = epoch;
  counters_.clear();
  kernel_logged_.clear();  // the counts restart; the log keeps what it has
  retired_.clear();
  flat_.clear();
  seen_.clear();
}

// A runtime that is gone leaves its counts on its core, as the driver adds a process's counts
// in when it exits; flat drivers show each core as it was at that moment.
void DriverTreeWriter::RetireExited(const View& view) {
  std::map<std::uint32_t, SeenRuntime> now;
  for (const RuntimeSample& r : view.snapshot.runtimes) now[r.pid] = {r.cores, r.executions};
  for (const auto& [pid, gone] : seen_) {
    if (now.count(pid) != 0 || gone.cores.empty()) continue;
    retired_[gone.cores.front()] += gone.executions;
    for (std::uint32_t g : gone.cores) {
      const auto it = view.cores.find(g);
      if (it == view.cores.end()) continue;
      const View::Core& core = it->second;
      const CoreCounters& counters = view.snapshot.cores[g];
      for (std::uint32_t j = 0; j < core.lnc; ++j) {
        flat_[PhysicalKey(core.device, core.position * core.lnc + j)] = {
            PhysicalBusyNs(counters, core.lnc, j), RoundToCount(counters.flops / core.lnc)};
      }
    }
  }
  seen_ = std::move(now);
}

Status DriverTreeWriter::RemoveDevice(std::uint32_t index) {
  devices_written_.erase(index);
  const std::string link = ClassLink(sysfs_root_, index);
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(link, ec)) && !fs::remove(link, ec) && ec) {
    return Status::IoError(link + ": cannot remove: " + ec.message());
  }
  links_.erase(link);
  return RemoveTree(DeviceDir(sysfs_root_, index));
}

Status DriverTreeWriter::WriteDevice(const View& view, const v1::Device& device) {
  const std::uint32_t n = device.index();
  const std::string dir = DeviceDir(sysfs_root_, n);
  Status s = devices_written_.count(n) != 0
                 ? WriteDeviceFiles(view, device, dir)
                 : WriteNewDirectory(dir, [&](const std::string& staging) {
                     return WriteDeviceFiles(view, device, staging);
                   });
  if (!s.ok()) return s;
  devices_written_.insert(n);
  return WriteSymlink(ClassLink(sysfs_root_, n),
                      "../../devices/virtual/neuron_device/neuron" + std::to_string(n));
}

Status DriverTreeWriter::WriteDeviceFiles(const View& view, const v1::Device& device,
                                          const std::string& dir) {
  const std::uint32_t n = device.index();
  const DeviceCounters& counters = view.snapshot.devices[n];
  const Arch& arch = *view.arch.at(n);
  std::string connected;
  for (std::uint32_t peer : device.connected_to()) {
    connected += (connected.empty() ? "" : ", ") + std::to_string(peer);
  }
  const std::uint64_t wall_seconds = static_cast<std::uint64_t>(std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::seconds>(view.snapshot.wall.time_since_epoch())
             .count()));
  std::vector<std::pair<std::string, std::string>> files = {
      {"core_count", std::to_string(device.physical_core_count())},
      {"connected_devices", connected + "\n"},
      {"info/serial_number", device.serial_number() + "\n"},
      {"info/architecture/arch_type", std::string(arch.arch_type) + "\n"},
      {"info/architecture/instance_type", std::string(arch.instance_type) + "\n"},
      {"info/architecture/device_name", std::string(arch.device_name) + "\n"},
      {"stats/hardware/mem_ecc_uncorrected", Line(counters.errors.mem_ecc_uncorrected)},
      {"stats/hardware/sram_ecc_uncorrected", Line(counters.errors.sram_ecc_uncorrected)},
      {"stats/hardware/mem_ecc_repairable_uncorrected", Line(counters.errors.mem_ecc_repairable)},
      {"stats/power/utilization", PowerLine(counters.power, wall_seconds)}};
  if (health_status_) {
    files.insert(files.end(),
                 {{"stats/hardware/health_status/hbm_ecc_err_count",
                   Line(counters.errors.mem_ecc_uncorrected)},
                  {"stats/hardware/health_status/repairable_hbm_ecc_err_count",
                   Line(counters.errors.mem_ecc_repairable)},
                  {"stats/hardware/health_status/sram_ecc_err_count",
                   Line(counters.errors.sram_ecc_uncorrected)},
                  {"stats/hardware/health_status/hw_error_event", Line(counters.errors.events)}});
  }
  for (const auto& [name, content] : files) {
    if (Status s = WriteFile(dir + "/" + name, content); !s.ok()) return s;
  }
  if (Status s = WriteHostMemory(view, dir + "/stats/memory_usage/host_mem", n); !s.ok()) return s;
  const std::uint32_t lnc = device.physical_core_count() / device.core_count();
  for (std::uint32_t i = 0; i < device.core_count(); ++i) {
    for (std::uint32_t j = 0; j < lnc; ++j) {
      const std::string core = dir + "/neuron_core" + std::to_string(i * lnc + j);
      if (Status s = WriteCore(view, core, device.core_ids(static_cast<int>(i)), j); !s.ok()) {
        return s;
      }
    }
  }
  return Status::Ok();
}

Status DriverTreeWriter::WriteHostMemory(const View& view, const std::string& dir,
                                         std::uint32_t device) {
  const auto it = view.host.find(device);
  const HostMemory host = it == view.host.end() ? HostMemory{} : it->second;
  const std::pair<const char*, std::uint64_t> categories[] = {
      {"application_memory", host.application_memory},
      {"constants", host.constants},
      {"dma_buffers", host.dma_buffers},
      {"tensors", host.tensors}};
  for (const auto& [name, bytes] : categories) {
    if (Status s = WriteCounter(dir + "/" + name, bytes, true); !s.ok()) return s;
  }
  for (const char* name : kExtraHostCategories) {
    if (Status s = WriteCounter(dir + "/" + name, 0, true); !s.ok()) return s;
  }
  return Status::Ok();
}

Status DriverTreeWriter::WriteCore(const View& view, const std::string& dir, std::uint32_t logical,
                                   std::uint32_t j) {
  const View::Core& core = view.cores.at(logical);
  const CoreCounters& counters = view.snapshot.cores[logical];
  const std::uint64_t busy_ns = PhysicalBusyNs(counters, core.lnc, j);
  FlatCore other{busy_ns, RoundToCount(counters.flops / core.lnc)};
  if (!live_counters_) {
    const auto it = flat_.find(PhysicalKey(core.device, core.position * core.lnc + j));
    other = it == flat_.end() ? FlatCore{} : it->second;
  }
  ExecutionCounters outcomes;
  if (j == 0) {
    if (const auto it = retired_.find(logical); it != retired_.end()) outcomes += it->second;
    const auto it = view.live.find(logical);
    if (live_counters_ && it != view.live.end()) outcomes += it->second;
  }
  const auto memory_it = view.memory.find(logical);
  const CoreMemory memory = memory_it == view.memory.end() ? CoreMemory{} : memory_it->second;
  const std::pair<const char*, std::uint64_t> other_info[] = {
      {"nc_time_in_use", other.busy_ns / 1000},
      {"flop_count", other.flop_count},
      {"model_load_count", 0},
      {"reset_req_count", 0},
      {"reset_fail_count", 0},
      {"inference_count", 0}};
  const auto device_mem = memory.ByCategory();
  const std::string stats = dir + "/stats/";
  Status s;
  auto counter = [&](const std::string& path, std::uint64_t value, bool with_peak) {
    if (s.ok()) s = WriteCounter(stats + path, value, with_peak);
  };
  for (const auto& [name, value] : other_info)
    counter(std::string("other_info/") + name, value, false);
  // The device's hardware errors are counted on its first physical core.
  const HardwareErrors none;
  const HardwareErrors& hw =
      core.position == 0 && j == 0 && core.device < view.snapshot.devices.size()
          ? view.snapshot.devices[core.device].errors
          : none;
  const std::pair<const char*, std::uint64_t> hardware[] = {
      {"hw_collectives_error", hw.collectives},
      {"hw_hbm_ue_error", hw.hbm_uncorrectable},
      {"hw_nc_ue_error", hw.nc_uncorrectable},
      {"hw_dma_abort_error", hw.dma_abort}};
  for (const Outcome& o : kOutcomes) {
    std::uint64_t value = o.field ? outcomes.*o.field : 0;
    for (const auto& [name, n] : hardware) {
      if (std::string_view(o.name) == name) value = n;
    }
    counter(std::string("status/") + o.name, value, false);
  }
  const std::string mem = "memory_usage/device_mem/";
  for (const auto& [name, bytes] : device_mem) counter(mem + name, Share(bytes, core.lnc, j), true);
  for (const char* name : kExtraDeviceCategories) counter(mem + name, 0, true);
  if (!s.ok()) return s;
  return WriteFile(stats + "tensor_engine/pe_cntrs",
                   PeCounters(busy_ns, view.snapshot.device_time));
}

Status DriverTreeWriter::WriteProcesses(const View& view) {
  std::set<std::uint32_t> alive;
  for (const RuntimeSample& r : view.snapshot.runtimes) {
    alive.insert(r.pid);
    const std::string dir = proc_root_ + "/" + std::to_string(r.pid);
    Status s = processes_written_.count(r.pid) != 0
                   ? WriteProcessFiles(view, r, dir)
                   : WriteNewDirectory(dir, [&](const std::string& staging) {
                       return WriteProcessFiles(view, r, staging);
                     });
    if (!s.ok()) return s;
  }
  for (auto it = processes_written_.begin(); it != processes_written_.end();) {
    if (alive.count(it->first) != 0) {
      ++it;
      continue;
    }
    if (Status s = RemoveTree(proc_root_ + "/" + std::to_string(it->first)); !s.ok()) return s;
    it = processes_written_.erase(it);
  }
  return Status::Ok();
}

Status DriverTreeWriter::WriteProcessFiles(const View& view, const RuntimeSample& runtime,
                                           const std::string& dir) {
  const std::string pid = std::to_string(runtime.pid);
  const std::vector<std::string> args = SplitArgs(view.processes.at(runtime.pid)->command());
  std::string cmdline;
  for (const std::string& a : args) cmdline += a + '\0';
  std::string comm = args.empty() ? "unknown" : fs::path(args.front()).filename().string();
  comm.resize(std::min(comm.size(), kCommBytes));
  const std::string ids = "\t1000\t1000\t1000\t1000\n";
  const std::string environment =
      runtime.tag == pid ? "" : "NEURON_PROCESS_TAG=" + runtime.tag + std::string(1, '\0');
  const std::pair<const char*, std::string> files[] = {
      {"cmdline", cmdline},
      {"comm", comm + "\n"},
      {"status", "Name:\t" + comm + "\nState:\tS (sleeping)\nTgid:\t" + pid + "\nPid:\t" + pid +
                     "\nPPid:\t1\nUid:" + ids + "Gid:" + ids},
      {"environ", environment},
      {"cgroup", "0::/user.slice/user-1000.slice/session-1.scope\n"}};
  for (const auto& [name, content] : files) {
    if (Status s = WriteFile(dir + "/" + name, content); !s.ok()) return s;
  }
  std::set<std::uint32_t> devices;
  for (std::uint32_t g : runtime.cores) {
    if (const auto it = view.cores.find(g); it != view.cores.end())
      devices.insert(it->second.device);
  }
  std::size_t fd = 3;
  for (std::uint32_t n : devices) {
    Status s = WriteSymlink(dir + "/fd/" + std::to_string(fd++), "/dev/neuron" + std::to_string(n));
    if (!s.ok()) return s;
  }
  std::size_t& written = processes_written_[runtime.pid];
  for (std::size_t stale = fd; stale < written; ++stale) {
    const std::string link = dir + "/fd/" + std::to_string(stale);
    if (::unlink(link.c_str()) != 0 && errno != ENOENT) return Errno(link, "cannot remove");
    links_.erase(Canonical(link));
  }
  written = fd;
  return Status::Ok();
}

Status DriverTreeWriter::WriteNewDirectory(const std::string& dir,
                                           const std::function<Status(const std::string&)>& write) {
  const fs::path p(dir);
  const std::string staging = (p.parent_path() / ("." + p.filename().string() + ".new")).string();
  if (Status s = RemoveTree(dir); !s.ok()) return s;
  if (Status s = RemoveTree(staging); !s.ok()) return s;
  staging_from_ = staging + "/";
  staging_to_ = dir + "/";
  Status s = write(staging);
  staging_from_.clear();
  staging_to_.clear();
  if (s.ok() && ::rename(staging.c_str(), dir.c_str()) != 0)
    s = Errno(dir, "cannot rename " + staging);
  if (!s.ok()) {
    ErasePrefix(files_, dir + "/");
    ErasePrefix(links_, dir + "/");
  }
  return s;
}

std::string DriverTreeWriter::Canonical(const std::string& path) const {
  if (staging_from_.empty() || path.rfind(staging_from_, 0) != 0) return path;
  return staging_to_ + path.substr(staging_from_.size());
}

Status DriverTreeWriter::WriteCounter(const std::string& dir, std::uint64_t total, bool with_peak) {
  CounterState& c = counters_[Canonical(dir)];
  if (total != c.total) {
    c.present = total > c.total ? total - c.total : c.total - total;
    c.total = total;
  }
  c.peak = std::max(c.peak, total);
  Status s = WriteFile(dir + "/total", Line(c.total));
  if (s.ok()) s = WriteFile(dir + "/present", Line(c.present));
  if (s.ok() && with_peak) s = WriteFile(dir + "/peak", Line(c.peak));
  return s;
}

Status DriverTreeWriter::WriteFile(const std::string& path, const std::string& content) {
  const std::string key = Canonical(path);
  const auto it = files_.find(key);
  if (it != files_.end() && it->second == content) return Status::Ok();
  if (it == files_.end()) {
    if (Status s = MakeParent(path); !s.ok()) return s;
  }
  if (Status s = ReplaceFile(path, content); !s.ok()) return s;
  files_[key] = content;
  ++files_written_;
  return Status::Ok();
}

Status DriverTreeWriter::WriteSymlink(const std::string& path, const std::string& target) {
  const std::string key = Canonical(path);
  const auto it = links_.find(key);
  if (it != links_.end() && it->second == target) return Status::Ok();
  if (it == links_.end()) {
    if (Status s = MakeParent(path); !s.ok()) return s;
  }
  if (Status s = ReplaceSymlink(path, target); !s.ok()) return s;
  links_[key] = target;
  ++files_written_;
  return Status::Ok();
}

// Renamed away first, so a reader listing the parent sees the directory whole or not at all.
Status DriverTreeWriter::RemoveTree(const std::string& path) {
  ErasePrefix(files_, path + "/");
  ErasePrefix(links_, path + "/");
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return Status::Ok();
  const fs::path p(path);
  const fs::path hidden = p.parent_path() / ("." + p.filename().string() + ".removed");
  fs::remove_all(hidden, ec);
  fs::rename(p, hidden, ec);
  if (ec) return Status::IoError(path + ": cannot remove: " + ec.message());
  fs::remove_all(hidden, ec);
  if (ec) return Status::IoError(path + ": cannot remove: " + ec.message());
  return Status::Ok();
}

}  // namespace neuronmon::simdev
