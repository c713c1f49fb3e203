#include "neurondev/host.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "neurondev/datastores.h"
#include "neurondev/driver_datastores.h"
#include "neurondev/inventory.h"
#include "neurondev/pod_allocations.h"
#include "proto/procfs/proc_parsers.h"

namespace neuronmon::neurondev {
namespace {

// The field of the runtime's host categories named `category`; null for another.
std::uint64_t* HostField(HostMemory& h, std::string_view category) {
  if (category == "application_memory") return &h.application_memory;
  if (category == "constants") return &h.constants;
  if (category == "dma_buffers") return &h.dma_buffers;
  if (category == "tensors") return &h.tensors;
  return nullptr;
}

// The device's host memory categories the runtime model has (the driver's others are not the
// runtime's) into its fields.
void AddHostMemory(const DeviceReading& d, HostMemory* h) {
  for (const MemoryCategory& c : d.host_memory) {
    if (std::uint64_t* field = HostField(*h, c.name)) *field += c.total;
  }
}

// The field of the runtime's five device categories named `category`, else `other`.
std::uint64_t& CoreField(CoreMemory& m, std::string_view category) {
  if (category == "constants") return m.constants;
  if (category == "model_code") return m.model_code;
  if (category == "model_shared_scratchpad") return m.model_shared_scratchpad;
  if (category == "runtime_memory") return m.runtime_memory;
  if (category == "tensors") return m.tensors;
  return m.other;
}

// Every category the core's device_mem lists: the runtime's five by name, the driver's others
// (driver_memory, collectives, dma_rings, ...) in `other`, which the runtime's total counts too.
// `only_other`: the driver's others alone (the five came from the runtime's datastore).
void AddCoreMemory(const CoreReading& c, CoreMemory* m, bool only_other = false) {
  for (const MemoryCategory& category : c.device_memory) {
    std::uint64_t& field = CoreField(*m, category.name);
    if (!only_other || &field == &m->other) field += category.total;
  }
}

std::string JoinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) out += (out.empty() ? "" : "; ") + e;
  return out;
}

// Each device's info/serial_number that could be read, by index: what the kernel log's events
// name their devices by.
std::map<int, std::string> SerialNumbers(const TreeReading& reading) {
  std::map<int, std::string> serials;
  for (const DeviceReading& d : reading.devices) {
    if (d.serial_number) serials.emplace(d.index, *d.serial_number);
  }
  return serials;
}

// With live counters (driver 2.30.2+) busy time comes from nc_time_in_use, so the tensor
// engine's counters need not be read every second.
SamplerOptions SamplerFor(const HostOptions& o) {
  SamplerOptions sampler = o.sampler;
  sampler.slow_pe_counters =
      HasLiveCounters(SysfsTree(o.sysfs_root, o.tree_limits).DriverVersion());
  return sampler;
}

}  // namespace

bool HasNeuronDevices(const std::string& sysfs_root) {
  Result<std::vector<int>> devices = SysfsTree(sysfs_root).ListDevices();
  return devices.ok() && !devices->empty();
}

namespace {

// The daemon's pid as the process table names it: /proc/self in that table (the pid namespace
// whose /proc is mounted there), else getpid().
std::uint32_t OwnPid(const std::string& proc_root) {
  char target[32] = {};
  const ssize_t n = ::readlink((proc_root + "/self").c_str(), target, sizeof target - 1);
  std::uint32_t pid = 0;
  if (n > 0) {
    const auto [end, ec] = std::from_chars(target, target + n, pid);
    if (ec == std::errc() && end == target + n && pid != 0) return pid;
  }
  return static_cast<std::uint32_t>(::getpid());
}

}  // namespace

Host::Host(HostOptions options)
    : options_(std::move(options)),
      sampler_(options_.sysfs_root, options_.tree_limits, SamplerFor(options_)),
      scanner_(options_.proc_root, options_.process_limits) {
  if (!options_.datastore_root.empty()) {
    datastores_ =
        std::make_unique<Datastores>(std::make_unique<DatastoreFiles>(options_.datastore_root));
  } else if (options_.driver_datastores) {
    datastores_ = std::make_unique<Datastores>(
        std::make_unique<DriverDatastores>(options_.dev_root, LiveDriverCalls(options_.dev_root)));
  }
  if (options_.own_pid == 0) options_.own_pid = OwnPid(options_.proc_root);
}

Host::~Host() = default;

Result<std::unique_ptr<Host>> Host::Open(HostOptions options, MonoTime now) {
  std::unique_ptr<Host> host(new Host(std::move(options)));
  Result<std::vector<int>> devices =
      SysfsTree(host->options_.sysfs_root, host->options_.tree_limits).ListDevices();
  if (!devices.ok()) return devices.status();
  if (devices->empty()) {
    return Status::NotFound("no Neuron devices under " + host->options_.sysfs_root +
                            " (is the aws-neuronx-dkms driver loaded?)");
  }
  host->start_ = now;
  const TreeReading reading = host->sampler_.Sample();
  host->Refresh(reading);
  host->tracker_->Fold(reading, now);
  const HostOptions& o = host->options_;
  if (!o.neuron_monitor.empty()) {
    std::error_code ec;
    const std::string dir =
        o.config_dir.empty() ? std::filesystem::temp_directory_path(ec).string() : o.config_dir;
    host->runtime_source_ = std::make_unique<RuntimeSource>(
        o.neuron_monitor, dir.empty() ? "/tmp" : dir, host->inventory_.host_vcpu_count(),
        o.child_limits, o.max_runtimes);
  }
  if (o.kubernetes) {
    // The first answer is waited for (at most the call's deadline), so that the first inventory
    // names the pods; later calls never block a read.
    host->pod_resources_ = std::make_unique<PodResourcesClient>(o.pod_resources);
    host->pod_resources_->Poll(now);
    host->pod_resources_->Poll(now, o.pod_resources.deadline + std::chrono::milliseconds(500));
  }
  if (o.kernel_log) {
    host->kernel_log_ = std::make_unique<KernelLog>(o.kernel_log_options);
    host->kernel_log_->SetDevices(SerialNumbers(reading));
    host->kernel_log_->Poll();
  }
  host->runtime_status_ = o.neuron_monitor.empty() ? "neuron-monitor is not used (configured \"\")"
                                                   : "neuron-monitor is starting";
  return host;
}

// Rebuilds what follows from the set of devices and the driver version: the inventory and the
// logical core config. The counter tracker is built once (a new device set is a new epoch inside
// it), so it keeps the live-counter choice of the driver it started with.
void Host::Refresh(const TreeReading& reading) {
  std::vector<int> indices;
  for (const DeviceReading& d : reading.devices) indices.push_back(d.index);
  const std::string version = reading.driver_version.value_or("");
  if (tracker_ != nullptr && indices == device_indices_ && version == driver_version_) return;
  device_indices_ = std::move(indices);
  driver_version_ = version;
  lnc_ = reading.devices.empty()
             ? 1
             : LogicalCoreConfig(reading.devices.front(), options_.logical_nc_config);
  live_ = HasLiveCounters(version);
  HostIdentity identity = ReadHostIdentity(options_.sysfs_root, options_.proc_root);
  placement_errors_.clear();
  for (int index : device_indices_) {
    PciPlacement p = LocateDevice(options_.dev_root, options_.sysfs_root, index);
    if (!p.error.empty()) placement_errors_.push_back(p.error);
    identity.placements.emplace(index, std::move(p));
  }
  inventory_ = BuildInventory(reading, identity, lnc_);
  layout_note_.clear();
  if (!device_indices_.empty()) {
    // Where the first device's nodes are, as the sampler's discovery found them: a layout
    // other than 2.24–2.30's is said at start-up.
    const NodeIndex* nodes = sampler_.nodes(device_indices_.front());
    if (nodes != nullptr &&
        (!nodes->moved().empty() || !nodes->missing().empty() || !nodes->unknown().empty())) {
      layout_note_ = ", driver layout: " + std::to_string(nodes->moved().size()) + " moved, " +
                     std::to_string(nodes->missing().size()) + " missing, " +
                     std::to_string(nodes->unknown().size()) +
                     " unknown nodes (neuron-ls --driver lists them)";
    }
  }
  if (tracker_ == nullptr) tracker_ = std::make_unique<CounterTracker>(lnc_, live_);
}

v1::Inventory Host::Inventory(MonoTime now) {
  (void)now;
  v1::Inventory inv = inventory_;
  inv.set_runtime_status(RuntimeStatus());
  const std::uint32_t per_device = inv.hardware_info().neuroncore_per_device_count();
  for (const NeuronProcess& p : processes_.processes) {
    v1::Process* out = inv.add_processes();
    out->set_pid(p.pid);
    out->set_tag(p.tag.empty() ? std::to_string(p.pid) : p.tag);
    out->set_command(p.command);
    out->set_start_time_ticks(p.start_ticks);
    v1::Attribution& a = *out->mutable_attribution();
    if (p.uid) a.set_uid(*p.uid);
    a.set_user(p.user);
    a.set_container_id(p.attribution.container_id);
    a.set_pod_uid(p.attribution.pod_uid);
    a.set_slurm_job_id(p.attribution.slurm_job_id);
    a.set_slurm_array_job_id(p.attribution.slurm_array_job_id);
    a.set_slurm_array_task_id(p.attribution.slurm_array_task_id);
    a.set_slurm_step(p.attribution.slurm_step);
    a.set_slurm_claimed(p.attribution.slurm_claimed);
    const auto used = datastore_cores_.find(p.pid);
    for (std::uint32_t d : p.devices) {
      out->add_device_indices(d);
      if (used != datastore_cores_.end()) continue;
      for (std::uint32_t c = 0; c < per_device; ++c) out->add_core_ids(d * per_device + c);
    }
    // The cores its datastores show it using (busy or holding memory), and its versions.
    if (used != datastore_cores_.end()) {
      for (std::uint32_t c : used->second) out->add_core_ids(c);
    }
    if (const auto v = versions_.find(p.pid); v != versions_.end()) {
      out->set_runtime_version(v->second.runtime);
      out->set_framework_version(v->second.framework);
    }
    out->set_no_datastore(no_datastore_.contains(p.pid));
  }
  AddKubernetes(inv);
  return inv;
}

void Host::AddKubernetes(v1::Inventory& inv) const {
  if (pod_resources_ == nullptr) return;
  const PodResourcesState state = pod_resources_->state();
  if (state == PodResourcesState::kPending || state == PodResourcesState::kFailed) {
    inv.set_kubernetes_status(pod_resources_->status());
  }
  const std::vector<PodAllocation> allocations = MapAllocations(
      pod_resources_->listing().entries, inv.hardware_info().neuroncore_per_device_count());
  for (const PodAllocation& a : allocations) {
    v1::PodAllocation* out = inv.add_allocations();
    out->set_pod(a.pod);
    out->set_namespace_(a.pod_namespace);
    out->set_container(a.container);
    out->set_resource_name(a.resource_name);
    for (std::uint32_t d : a.device_indices) out->add_device_indices(d);
    for (std::uint32_t c : a.core_ids) out->add_core_ids(c);
  }
  for (v1::Process& process : *inv.mutable_processes()) {
    v1::Attribution& a = *process.mutable_attribution();
    // A process outside every pod (one on the node itself) holding a pod's device is not that
    // pod's.
    if (a.pod_uid().empty()) continue;
    const std::vector<std::uint32_t> devices(process.device_indices().begin(),
                                             process.device_indices().end());
    if (std::optional<PodContainer> c = ContainerOfDevices(devices, allocations)) {
      a.set_pod(c->pod);
      a.set_namespace_(c->pod_namespace);
      a.set_container(c->container);
    }
  }
}

void Host::ScanProcessesIfDue() {
  // A scan starts at most every process_scan_every reads and goes on, within its budget, at each
  // read until it completes; the last complete one stands meanwhile.
  const bool due = reads_++ % std::max<std::uint32_t>(1, options_.process_scan_every) == 0;
  if (!scanner_.in_progress() && !due) return;
  if (!scanner_.Step()) return;
  processes_ = scanner_.result();
  // The daemon's own datastore reads hold the devices open: it is not an application.
  std::erase_if(processes_.processes,
                [&](const NeuronProcess& p) { return p.pid == options_.own_pid; });
  process_note_ = scanner_.error().ok() ? "" : scanner_.error().message();
  if (processes_.unreadable > 0) {
    process_note_ = std::to_string(processes_.unreadable) +
                    " processes could not be inspected (run as root or with CAP_SYS_PTRACE to "
                    "see other users' processes)";
  }
}

void Host::AfterRead() {
  ScanProcessesIfDue();
  scan_stepped_ = true;
}

void Host::ForgetReusedRuntimePids() {
  std::map<std::uint32_t, std::uint64_t> starts;
  for (const auto& runtime : runtime_source_->integrator().Statuses()) {
    const Result<procfs::ProcessStat> stat =
        procfs::ReadProcessStat(options_.proc_root, runtime.pid);
    if (!stat.ok()) continue;
    const auto first = runtime_starts_.find(runtime.pid);
    if (first != runtime_starts_.end() && first->second != stat->start_ticks) {
      runtime_source_->Forget(runtime.pid);  // its next listing is the new process's
      continue;
    }
    starts[runtime.pid] = stat->start_ticks;
  }
  runtime_starts_ = std::move(starts);
}

std::map<std::pair<std::uint32_t, std::uint32_t>, Datastores::Read> Host::ReadDatastores(
    const std::vector<const NeuronProcess*>& live,
    std::map<std::uint32_t, DeviceDatastores>& devices) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, Datastores::Read> out;
  if (datastores_ == nullptr) return out;
  const std::size_t cores = std::size_t{inventory_.hardware_info().neuroncore_per_device_count()} *
                            static_cast<std::size_t>(lnc_);
  std::size_t reads = 0;
  std::vector<const NeuronProcess*> without;  // none of whose devices has its datastore
  for (const NeuronProcess* p : live) {
    std::size_t none = 0;
    for (std::uint32_t d : p->devices) {
      DeviceDatastores& device = devices[d];
      if (reads++ >= options_.datastore_max_reads) {
        ++device.unread;
        continue;
      }
      Result<Datastores::Read> got = datastores_->ReadDatastore(static_cast<int>(d), p->pid, cores);
      if (got.ok()) {
        ++device.read;
        out.emplace(std::pair(p->pid, d), std::move(*got));
      } else if (got.status().code() == StatusCode::kNotFound) {
        ++device.none;
        ++none;
      } else {
        ++device.unread;
        datastore_note_ = got.status().message();
      }
    }
    if (!p->devices.empty() && none == p->devices.size()) without.push_back(p);
  }
  // Not a runtime: a holder with no datastore on devices where another holder's was read (so the
  // source answers, for the pids the process table names).
  for (const NeuronProcess* p : without) {
    if (std::all_of(p->devices.begin(), p->devices.end(),
                    [&](std::uint32_t d) { return devices[d].read > 0; })) {
      no_datastore_.insert(p->pid);
    }
  }
  return out;
}

void Host::AddShare(const DatastoreShare& share, RuntimeSample& r, RuntimeMemory& memory,
                    DatastoreTotals& totals) {
  totals.executions += share.totals.executions;
  totals.collective_us += share.totals.collective_us;
  totals.cores += share.totals.cores;
  for (const datastore::HostMemoryCounter& h : datastore::kHostMemoryCounters) {
    memory.host.*h.field += share.host.*h.field;
  }
  for (const CoreMemory& m : share.cores) {
    r.cores.push_back(m.core);
    memory.cores.push_back(m);
  }
}

Host::DatastoreShare Host::FromDatastore(const Datastores::Read& got, std::uint32_t pid,
                                         std::uint32_t d, const DeviceReading* sysfs, bool alone,
                                         std::uint64_t interval_ns) {
  DatastoreShare share;
  DatastoreTotals& totals = share.totals;
  const std::uint32_t per_device = inventory_.hardware_info().neuroncore_per_device_count();
  const auto lnc = static_cast<std::uint32_t>(lnc_);
  const datastore::Reading& ds = got.reading;
  // What its counters grew by since its last reading (from 0 when the datastore started again);
  // nothing the first time it is read: what it counted before is not this interval's.
  const datastore::Reading* since =
      got.restarted.empty() && got.previous ? &*got.previous : nullptr;
  const bool counting = got.previous.has_value();
  const auto grew = [&](std::size_t physical, datastore::CoreCounter k) -> std::uint64_t {
    const std::uint64_t now = ds.Core(physical, k);
    const std::uint64_t was = since != nullptr ? since->Core(physical, k) : 0;
    return now >= was ? now - was : now;
  };
  for (const datastore::HostMemoryCounter& h : datastore::kHostMemoryCounters) {
    share.host.*h.field += ds.device[h.counter];
  }
  for (std::uint32_t c = 0; c < per_device; ++c) {
    CoreMemory m;
    m.core = d * per_device + c;
    bool busy = false;
    std::uint64_t collective_us = 0;
    std::size_t physical_cores = 0;
    CoreCounters& core = datastore_growth_[m.core];
    if (lnc > 1) core.physical_busy_ns.resize(lnc, 0);
    std::uint64_t busy_ns = 0;
    for (std::uint32_t k = 0; k < lnc; ++k) {
      const std::size_t physical = c * lnc + k;
      if (physical >= ds.cores.size()) continue;
      ++physical_cores;
      if (counting) {
        // TIME_IN_USE is µs (the driver adds it to nc_time_in_use); one MAC is two FLOPs. Each
        // process's growth is capped here so a hostile count cannot overflow the core's sum,
        // which is capped at the interval again below.
        const std::uint64_t ns =
            std::min(grew(physical, datastore::kTimeInUse), interval_ns / 1000 + 1) * 1000;
        busy_ns += ns;
        if (lnc > 1) core.physical_busy_ns[k] += ns;
        core.flops += 2.0 * static_cast<double>(grew(physical, datastore::kMacCount));
      }
      busy = busy || ds.Core(physical, datastore::kTimeInUse) > 0;
      collective_us += ds.Core(physical, datastore::kCcTime);
      for (const datastore::DeviceMemoryCounter& mc : datastore::kDeviceMemoryCounters) {
        m.*mc.field += ds.cores[physical][mc.counter];
      }
      for (const datastore::ExecutionCounter& e : datastore::kExecutionCounters) {
        totals.executions.*e.field += ds.cores[physical][e.counter];
      }
      HardwareErrors& errors = datastore_errors_[d];
      for (const datastore::HardwareErrorCounter& h : datastore::kHardwareErrorCounters) {
        errors.*h.field += ds.cores[physical][h.counter];
      }
      // The driver's own categories are per core, not per process: this runtime's when it holds
      // the device alone.
      if (alone && sysfs != nullptr && physical < sysfs->cores.size()) {
        AddCoreMemory(sysfs->cores[physical], &m, true);
      }
    }
    core.busy_ns += busy_ns / lnc;  // a logical core's busy time is its physical cores' mean
    // The cores it uses: busy, or holding memory.
    if (!busy && m.Total() == m.other) continue;
    totals.collective_us += collective_us;
    totals.cores += physical_cores;
    share.cores.push_back(m);
  }
  if (ds.runtime_version().known() || ds.framework_version().known()) {
    versions_[pid] = {ds.runtime_version().Text(), ds.framework_version().Text()};
  }
  return share;
}

std::vector<RuntimeSample> Host::RuntimesFromProcesses(const TreeReading& reading,
                                                       std::uint64_t interval_ns) {
  // Between scans, a process that exited, or whose pid another process has taken, is gone at
  // once: it is neither read nor counted as a holder.
  std::vector<const NeuronProcess*> live;
  std::vector<Result<procfs::ProcessStat>> stats;
  for (const NeuronProcess& p : processes_.processes) {
    Result<procfs::ProcessStat> stat = procfs::ReadProcessStat(options_.proc_root, p.pid);
    if (stat.ok()
            ? p.start_ticks != 0 && stat->start_ticks != p.start_ticks
            : ::access((options_.proc_root + "/" + std::to_string(p.pid)).c_str(), F_OK) != 0) {
      continue;
    }
    live.push_back(&p);
    stats.push_back(std::move(stat));
  }
  std::map<std::uint32_t, int> holders;
  for (const NeuronProcess* p : live) {
    for (std::uint32_t d : p->devices) ++holders[d];
  }
  const std::uint32_t per_device = inventory_.hardware_info().neuroncore_per_device_count();
  std::vector<RuntimeSample> runtimes;
  std::set<std::uint32_t> alive;
  shared_devices_ = false;
  datastore_note_.clear();
  datastore_cores_.clear();
  datastore_errors_.clear();
  datastore_growth_.clear();
  no_datastore_.clear();
  // Every holder's datastore first: a device is served by its datastores when each holder's was
  // read or the holder has none (a monitoring tool), and at least one was read; then its cores'
  // busy time and FLOPs are the datastores' sum and a holder without one uses none of its cores.
  // A device served at the last read stays served for a few reads while one holder's cannot be
  // read (a runtime mid-start, or one that writes garbage): that holder's figures are lost, not
  // its neighbours'.
  std::map<std::uint32_t, DeviceDatastores> devices;
  const std::map<std::pair<std::uint32_t, std::uint32_t>, Datastores::Read> read =
      ReadDatastores(live, devices);
  std::map<std::uint32_t, int> served;  // device -> reads of grace it used
  for (const auto& [d, device] : devices) {
    const auto before = served_.find(d);
    if (device.served()) {
      served[d] = 0;
    } else if (device.read > 0 && before != served_.end() && before->second < kServedGrace) {
      served[d] = before->second + 1;
    }
  }
  served_ = served;
  std::map<std::pair<std::uint32_t, std::uint32_t>, DatastoreShare> shares;
  figures_from_datastores_ = datastores_ != nullptr;
  for (const auto& [d, device] : devices) {
    figures_from_datastores_ = figures_from_datastores_ && device.served();
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    const NeuronProcess& p = *live[i];
    const Result<procfs::ProcessStat>& stat = stats[i];
    RuntimeSample r;
    r.pid = p.pid;
    r.tag = p.tag.empty() ? std::to_string(p.pid) : p.tag;
    auto memory = std::make_shared<RuntimeMemory>();
    ExecutionCounters executions;
    DatastoreTotals from_datastores;
    bool datastore = false;
    for (std::uint32_t d : p.devices) {
      auto it = std::find_if(reading.devices.begin(), reading.devices.end(),
                             [&](const DeviceReading& dr) { return dr.index == int(d); });
      const DeviceReading* sysfs = it == reading.devices.end() ? nullptr : &*it;
      // The runtime's own figures, shared device or not, when the device's datastores serve.
      if (served.contains(d)) {
        datastore = true;
        const auto got = read.find(std::pair(p.pid, d));
        if (got != read.end()) {
          DatastoreShare& share = shares[std::pair(p.pid, d)];
          share = FromDatastore(got->second, p.pid, d, sysfs, holders[d] == 1, interval_ns);
          AddShare(share, r, *memory, from_datastores);
        } else if (const auto last = last_shares_.find(std::pair(p.pid, d));
                   last != last_shares_.end()) {
          // Not read this time (the device's grace): what it said at its last read.
          shares[last->first] = last->second;
          AddShare(last->second, r, *memory, from_datastores);
        }
        continue;
      }
      for (std::uint32_t c = 0; c < per_device; ++c) r.cores.push_back(d * per_device + c);
      // Device-wide figures belong to this process only when it holds the device alone.
      if (holders[d] != 1) {
        shared_devices_ = true;
        memory->device_unavailable +=
            (memory->device_unavailable.empty() ? "" : "; ") + std::string("ND") +
            std::to_string(d) +
            " is shared with another process, and the driver's sysfs counts its memory per core, "
            "not per process";
        continue;
      }
      if (sysfs == nullptr) continue;
      AddHostMemory(*it, &memory->host);
      for (std::uint32_t c = 0; c < per_device; ++c) {
        CoreMemory m;
        m.core = d * per_device + c;
        for (int k = 0; k < lnc_; ++k) {
          const std::size_t physical = c * static_cast<std::uint32_t>(lnc_) + k;
          if (physical < it->cores.size()) AddCoreMemory(it->cores[physical], &m);
        }
        memory->cores.push_back(m);
      }
      const ExecutionCounters e = tracker_->DeviceExecutions(static_cast<int>(d));
      executions += e;
    }
    // Counts start when the process is first seen, and again when the counters restart.
    auto [base, fresh] = baselines_.try_emplace(p.pid, Baseline{tracker_->epoch(), executions});
    if (!fresh && base->second.epoch != tracker_->epoch()) base->second = {tracker_->epoch(), {}};
    r.executions = executions.Minus(base->second.executions);
    r.executions += from_datastores.executions;
    // CC_TIME is in µs as TIME_IN_USE is (the driver adds that into nc_time_in_use, µs).
    if (from_datastores.cores > 0) {
      r.collective_time_ns = from_datastores.collective_us * 1000 / from_datastores.cores;
    }
    std::sort(r.cores.begin(), r.cores.end());
    std::sort(memory->cores.begin(), memory->cores.end(),
              [](const CoreMemory& a, const CoreMemory& b) { return a.core < b.core; });
    if (datastore) datastore_cores_[p.pid] = r.cores;
    r.memory = std::move(memory);
    if (stat.ok()) {
      static const long ticks = std::max(1L, sysconf(_SC_CLK_TCK));
      const procfs::ProcessCpuTime cpu =
          procfs::CpuTimeOf(*stat, static_cast<std::uint64_t>(ticks));
      r.cpu_user_ns = cpu.user_ns;
      r.cpu_system_ns = cpu.system_ns;
    }
    alive.insert(p.pid);
    runtimes.push_back(std::move(r));
  }
  // This read's growth, per core at most the time since the last read whatever the processes'
  // datastores claim (several may claim one core; a hostile one may claim any), into the totals.
  for (auto& [core, growth] : datastore_growth_) {
    CoreCounters& total = datastore_core_totals_[core];
    total.busy_ns += std::min(growth.busy_ns, interval_ns);
    total.flops += growth.flops;
    total.physical_busy_ns.resize(growth.physical_busy_ns.size(), 0);
    for (std::size_t k = 0; k < growth.physical_busy_ns.size(); ++k) {
      total.physical_busy_ns[k] += std::min(growth.physical_busy_ns[k], interval_ns);
    }
  }
  // The devices the datastores serve need not have their activity files read every second.
  std::set<int> quiet;
  for (const auto& [d, grace] : served) quiet.insert(static_cast<int>(d));
  sampler_.SetQuietDevices(quiet);
  tracker_->SetQuietDevices(quiet);
  last_shares_ = std::move(shares);
  std::erase_if(baselines_, [&](const auto& entry) { return !alive.contains(entry.first); });
  std::erase_if(versions_, [&](const auto& entry) { return !alive.contains(entry.first); });
  if (datastores_ != nullptr) {
    datastores_->Retain([&](std::uint32_t pid) { return alive.contains(pid); });
    std::set<int> held;
    for (const auto& [d, n] : holders) held.insert(static_cast<int>(d));
    datastores_->source().RetainDevices(held);
  }
  return runtimes;
}

Snapshot Host::Read(MonoTime now) {
  const TreeReading reading = sampler_.Sample();
  Refresh(reading);
  tracker_->Fold(reading, now);
  bool runtime_figures = false;
  if (pod_resources_ != nullptr) pod_resources_->Poll(now);
  if (runtime_source_ != nullptr) {
    runtime_source_->Poll(now);
    ForgetReusedRuntimePids();
    runtime_figures = runtime_source_->Current(now);
    runtime_status_ = runtime_source_->Unavailable(now);
  }
  // The process table names the processes in the inventory either way. Runtimes come from their
  // datastores when every one was read, with neuron-monitor adding what only it gives (latency);
  // else from neuron-monitor while its figures are current; else from the process table and the
  // driver's tree.
  if (!std::exchange(scan_stepped_, false)) ScanProcessesIfDue();
  const std::uint64_t interval_ns =
      last_read_
          ? static_cast<std::uint64_t>(std::max<std::int64_t>(0, (now - *last_read_).count()))
          : 0;
  last_read_ = now;
  std::vector<RuntimeSample> runtimes = RuntimesFromProcesses(reading, interval_ns);
  datastore_runtimes_ = figures_from_datastores_ && !runtimes.empty();
  if (datastore_runtimes_ && runtime_figures) {
    AddLatency(runtime_source_->integrator().Runtimes(), runtimes);
  } else if (runtime_figures) {
    runtimes = runtime_source_->integrator().Runtimes();
  }
  Snapshot s;
  s.device_time = Nanos(std::max<std::int64_t>(0, (now - start_).count()));
  s.epoch = tracker_->epoch();
  // Busy time and FLOPs per core: the datastores' where they cover a device, else neuron-monitor's
  // while it is current, else the driver's counters.
  {
    std::map<std::uint32_t, SourcedCores> cores;
    if (runtime_figures) {
      for (const auto& [c, counters] : runtime_source_->integrator().Cores()) {
        cores[c] = {CoreSource::kNeuronMonitor, counters};
      }
    }
    const std::uint32_t per_device = inventory_.hardware_info().neuroncore_per_device_count();
    for (const auto& [d, grace] : served_) {
      for (std::uint32_t c = d * per_device; c < (d + 1) * per_device; ++c) {
        CoreCounters counters = datastore_core_totals_[c];
        if (lnc_ > 1) counters.physical_busy_ns.resize(static_cast<std::size_t>(lnc_), 0);
        cores[c] = {CoreSource::kDatastores, std::move(counters)};
      }
    }
    s.cores = MergeCores(cores);
  }
  s.devices = tracker_->devices();
  AddDatastoreErrors(s);
  for (const DeviceReading& d : reading.devices) {
    s.devices[static_cast<std::size_t>(d.index)].error = JoinErrors(d.errors);
  }
  AddKernelLog(reading, s);
  if (reading.devices.empty()) {
    s.error = "no Neuron devices readable under " + options_.sysfs_root;
    if (!reading.errors.empty()) s.error += ": " + JoinErrors(reading.errors);
  }
  s.runtimes = std::move(runtimes);
  s.unmeasured = UnmeasuredNow(!shared_devices_, runtime_figures);
  return s;
}

void Host::AddDatastoreErrors(Snapshot& s) {
  // From 2.30.2 the driver's per-core status counters move live and already hold them.
  if (live_) return;
  if (error_floor_epoch_ != tracker_->epoch()) {
    error_floor_.clear();
    error_floor_epoch_ = tracker_->epoch();
  }
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    HardwareErrors& out = s.devices[d].errors;
    if (const auto it = datastore_errors_.find(static_cast<std::uint32_t>(d));
        it != datastore_errors_.end()) {
      for (const datastore::HardwareErrorCounter& h : datastore::kHardwareErrorCounters) {
        out.*h.field += it->second.*h.field;
      }
    }
    // A process that exits between the tree's read and its datastore's moves its counts from one
    // to the other: never below what this epoch showed, so no count falls and counts again.
    HardwareErrors& floor = error_floor_[d];
    for (const datastore::HardwareErrorCounter& h : datastore::kHardwareErrorCounters) {
      out.*h.field = std::max(out.*h.field, floor.*h.field);
      floor.*h.field = out.*h.field;
    }
  }
}

void Host::AddLatency(const std::vector<RuntimeSample>& from_monitor,
                      std::vector<RuntimeSample>& runtimes) {
  for (RuntimeSample& r : runtimes) {
    const auto m = std::find_if(from_monitor.begin(), from_monitor.end(),
                                [&](const RuntimeSample& x) { return x.pid == r.pid; });
    if (m == from_monitor.end()) continue;
    r.total_latency = m->total_latency;
    r.device_latency = m->device_latency;
  }
}

void Host::AddKernelLog(const TreeReading& reading, Snapshot& s) {
  if (kernel_log_ == nullptr) {
    for (DeviceCounters& d : s.devices) {
      d.kernel_log_unavailable = "the kernel log is not read (kernel_log.enabled is false)";
    }
    return;
  }
  // The log's events are what it says happened, since the daemon started: a counter epoch (a
  // reload, a reset) does not undo them.
  kernel_log_->SetDevices(SerialNumbers(reading));
  kernel_log_->Poll();
  for (std::size_t n = 0; n < s.devices.size(); ++n) {
    DeviceCounters& d = s.devices[n];
    d.kernel_log_unavailable = kernel_log_->unavailable();
    kernel_log_->SetCounts(static_cast<int>(n), d.errors);
  }
}

std::vector<CoreCounters> Host::MergeCores(const std::map<std::uint32_t, SourcedCores>& runtime) {
  const std::vector<CoreCounters>& now = tracker_->cores();
  if (merged_cores_.size() != now.size() || merged_epoch_ != tracker_->epoch()) {
    merged_cores_.assign(now.size(), CoreCounters{});
    previous_tracker_cores_.clear();
    merged_epoch_ = tracker_->epoch();
  }
  auto grown = [](double a, double b) { return a >= b ? a - b : a; };
  for (std::size_t c = 0; c < now.size(); ++c) {
    CoreCounters& out = merged_cores_[c];
    auto r = runtime.find(static_cast<std::uint32_t>(c));
    auto before = previous_runtime_cores_.find(static_cast<std::uint32_t>(c));
    // Two sources' cumulative counts are never subtracted from one another.
    const bool from_runtime = r != runtime.end() && before != previous_runtime_cores_.end() &&
                              r->second.source == before->second.source;
    // A core the runtime source had at the last read and has no more goes back to the driver's
    // counter from its value now: an old driver adds a runtime's whole busy time to it when the
    // runtime exits, which that source counted already.
    if (!from_runtime && before != previous_runtime_cores_.end()) continue;
    const CoreCounters zero;
    const CoreCounters& a = from_runtime                         ? before->second.counters
                            : c < previous_tracker_cores_.size() ? previous_tracker_cores_[c]
                                                                 : zero;
    const CoreCounters& b = from_runtime ? r->second.counters : now[c];
    out.busy_ns += static_cast<std::uint64_t>(
        grown(static_cast<double>(b.busy_ns), static_cast<double>(a.busy_ns)));
    out.flops += grown(b.flops, a.flops);
    out.effective_flops += grown(b.effective_flops, a.effective_flops);
    out.physical_busy_ns.resize(now[c].physical_busy_ns.size(), 0);
    for (std::size_t p = 0; p < out.physical_busy_ns.size(); ++p) {
      const bool has = p < b.physical_busy_ns.size() && p < a.physical_busy_ns.size();
      if (has)
        out.physical_busy_ns[p] +=
            b.physical_busy_ns[p] - std::min(b.physical_busy_ns[p], a.physical_busy_ns[p]);
    }
  }
  previous_tracker_cores_ = now;
  previous_runtime_cores_ = runtime;
  return merged_cores_;
}

std::shared_ptr<const Unmeasured> Host::UnmeasuredNow(bool exclusive, bool runtime_figures) {
  const std::string why = runtime_figures ? "" : RuntimeStatus();
  Unmeasured u;
  u.Set(Signal::kHbmTraffic, "the Neuron driver exposes no HBM traffic counter");
  if (!tracker_->corrected_ecc_measured()) {
    u.Set(Signal::kEccCorrected,
          "the Neuron driver (before 2.30.2) exposes only uncorrected ECC events");
  }
  if (datastore_runtimes_) {
    // Every runtime's datastores were read: busy time and FLOPs of every core in use (a device no
    // process holds is idle), executions on any driver and on shared devices, and time in
    // collectives. Latency only neuron-monitor gives.
    if (!runtime_figures) {
      u.Set(Signal::kLatency, "the runtime's datastore has no latency figure the driver defines" +
                                  (why.empty() ? std::string() : "; " + why));
    }
  } else if (!runtime_figures) {
    const std::string& activity = tracker_->core_activity_unmeasured();
    u.Set(Signal::kCoreActivity, activity);
    // FLOPs are unmeasured with busy time, and on their own where flop_count is flat or missing.
    const std::string& flops = tracker_->flops_unmeasured();
    if (!activity.empty()) {
      u.Set(Signal::kFlops, activity);
    } else if (!flops.empty()) {
      u.Set(Signal::kFlops, why.empty() ? flops : flops + "; " + why);
    }
    u.Set(Signal::kLatency, why);
    u.Set(Signal::kCollectives, why);
    if (!live_) {
      u.Set(
          Signal::kExecutions,
          "the Neuron driver (before 2.30.2) counts executions only when a process exits; " + why);
    } else if (!exclusive) {
      u.Set(Signal::kExecutions, "processes share a device; " + why);
    }
  } else {
    bool collectives = false;
    for (const auto& r : runtime_source_->integrator().Statuses()) {
      collectives = collectives || r.collectives_available();
    }
    if (!collectives) u.Set(Signal::kCollectives, "AWS's neuron-monitor reports no collectives");
    if (!runtime_source_->integrator().flops_reported()) {
      u.Set(Signal::kFlops, "AWS's neuron-monitor reports no FLOPs (Neuron 2.9 or later does)");
    }
  }
  if (unmeasured_ == nullptr || !(*unmeasured_ == u)) {
    unmeasured_ = std::make_shared<const Unmeasured>(std::move(u));
  }
  return unmeasured_;
}

std::string Host::Describe() const {
  const std::string name = inventory_.devices_size() > 0 ? inventory_.devices(0).device_name() : "";
  std::string out = "neuron: " + std::to_string(inventory_.devices_size()) + " x " +
                    (name.empty() ? "Neuron device" : name) + ", driver " +
                    (driver_version_.empty() ? "version unknown" : driver_version_) + layout_note_;
  if (!placement_errors_.empty()) {
    out += ", PCI placement unknown (" + placement_errors_.front() +
           (placement_errors_.size() > 1
                ? " and " + std::to_string(placement_errors_.size() - 1) + " more"
                : "") +
           ")";
  }
  const std::string runtime = RuntimeStatus();
  out += runtime.empty() ? ", runtime figures from neuron-monitor" : "";
  if (datastores_ != nullptr) {
    out += ", runtime datastores from " + datastores_->source().Name() +
           (datastore_note_.empty() ? "" : " (" + datastore_note_ + ")");
  }
  if (kernel_log_ != nullptr && !kernel_log_->unavailable().empty()) {
    out += ", hardware error events unknown: " + kernel_log_->unavailable();
  }
  // A node whose kubelet cannot be asked says why (not on Kubernetes: nothing). The text changes
  // only when the kubelet's state does, so the recorder keeps few versions of it.
  if (pod_resources_ != nullptr) {
    switch (pod_resources_->state()) {
      case PodResourcesState::kKnown:
        out += ", pods from the kubelet";
        break;
      case PodResourcesState::kPending:
      case PodResourcesState::kFailed:
        out += ", pods unknown: " + pod_resources_->status();
        break;
      case PodResourcesState::kNotKubernetes:
        break;
    }
  }
  return out;
}

std::string Host::RuntimeStatus() const {
  std::string status = runtime_status_;
  if (!status.empty()) status = "per-application figures unavailable: " + status;
  if (!process_note_.empty()) status += (status.empty() ? "" : "; ") + process_note_;
  return status;
}

const MonitorIntegrator* Host::runtime_integrator() const {
  return runtime_source_ == nullptr ? nullptr : &runtime_source_->integrator();
}

std::uint64_t Host::clamped_busy_readings() const {
  return tracker_ ? tracker_->clamped_busy_readings() : 0;
}

}  // namespace neuronmon::neurondev
