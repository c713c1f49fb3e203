#include "proto/wire/snapshot_codec.h"

#include <chrono>
#include <cmath>
#include <utility>

#include "proto/wire/field_codec.h"

namespace neuronmon::wire {
namespace {

void HistogramToProto(const LatencyHistogram& h, v1::Histogram& out) {
  out.set_count(h.count());
  out.set_sum_seconds(h.sum_seconds());
  for (const auto& [index, n] : h.buckets()) {
    v1::HistogramBucket* b = out.add_buckets();
    b->set_index(index);
    b->set_count(n);
  }
}

LatencyHistogram HistogramFromProto(const v1::Histogram& h) {
  std::vector<std::pair<std::uint16_t, std::uint64_t>> buckets;
  buckets.reserve(static_cast<std::size_t>(h.buckets_size()));
  for (const v1::HistogramBucket& b : h.buckets()) {
    if (b.index() <= UINT16_MAX)
      buckets.emplace_back(static_cast<std::uint16_t>(b.index()), b.count());
  }
  return LatencyHistogram::FromBuckets(h.sum_seconds(), buckets);
}

void CpuTimesToProto(const CpuTimes& t, v1::CpuTimesSample& out) {
  out.set_user(t.user);
  out.set_nice(t.nice);
  out.set_system(t.system);
  out.set_idle(t.idle);
  out.set_iowait(t.iowait);
  out.set_irq(t.irq);
  out.set_softirq(t.softirq);
  out.set_steal(t.steal);
}

CpuTimes CpuTimesFromProto(const v1::CpuTimesSample& t) {
  return {t.user(), t.nice(), t.system(), t.idle(), t.iowait(), t.irq(), t.softirq(), t.steal()};
}

void HostMemoryToProto(const HostMemory& m, v1::HostMemoryBreakdown& out) {
  out.set_application_memory(m.application_memory);
  out.set_constants(m.constants);
  out.set_dma_buffers(m.dma_buffers);
  out.set_tensors(m.tensors);
}

HostMemory HostMemoryFromProto(const v1::HostMemoryBreakdown& m) {
  return {m.application_memory(), m.constants(), m.dma_buffers(), m.tensors()};
}

std::int64_t NanosOf(std::chrono::nanoseconds d) { return static_cast<std::int64_t>(d.count()); }

template <typename Repeated>
Status Bounded(const Repeated& items, std::size_t limit, const char* what) {
  if (static_cast<std::size_t>(items.size()) <= limit) return Status::Ok();
  return Status::InvalidArgument("snapshot holds " + std::to_string(items.size()) + " " + what +
                                 " (at most " + std::to_string(limit) + ")");
}

}  // namespace

void MemoryToProto(const RuntimeMemory& m, v1::MemoryUsed& out) {
  out.set_host_bytes(m.host.Total());
  out.set_device_bytes(m.DeviceTotal());
  HostMemoryToProto(m.host, *out.mutable_host());
  for (const CoreMemory& c : m.cores) {
    v1::CoreMemory* core = out.add_cores();
    core->set_index(c.core);
    core->set_constants(c.constants);
    core->set_model_code(c.model_code);
    core->set_model_shared_scratchpad(c.model_shared_scratchpad);
    core->set_runtime_memory(c.runtime_memory);
    core->set_tensors(c.tensors);
    core->set_other(c.other);
  }
  out.set_device_unavailable(m.device_unavailable);
  for (const LoadedModel& model : m.models) {
    v1::LoadedModel* lm = out.add_loaded_models();
    lm->set_name(model.name);
    lm->set_uuid(model.uuid);
    lm->set_model_id(model.model_id);
    lm->set_is_running(model.is_running);
    for (const SubgraphMemory& sg : model.subgraphs) {
      v1::Subgraph* g = lm->add_subgraphs();
      g->set_name(sg.name);
      g->set_host_bytes(sg.host.Total());
      g->set_device_bytes(sg.DeviceTotal());
      HostMemoryToProto(sg.host, *g->mutable_host());
      v1::DeviceMemoryBreakdown* d = g->mutable_device();
      d->set_constants(sg.constants);
      d->set_model_code(sg.model_code);
      d->set_runtime_memory(sg.runtime_memory);
      d->set_tensors(sg.tensors);
      g->set_neuroncore_index(sg.core);
      g->set_neuron_device_index(sg.device);
    }
  }
}

std::shared_ptr<const RuntimeMemory> MemoryFromProto(const v1::MemoryUsed& p) {
  auto m = std::make_shared<RuntimeMemory>();
  m->host = HostMemoryFromProto(p.host());
  for (const v1::CoreMemory& c : p.cores()) {
    m->cores.push_back({c.index(), c.constants(), c.model_code(), c.model_shared_scratchpad(),
                        c.runtime_memory(), c.tensors(), c.other()});
  }
  m->device_unavailable = p.device_unavailable();
  for (const v1::LoadedModel& model : p.loaded_models()) {
    LoadedModel& out = m->models.emplace_back();
    out.name = model.name();
    out.uuid = model.uuid();
    out.model_id = model.model_id();
    out.is_running = model.is_running();
    for (const v1::Subgraph& g : model.subgraphs()) {
      out.subgraphs.push_back({g.name(), g.neuroncore_index(), g.neuron_device_index(),
                               HostMemoryFromProto(g.host()), g.device().constants(),
                               g.device().model_code(), g.device().runtime_memory(),
                               g.device().tensors()});
    }
  }
  return m;
}

void PowerToProto(const DevicePower& power, v1::PowerUtilization& out) {
  out.set_unavailable(power.unavailable);
  if (!power.unavailable.empty()) return;
  out.set_average_percent(power.average_percent);
  out.set_min_percent(power.min_percent);
  out.set_max_percent(power.max_percent);
  out.set_sampled_unix_ns(power.sampled_unix_ns);
}

DevicePower PowerFromProto(const v1::PowerUtilization& p) {
  DevicePower out{p.unavailable(), p.average_percent(), p.min_percent(), p.max_percent(),
                  p.sampled_unix_ns()};
  if (!out.unavailable.empty()) return DevicePower{out.unavailable};
  for (double v : {out.average_percent, out.min_percent, out.max_percent}) {
    if (!std::isfinite(v)) return DevicePower{"invalid reading"};
  }
  return out;
}

namespace {

void CoreToProto(const CoreCounters& c, v1::CoreSample& p) {
  p.set_busy_ns(c.busy_ns);
  p.set_flops(c.flops);
  p.set_effective_flops(c.effective_flops);
  for (std::uint64_t b : c.physical_busy_ns) p.add_physical_busy_ns(b);
}

void DeviceToProto(const DeviceCounters& d, v1::DeviceSample& p) {
  p.set_absent(!d.present);
  p.set_error(d.error);
  p.set_hbm_read_bytes(d.hbm_read_bytes);
  p.set_hbm_write_bytes(d.hbm_write_bytes);
  v1::EccSample* e = p.mutable_ecc();
  e->set_mem_corrected(d.ecc.mem_corrected);
  e->set_mem_uncorrected(d.ecc.mem_uncorrected);
  e->set_sram_corrected(d.ecc.sram_corrected);
  e->set_sram_uncorrected(d.ecc.sram_uncorrected);
  HardwareErrorsToProto(d.errors, *p.mutable_errors());
  p.set_errors_unavailable(d.errors_unavailable);
  p.set_errors_missing(d.errors_missing);
  for (const std::string& c : d.unhealthy_components) p.add_unhealthy_components(c);
  p.set_kernel_log_unavailable(d.kernel_log_unavailable);
  if (d.memory.measured) {
    v1::DeviceMemorySample* m = p.mutable_memory();
    m->set_measured(true);
    for (std::size_t i = 0; i < kDeviceMemoryCategories.size(); ++i) {
      m->add_used_bytes(d.memory.used[i]);
      m->add_peak_bytes(d.memory.peak[i]);
    }
  }
  PowerToProto(d.power, *p.mutable_power());
}

void RuntimeToProto(const RuntimeSample& r, v1::RuntimeSample& p) {
  p.set_pid(r.pid);
  p.set_tag(r.tag);
  p.set_error(r.error);
  for (std::uint32_t c : r.cores) p.add_cores(c);
  ExecutionsToProto(r.executions, *p.mutable_executions());
  HistogramToProto(r.total_latency, *p.mutable_total_latency());
  HistogramToProto(r.device_latency, *p.mutable_device_latency());
  p.set_cpu_user_ns(r.cpu_user_ns);
  p.set_cpu_system_ns(r.cpu_system_ns);
  for (const CollectiveCounters& c : r.collectives) {
    v1::CollectiveSample* q = p.add_collectives();
    q->set_op(static_cast<v1::CollectiveOp>(static_cast<int>(c.kind) + 1));
    q->set_count(c.count);
    q->set_bytes(c.bytes);
    q->set_busy_ns(c.busy_ns);
    HistogramToProto(c.latency, *q->mutable_latency());
  }
  if (r.memory != nullptr) MemoryToProto(*r.memory, *p.mutable_memory());
  if (r.collective_time_ns) p.set_collective_time_ns(*r.collective_time_ns);
}

void HostToProto(const HostSample& host, v1::HostSample& h) {
  h.set_cpu_error(host.cpu_error);
  CpuTimesToProto(host.total, *h.mutable_total());
  for (const CpuSample& c : host.per_cpu) {
    v1::CpuSample* p = h.add_per_cpu();
    p->set_cpu(c.cpu);
    CpuTimesToProto(c.times, *p->mutable_times());
  }
  h.set_context_switches(host.context_switches);
  h.set_memory_error(host.memory_error);
  h.set_memory_total_bytes(host.memory_total_bytes);
  h.set_memory_used_bytes(host.memory_used_bytes);
  h.set_swap_total_bytes(host.swap_total_bytes);
  h.set_swap_used_bytes(host.swap_used_bytes);
}

void CoreFromProto(const v1::CoreSample& c, CoreCounters& out) {
  out.busy_ns = c.busy_ns();
  out.flops = c.flops();
  out.effective_flops = c.effective_flops();
  out.physical_busy_ns.assign(c.physical_busy_ns().begin(), c.physical_busy_ns().end());
}

void DeviceFromProto(const v1::DeviceSample& d, DeviceCounters& out) {
  out.present = !d.absent();
  out.error = d.error();
  out.hbm_read_bytes = d.hbm_read_bytes();
  out.hbm_write_bytes = d.hbm_write_bytes();
  out.ecc = {d.ecc().mem_corrected(), d.ecc().mem_uncorrected(), d.ecc().sram_corrected(),
             d.ecc().sram_uncorrected()};
  // An archive from before these fields: none of them was recorded.
  out.errors = HardwareErrorsFromProto(d.errors());
  out.errors_unavailable = d.has_errors() ? d.errors_unavailable() : "not recorded";
  out.errors_missing = d.has_errors() ? d.errors_missing() : ~std::uint32_t{0};
  // At most 32 names of 64 bytes, as the reader keeps them (a frame is a peer's input).
  for (int i = 0; i < d.unhealthy_components_size() && i < 32; ++i)
    out.unhealthy_components.push_back(d.unhealthy_components(i).substr(0, 64));
  out.kernel_log_unavailable = d.has_errors() ? d.kernel_log_unavailable() : "not recorded";
  // Categories beyond the ones known here (a newer writer) are left out; missing ones read 0.
  const v1::DeviceMemorySample& m = d.memory();
  out.memory.measured = m.measured();
  for (std::size_t i = 0; out.memory.measured && i < kDeviceMemoryCategories.size(); ++i) {
    const int k = static_cast<int>(i);
    out.memory.used[i] = k < m.used_bytes_size() ? m.used_bytes(k) : 0;
    out.memory.peak[i] = k < m.peak_bytes_size() ? m.peak_bytes(k) : 0;
  }
  out.power = d.has_power() ? PowerFromProto(d.power()) : DevicePower{"not recorded"};
}

// A runtime's counters, all but its memory; an error when a collective operation is unknown or
// repeated.
Status RuntimeFromProto(const v1::RuntimeSample& r, RuntimeSample& out) {
  out.pid = r.pid();
  out.tag = r.tag();
  out.error = r.error();
  out.cores.assign(r.cores().begin(), r.cores().end());
  out.executions = ExecutionsFromProto(r.executions());
  out.total_latency = HistogramFromProto(r.total_latency());
  out.device_latency = HistogramFromProto(r.device_latency());
  out.cpu_user_ns = r.cpu_user_ns();
  out.cpu_system_ns = r.cpu_system_ns();
  for (std::size_t i = 0; i < out.collectives.size(); ++i) {
    out.collectives[i].kind = static_cast<CollectiveKind>(i);
  }
  std::array<bool, kCollectiveKinds> seen{};
  for (const v1::CollectiveSample& c : r.collectives()) {
    const int i = static_cast<int>(c.op()) - 1;
    if (i < 0 || i >= kCollectiveKinds || seen[static_cast<std::size_t>(i)]) {
      return Status::InvalidArgument("runtime " + std::to_string(r.pid()) +
                                     " has an unknown or repeated collective operation " +
                                     std::to_string(static_cast<int>(c.op())));
    }
    seen[static_cast<std::size_t>(i)] = true;
    CollectiveCounters& q = out.collectives[static_cast<std::size_t>(i)];
    q.count = c.count();
    q.bytes = c.bytes();
    q.busy_ns = c.busy_ns();
    q.latency = HistogramFromProto(c.latency());
  }
  if (r.has_collective_time_ns()) out.collective_time_ns = r.collective_time_ns();
  return Status::Ok();
}

void HostFromProto(const v1::HostSample& h, HostSample& out) {
  out.cpu_error = h.cpu_error();
  out.total = CpuTimesFromProto(h.total());
  for (const v1::CpuSample& c : h.per_cpu()) {
    out.per_cpu.push_back({c.cpu(), CpuTimesFromProto(c.times())});
  }
  out.context_switches = h.context_switches();
  out.memory_error = h.memory_error();
  out.memory_total_bytes = h.memory_total_bytes();
  out.memory_used_bytes = h.memory_used_bytes();
  out.swap_total_bytes = h.swap_total_bytes();
  out.swap_used_bytes = h.swap_used_bytes();
}

// The signals' reasons for being unmeasured; null when every one is measured.
std::shared_ptr<const Unmeasured> UnmeasuredFromProto(const v1::Snapshot& p) {
  bool any_unmeasured = false;
  for (const std::string& reason : p.unmeasured()) any_unmeasured |= !reason.empty();
  if (!any_unmeasured) return nullptr;
  auto u = std::make_shared<Unmeasured>();
  for (int i = 0; i < p.unmeasured_size(); ++i) {
    u->Set(static_cast<Signal>(i), p.unmeasured(i));
  }
  // Recorded before FLOPs had a signal of their own: they were measured with the cores' activity.
  if (p.unmeasured_size() <= static_cast<int>(Signal::kFlops)) {
    u->Set(Signal::kFlops, u->Reason(Signal::kCoreActivity));
  }
  return u;
}

}  // namespace

void SnapshotToProto(const Snapshot& s, v1::Snapshot& out) {
  out.Clear();
  out.set_seq(s.seq);
  out.set_mono_ns(NanosOf(s.mono.time_since_epoch()));
  out.set_wall_unix_ns(NanosOf(s.wall.time_since_epoch()));
  out.set_device_time_ns(NanosOf(s.device_time));
  out.set_epoch(s.epoch);
  out.set_error(s.error);
  for (const CoreCounters& c : s.cores) CoreToProto(c, *out.add_cores());
  for (const DeviceCounters& d : s.devices) DeviceToProto(d, *out.add_devices());
  for (const RuntimeSample& r : s.runtimes) RuntimeToProto(r, *out.add_runtimes());
  HostToProto(s.host, *out.mutable_host());
  if (s.unmeasured != nullptr) {
    for (const std::string& reason : s.unmeasured->reasons) out.add_unmeasured(reason);
  }
}

Result<Snapshot> SnapshotDecoder::Decode(const v1::Snapshot& p) {
  for (Status st :
       {Bounded(p.cores(), kMaxSnapshotCores, "cores"),
        Bounded(p.devices(), kMaxSnapshotDevices, "devices"),
        Bounded(p.runtimes(), kMaxSnapshotRuntimes, "runtimes"),
        Bounded(p.host().per_cpu(), kMaxSnapshotCpus, "CPUs"),
        Bounded(p.unmeasured(), static_cast<std::size_t>(kSignals), "signal reasons")}) {
    if (!st.ok()) return st;
  }
  Snapshot s;
  s.seq = p.seq();
  s.mono = MonoTime(std::chrono::nanoseconds(p.mono_ns()));
  s.wall = WallTime(
      std::chrono::duration_cast<WallTime::duration>(std::chrono::nanoseconds(p.wall_unix_ns())));
  s.device_time = Nanos(p.device_time_ns());
  s.epoch = p.epoch();
  s.error = p.error();
  s.cores.reserve(static_cast<std::size_t>(p.cores_size()));
  for (const v1::CoreSample& c : p.cores()) CoreFromProto(c, s.cores.emplace_back());
  for (const v1::DeviceSample& d : p.devices()) DeviceFromProto(d, s.devices.emplace_back());
  if (Status st = DecodeRuntimes(p, s); !st.ok()) return st;
  HostFromProto(p.host(), s.host);
  s.unmeasured = UnmeasuredFromProto(p);
  return s;
}

Status SnapshotDecoder::DecodeRuntimes(const v1::Snapshot& p, Snapshot& s) {
  std::map<std::uint32_t, std::pair<std::string, std::shared_ptr<const RuntimeMemory>>> memory;
  for (const v1::RuntimeSample& r : p.runtimes()) {
    if (!s.runtimes.empty() && r.pid() <= s.runtimes.back().pid) {
      return Status::InvalidArgument("snapshot's runtimes are not in ascending pid order (pid " +
                                     std::to_string(r.pid()) + ")");
    }
    RuntimeSample& out = s.runtimes.emplace_back();
    if (Status st = RuntimeFromProto(r, out); !st.ok()) return st;
    std::string bytes = r.memory().SerializeAsString();
    auto previous = memory_.find(r.pid());
    if (previous != memory_.end() && previous->second.first == bytes) {
      out.memory = previous->second.second;
    } else {
      out.memory = MemoryFromProto(r.memory());
    }
    memory.emplace(r.pid(), std::make_pair(std::move(bytes), out.memory));
  }
  memory_ = std::move(memory);
  return Status::Ok();
}

}  // namespace neuronmon::wire
