#include "simdev/driver_tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "simdev/datastore_image.h"
#include "simdev/driver_formats.h"
#include "simdev/driver_tree_view.h"

namespace neuronmon::simdev {
namespace {

namespace fs = std::filesystem;

std::string DeviceDir(const std::string& root, std::uint32_t n) {
  return root + "/devices/virtual/neuron_device/neuron" + std::to_string(n);
}

std::string ClassLink(const std::string& root, std::uint32_t n) {
  return root + "/class/neuron_device/neuron" + std::to_string(n);
}

std::uint64_t PhysicalKey(std::uint32_t device, std::uint32_t k) {
  return std::uint64_t{device} << 32 | k;
}

// A version as the datastore counts it ("2.21.41.0" -> 2.21.41); 0 (none) for "" or a version
// without three parts.
std::uint64_t VersionCounter(const std::string& text) {
  const std::optional<DriverVersion> v = ParseDriverVersion(text);
  if (!v || v->parts.size() < 3) return 0;
  return datastore::EncodeVersion(static_cast<std::uint32_t>(v->parts[0]),
                                  static_cast<std::uint32_t>(v->parts[1]),
                                  static_cast<std::uint32_t>(v->parts[2]));
}

}  // namespace

DriverTreeWriter::DriverTreeWriter(std::string sysfs_root, std::string proc_root,
                                   DriverTreeOptions options)
    : sysfs_root_(std::move(sysfs_root)),
      proc_root_(std::move(proc_root)),
      options_(std::move(options)),
      version_(ParseDriverVersion(options_.driver_version)),
      generation_(GenerationOf(version_.value_or(DriverVersion{}))) {}

DriverTreeWriter::~DriverTreeWriter() = default;

Status DriverTreeWriter::Write(const v1::Inventory& inventory, const Snapshot& snapshot) {
  tree_.ResetCount();
  if (!version_) {
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
  if (started_ && snapshot.epoch != epoch_) {
    // The simulator's counters restart: the driver's do when it reloads, which recreates every
    // device directory (a reader tells by the directories' identity, not by a counter that drops).
    for (std::uint32_t n : std::set<std::uint32_t>(devices_written_)) {
      if (Status s = RemoveDevice(n); !s.ok()) return s;
    }
  }
  if (!started_ || snapshot.epoch != epoch_) Restart(snapshot.epoch);
  RetireExited(view);

  if (Status s =
          tree_.WriteFile(sysfs_root_ + "/module/neuron/version", options_.driver_version + "\n");
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
  if (Status s = AppendKernelLog(inventory, snapshot); !s.ok()) return s;
  if (Status s = WriteDatastores(view); !s.ok()) return s;
  return options_.write_proc ? WriteProcesses(view) : Status::Ok();
}

Status DriverTreeWriter::AppendKernelLog(const v1::Inventory& inventory, const Snapshot& snapshot) {
  if (options_.kernel_log.empty()) return Status::Ok();
  std::map<std::uint32_t, std::string> serials;
  for (const v1::Device& d : inventory.devices()) serials[d.index()] = d.serial_number();
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
        records +=
            KernelLogRecord(kernel_seq_++, us, n, serials[static_cast<std::uint32_t>(n)], type);
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
  tree_.ForgetLink(link);
  return tree_.RemoveTree(DeviceDir(sysfs_root_, index));
}

Status DriverTreeWriter::WriteDevice(const View& view, const v1::Device& device) {
  const std::uint32_t n = device.index();
  const std::string dir = DeviceDir(sysfs_root_, n);
  Status s = devices_written_.count(n) != 0
                 ? WriteDeviceFiles(view, device, dir)
                 : tree_.WriteNewDirectory(dir, [&](const std::string& staging) {
                     return WriteDeviceFiles(view, device, staging);
                   });
  if (!s.ok()) return s;
  devices_written_.insert(n);
  return tree_.WriteSymlink(ClassLink(sysfs_root_, n),
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
  const DriverGeneration& g = generation_;
  const unsigned topology_mode = g.topology_root_only ? 0400 : 0444;
  struct Node {
    const char* canonical;
    std::string content;
    unsigned mode = 0444;
  };
  std::vector<Node> files = {
      {"core_count", std::to_string(device.physical_core_count()), topology_mode},
      {"connected_devices", connected + "\n", topology_mode},
      {"reset", "1\n", 0600},  // NEURON_DEVICE_STATE_READY
      {"info/serial_number", device.serial_number() + "\n"},
      {"info/architecture/arch_type", std::string(arch.arch_type) + "\n"},
      {"info/architecture/instance_type", std::string(arch.instance_type) + "\n"},
      {"info/architecture/device_name", std::string(arch.device_name) + "\n"},
      {"stats/hardware/mem_ecc_uncorrected", Line(counters.errors.mem_ecc_uncorrected)},
      {"stats/hardware/sram_ecc_uncorrected", Line(counters.errors.sram_ecc_uncorrected)},
      {"stats/hardware/mem_ecc_repairable_uncorrected", Line(counters.errors.mem_ecc_repairable)},
      {"stats/power/utilization", PowerLine(counters.power, wall_seconds)}};
  if (g.health_status) {
    const std::string h = "stats/hardware/health_status/";
    files.insert(files.end(),
                 {{"stats/hardware/health_status/hbm_ecc_err_count",
                   Line(counters.errors.mem_ecc_uncorrected)},
                  {"stats/hardware/health_status/repairable_hbm_ecc_err_count",
                   Line(counters.errors.mem_ecc_repairable)},
                  {"stats/hardware/health_status/sram_ecc_err_count",
                   Line(counters.errors.sram_ecc_uncorrected)},
                  {"stats/hardware/health_status/hw_error_event", Line(counters.errors.events)}});
  }
  if (g.health_extras) {
    std::string unhealthy;
    if (counters.errors.mem_ecc_uncorrected + counters.errors.mem_ecc_repairable > 0)
      unhealthy += "hbm\n";
    if (counters.errors.sram_ecc_uncorrected > 0) unhealthy += "sram\n";
    files.insert(
        files.end(),
        {{"stats/hardware/health_status/mem_ecc_corrected", Line(counters.ecc.mem_corrected)},
         {"stats/hardware/health_status/sram_ecc_corrected", Line(counters.ecc.sram_corrected)},
         {"stats/hardware/health_status/unhealthy_components", unhealthy},
         {"stats/hardware/health_status/healthcheck_heartbeat",
          Line(static_cast<std::uint64_t>(view.snapshot.device_time.count() / 1'000'000'000))}});
  }
  if (g.moved) {
    // Nodes this project does not know: the reader lists them rather than guess.
    files.insert(files.end(),
                 {{"info/firmware_version", "1.31.0\n"}, {"stats/power/utilization_raw", "0\n"}});
  }
  for (const Node& node : files) {
    Status s =
        tree_.WriteFile(dir + "/" + PlaceDeviceNode(g, node.canonical), node.content, node.mode);
    if (!s.ok()) return s;
  }
  std::string host_mem = PlaceDeviceNode(g, "stats/memory_usage/host_mem/");
  host_mem.pop_back();
  if (Status s = WriteHostMemory(view, dir + "/" + host_mem, n); !s.ok()) {
    return s;
  }
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
  if (!generation_.live_counters) {
    const auto it = flat_.find(PhysicalKey(core.device, core.position * core.lnc + j));
    other = it == flat_.end() ? FlatCore{} : it->second;
  }
  ExecutionCounters outcomes;
  if (j == 0) {
    if (const auto it = retired_.find(logical); it != retired_.end()) outcomes += it->second;
    const auto it = view.live.find(logical);
    if (generation_.live_counters && it != view.live.end()) outcomes += it->second;
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
  Status s;
  auto counter = [&](const std::string& path, std::uint64_t value, bool with_peak) {
    if (s.ok())
      s = WriteCounter(dir + "/" + PlaceCoreNode(generation_, "stats/" + path), value, with_peak);
  };
  for (const auto& [name, value] : other_info)
    counter(std::string("other_info/") + name, value, false);
  // The device's hardware errors are counted on its first physical core.
  const HardwareErrors none;
  const HardwareErrors& hw =
      core.position == 0 && j == 0 && core.device < view.snapshot.devices.size()
          ? view.snapshot.devices[core.device].errors
          : none;
  for (const Outcome& o : kOutcomes) {
    std::uint64_t value = o.field ? outcomes.*o.field : 0;
    for (const datastore::HardwareErrorCounter& h : datastore::kHardwareErrorCounters) {
      if (o.name == h.sysfs_name) value = hw.*h.field;
    }
    counter(std::string("status/") + o.name, value, false);
  }
  const std::string mem = "memory_usage/device_mem/";
  for (const auto& [name, bytes] : device_mem) counter(mem + name, Share(bytes, core.lnc, j), true);
  for (const char* name : kExtraDeviceCategories) counter(mem + name, 0, true);
  if (!s.ok()) return s;
  return tree_.WriteFile(dir + "/" + PlaceCoreNode(generation_, "stats/tensor_engine/pe_cntrs"),
                         PeCounters(busy_ns, view.snapshot.device_time));
}

Status DriverTreeWriter::WriteDatastores(const View& view) {
  if (options_.datastore_root.empty()) return Status::Ok();
  const v1::HardwareInfo& hw = view.inventory.hardware_info();
  std::set<std::string> written;
  for (const RuntimeSample& r : view.snapshot.runtimes) {
    std::map<std::uint32_t, DatastoreImage> images;  // by device
    std::uint64_t collectives_ns = 0;
    for (const CollectiveCounters& c : r.collectives) collectives_ns += c.busy_ns;
    const v1::Process& process = *view.processes.at(r.pid);
    bool first_core = true;
    for (std::uint32_t g : r.cores) {
      const auto where = view.cores.find(g);
      if (where == view.cores.end() || g >= view.snapshot.cores.size()) continue;
      const View::Core& core = where->second;
      const bool first_device = images.empty();
      DatastoreImage& image = images[core.device];
      if (image.cores.empty()) {
        image.cores.resize(std::min<std::size_t>(hw.neuroncore_per_device_count() * core.lnc,
                                                 datastore::kMaxCores));
        image.device[datastore::kRuntimeVersion] = VersionCounter(process.runtime_version());
        image.device[datastore::kFrameworkVersion] = VersionCounter(process.framework_version());
        if (first_device) {
          for (const datastore::HostMemoryCounter& h : datastore::kHostMemoryCounters) {
            image.device[h.counter] = r.memory->host.*h.field;
          }
        }
      }
      const CoreCounters& counters = view.snapshot.cores[g];
      const auto memory = std::find_if(r.memory->cores.begin(), r.memory->cores.end(),
                                       [&](const CoreMemory& m) { return m.core == g; });
      for (std::uint32_t j = 0; j < core.lnc; ++j) {
        const std::size_t physical = core.position * core.lnc + j;
        if (physical >= image.cores.size()) continue;
        auto& c = image.cores[physical];
        c[datastore::kTimeInUse] = PhysicalBusyNs(counters, core.lnc, j) / 1000;
        c[datastore::kMacCount] = RoundToCount(counters.flops / core.lnc / 2);
        c[datastore::kCcTime] = collectives_ns / 1000;
        if (memory != r.memory->cores.end()) {
          for (const datastore::DeviceMemoryCounter& m : datastore::kDeviceMemoryCounters) {
            c[m.counter] = Share((*memory).*m.field, core.lnc, j);
          }
        }
        if (first_core) {
          for (const datastore::ExecutionCounter& e : datastore::kExecutionCounters) {
            c[e.counter] = r.executions.*e.field;
          }
          c[datastore::kInferenceCount] = r.executions.completed;
          first_core = false;
        }
      }
    }
    for (const auto& [device, image] : images) {
      const std::string path = options_.datastore_root + "/neuron" + std::to_string(device) + "/" +
                               std::to_string(r.pid);
      if (Status s = tree_.WriteFile(path, EncodeDatastore(image)); !s.ok()) return s;
      written.insert(path);
    }
  }
  for (const std::string& path : datastores_written_) {
    if (written.count(path) != 0) continue;
    if (Status s = tree_.RemoveFile(path); !s.ok()) return s;
  }
  datastores_written_ = std::move(written);
  return Status::Ok();
}

Status DriverTreeWriter::WriteProcesses(const View& view) {
  std::set<std::uint32_t> alive;
  for (const RuntimeSample& r : view.snapshot.runtimes) {
    alive.insert(r.pid);
    const std::string dir = proc_root_ + "/" + std::to_string(r.pid);
    Status s = processes_written_.count(r.pid) != 0
                   ? WriteProcessFiles(view, r, dir)
                   : tree_.WriteNewDirectory(dir, [&](const std::string& staging) {
                       return WriteProcessFiles(view, r, staging);
                     });
    if (!s.ok()) return s;
  }
  for (auto it = processes_written_.begin(); it != processes_written_.end();) {
    if (alive.count(it->first) != 0) {
      ++it;
      continue;
    }
    if (Status s = tree_.RemoveTree(proc_root_ + "/" + std::to_string(it->first)); !s.ok())
      return s;
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
    if (Status s = tree_.WriteFile(dir + "/" + name, content); !s.ok()) return s;
  }
  std::set<std::uint32_t> devices;
  for (std::uint32_t g : runtime.cores) {
    if (const auto it = view.cores.find(g); it != view.cores.end())
      devices.insert(it->second.device);
  }
  // A runtime opens its devices O_RDWR | O_CLOEXEC (| O_LARGEFILE): what the real kernel prints in
  // fdinfo, which process scans read to tell holders from write-only queries. Each fdinfo is
  // there before its link and gone after it.
  const std::string fdinfo = "pos:\t0\nflags:\t02100002\nmnt_id:\t26\n";
  std::size_t fd = 3;
  for (std::uint32_t n : devices) {
    const std::string name = std::to_string(fd++);
    Status s = tree_.WriteFile(dir + "/fdinfo/" + name, fdinfo);
    if (s.ok()) s = tree_.WriteSymlink(dir + "/fd/" + name, "/dev/neuron" + std::to_string(n));
    if (!s.ok()) return s;
  }
  std::size_t& written = processes_written_[runtime.pid];
  for (std::size_t stale = fd; stale < written; ++stale) {
    const std::string name = std::to_string(stale);
    Status s = tree_.RemoveLink(dir + "/fd/" + name);
    if (s.ok()) s = tree_.RemoveFile(dir + "/fdinfo/" + name);
    if (!s.ok()) return s;
  }
  written = fd;
  return Status::Ok();
}

Status DriverTreeWriter::WriteCounter(const std::string& dir, std::uint64_t total, bool with_peak) {
  CounterState& c = counters_[tree_.Canonical(dir)];
  if (total != c.total) {
    c.present = total > c.total ? total - c.total : c.total - total;
    c.total = total;
  }
  c.peak = std::max(c.peak, total);
  Status s = tree_.WriteFile(dir + "/total", Line(c.total));
  if (s.ok()) s = tree_.WriteFile(dir + "/present", Line(c.present));
  if (s.ok() && with_peak) s = tree_.WriteFile(dir + "/peak", Line(c.peak));
  return s;
}

}  // namespace neuronmon::simdev
