// Instance's reads: the Snapshot at a time (the committed counters, the current steps, faults,
// power and memory), the inventory and the scenario's expectations.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

#include "simdev/instance.h"
#include "simdev/instance_state.h"
#include "simdev/memory_model.h"
#include "simdev/rng.h"

namespace neuronmon::simdev {

struct Instance::Totals {
  std::vector<CoreAccum> cores;
  std::vector<std::array<double, 2>> cpu;  // per worker: user and system ns
  std::vector<Collectives> collectives;    // per worker
};

namespace {

// Executions that hit a hardware error (not the events the driver reports on their own).
void AddHardwareErrors(ExecutionCounters& e, const HardwareErrors& now,
                       const HardwareErrors& before) {
  const HardwareErrors d = now.Minus(before);
  const std::uint64_t hard =  // (uncorrectable ECC: AddEcc)
      d.mem_ecc_repairable + d.nc_uncorrectable + d.hbm_uncorrectable + d.dma_abort + d.collectives;
  e.hardware += hard;
  e.completed_with_err += hard;
}

// The interval the driver's power reading covers at `t`: the last whole minute, refreshed once a
// minute (in the first minute, every second so that a new instance has a reading). Empty (from ==
// to) before the first second.
std::pair<Nanos, Nanos> PowerInterval(Nanos t) {
  using std::chrono::minutes;
  using std::chrono::seconds;
  if (t < minutes(1)) return {Nanos(0), std::chrono::floor<seconds>(t)};
  const Nanos to = std::chrono::floor<minutes>(t);
  return {to - minutes(1), to};
}

void AddEcc(ExecutionCounters& e, const EccCounters& now, const EccCounters& before) {
  e.transient +=
      (now.mem_corrected - before.mem_corrected) + (now.sram_corrected - before.sram_corrected);
  const std::uint64_t hard = (now.mem_uncorrected - before.mem_uncorrected) +
                             (now.sram_uncorrected - before.sram_uncorrected);
  e.hardware += hard;
  e.completed_with_err += hard;
}

// Counters restart from zero at a device reset: subtract the counters at the reset.
void Subtract(Snapshot& s, const Snapshot& base) {
  auto sub = [](std::uint64_t& x, std::uint64_t y) { x = x >= y ? x - y : 0; };
  for (std::size_t c = 0; c < s.cores.size() && c < base.cores.size(); ++c) {
    sub(s.cores[c].busy_ns, base.cores[c].busy_ns);
    s.cores[c].flops = std::max(0.0, s.cores[c].flops - base.cores[c].flops);
    s.cores[c].effective_flops =
        std::max(0.0, s.cores[c].effective_flops - base.cores[c].effective_flops);
    for (std::size_t p = 0; p < s.cores[c].physical_busy_ns.size(); ++p) {
      sub(s.cores[c].physical_busy_ns[p], base.cores[c].physical_busy_ns[p]);
    }
  }
  for (std::size_t d = 0; d < s.devices.size() && d < base.devices.size(); ++d) {
    sub(s.devices[d].hbm_read_bytes, base.devices[d].hbm_read_bytes);
    sub(s.devices[d].hbm_write_bytes, base.devices[d].hbm_write_bytes);
    s.devices[d].ecc = s.devices[d].ecc.Minus(base.devices[d].ecc);
    s.devices[d].errors = s.devices[d].errors.Minus(base.devices[d].errors);
  }
  for (RuntimeSample& r : s.runtimes) {
    auto it = std::find_if(base.runtimes.begin(), base.runtimes.end(),
                           [&](const RuntimeSample& b) { return b.pid == r.pid; });
    if (it == base.runtimes.end()) continue;
    r.executions = r.executions.Minus(it->executions);
    r.total_latency = r.total_latency.Minus(it->total_latency);
    r.device_latency = r.device_latency.Minus(it->device_latency);
    sub(r.cpu_user_ns, it->cpu_user_ns);
    sub(r.cpu_system_ns, it->cpu_system_ns);
    for (int k = 0; k < kCollectiveKinds; ++k) {
      CollectiveCounters& c = r.collectives[static_cast<std::size_t>(k)];
      const CollectiveCounters& b = it->collectives[static_cast<std::size_t>(k)];
      sub(c.count, b.count);
      sub(c.bytes, b.bytes);
      sub(c.busy_ns, b.busy_ns);
      c.latency = c.latency.Minus(b.latency);
    }
  }
}

// What the scenario says of who runs a runtime; a Slurm array task "4242_7" is job 4242, task 7.
void FillAttribution(const RuntimeSpec& spec, v1::Attribution& a) {
  a.set_user(spec.user);
  a.set_pod(spec.pod);
  a.set_namespace_(spec.pod_namespace);
  a.set_container(spec.container);
  const std::size_t underscore = spec.slurm_job.find('_');
  if (underscore == std::string::npos) {
    a.set_slurm_job_id(spec.slurm_job);
  } else {
    a.set_slurm_job_id(spec.slurm_job.substr(0, underscore));
    a.set_slurm_array_job_id(spec.slurm_job.substr(0, underscore));
    a.set_slurm_array_task_id(spec.slurm_job.substr(underscore + 1));
  }
}

}  // namespace

Snapshot Instance::RawRead(Nanos t) {
  Advance(t);
  Snapshot s;
  s.device_time = t;
  Totals totals = TotalsAt(t);
  FillCores(s, totals.cores);
  FillDevices(s, totals.cores, t);
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (!Alive(workers_[i], t)) continue;
    s.runtimes.push_back(RuntimeAt(i, t, totals, s));
  }
  std::sort(s.runtimes.begin(), s.runtimes.end(),
            [](const RuntimeSample& a, const RuntimeSample& b) { return a.pid < b.pid; });
  return s;
}

Instance::Totals Instance::TotalsAt(Nanos t) const {
  Totals out;
  out.cores = cores_;
  out.cpu.resize(workers_.size());
  out.collectives.resize(workers_.size());
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    out.cpu[i] = {workers_[i].cpu_user_ns, workers_[i].cpu_system_ns};
    out.collectives[i] = workers_[i].collectives;
  }
  for (const JobState& job : jobs_) {
    if (!job.has_current) continue;
    const Nanos until = job.stop ? std::min(t, *job.stop) : t;
    for (std::size_t i = 0; i < job.workers.size(); ++i) {
      const std::size_t w = job.workers[i];
      Integrate(job.current[i], workers_[w], until, out.cores, &out.cpu[w][0], &out.cpu[w][1]);
      AddCollectives(job.current[i], until, out.collectives[w]);
    }
  }
  return out;
}

void Instance::FillCores(Snapshot& s, const std::vector<CoreAccum>& cores) const {
  const bool physical = spec_.lnc > 1;
  s.cores.resize(cores.size());
  for (std::size_t c = 0; c < cores.size(); ++c) {
    CoreCounters& out = s.cores[c];
    out.busy_ns = static_cast<std::uint64_t>(cores[c].busy_ns);
    out.flops = cores[c].flops;
    out.effective_flops = cores[c].effective_flops;
    if (physical) {
      out.physical_busy_ns = {static_cast<std::uint64_t>(cores[c].physical_busy_ns[0]),
                              static_cast<std::uint64_t>(cores[c].physical_busy_ns[1])};
    }
  }
}

void Instance::FillDevices(Snapshot& s, const std::vector<CoreAccum>& cores, Nanos t) const {
  const int cpd = spec_.cores_per_device();
  s.devices.resize(static_cast<std::size_t>(spec_.device_count));
  for (int d = 0; d < spec_.device_count; ++d) {
    DeviceCounters& dev = s.devices[static_cast<std::size_t>(d)];
    dev.present = !faults_.DeviceLost(d, t);
    double read = 0, write = 0;
    for (int k = 0; k < cpd; ++k) {
      read += cores[static_cast<std::size_t>(d * cpd + k)].hbm_read;
      write += cores[static_cast<std::size_t>(d * cpd + k)].hbm_write;
    }
    dev.hbm_read_bytes = static_cast<std::uint64_t>(read);
    dev.hbm_write_bytes = static_cast<std::uint64_t>(write);
    dev.ecc = faults_.Ecc(d, t);
    dev.errors = faults_.HwErrors(d, t);
    dev.power = DevicePower{dev.present ? "no reading yet" : "device is not responding"};
  }
}

RuntimeSample Instance::RuntimeAt(std::size_t i, Nanos t, Totals& totals, const Snapshot& s) const {
  const Worker& w = workers_[i];
  RuntimeSample r;
  r.pid = w.pid;
  r.tag = w.tag;
  r.cores = w.layout.cores;
  r.executions = w.executions;
  r.total_latency = w.total_latency;
  r.device_latency = w.device_latency;
  r.cpu_user_ns = static_cast<std::uint64_t>(totals.cpu[i][0]);
  r.cpu_system_ns = static_cast<std::uint64_t>(totals.cpu[i][1]);
  r.collectives = std::move(totals.collectives[i]);
  for (int k = 0; k < kCollectiveKinds; ++k) {
    r.collectives[static_cast<std::size_t>(k)].kind = static_cast<CollectiveKind>(k);
  }
  AddFaultCounts(w, t, s, r);
  if (t < w.run_start) {
    r.memory = LoadingMemory(w, t);
  } else {
    const JobState& job = jobs_[w.job];
    const bool running = job.has_current && job.current[0].running && r.error.empty();
    r.memory = Grown(w, running ? w.memory.running : w.memory.stalled, t);
  }
  return r;
}

void Instance::AddFaultCounts(const Worker& w, Nanos t, const Snapshot& s, RuntimeSample& r) const {
  for (int d : w.layout.devices) {
    AddEcc(r.executions, faults_.Ecc(d, t), faults_.Ecc(d, w.start));
    AddHardwareErrors(r.executions, faults_.HwErrors(d, t), faults_.HwErrors(d, w.start));
    if (!s.devices[static_cast<std::size_t>(d)].present && r.error.empty()) {
      r.error = "nd" + std::to_string(d) + ": device is not responding";
    }
  }
  const std::uint64_t nan =
      faults_.NanErrors(w.spec->name, t) - faults_.NanErrors(w.spec->name, w.start);
  r.executions.numerical += nan;
  r.executions.completed_with_num_err += nan;
  r.executions.timed_out +=
      faults_.Timeouts(w.spec->name, t) - faults_.Timeouts(w.spec->name, w.start);
}

std::shared_ptr<const RuntimeMemory> Instance::LoadingMemory(const Worker& w, Nanos t) const {
  const double f = ToSeconds(t - w.start) / std::max(1e-9, ToSeconds(w.run_start - w.start));
  return Grown(w, Loading(*w.memory.running, f), t);
}

std::shared_ptr<const RuntimeMemory> Instance::Grown(const Worker& w,
                                                     std::shared_ptr<const RuntimeMemory> memory,
                                                     Nanos t) const {
  double limit = 1;
  const double grown = faults_.MemoryGrowth(w.spec->name, t, &limit);
  if (grown <= 0 || memory->cores.empty()) return memory;
  // Spread over its cores; no core beyond `limit` of its share of the device's HBM, counting what
  // it holds already (a core belongs to one runtime, so neither does the device).
  const double devices = static_cast<double>(std::max<std::size_t>(1, w.layout.devices.size()));
  const double per_core = grown * devices / static_cast<double>(memory->cores.size());
  const double core_room =
      limit * static_cast<double>(spec_.hbm_bytes) / std::max(1, spec_.cores_per_device());
  constexpr double kMiB = 1 << 20;  // grown in whole MiB, as an allocator hands out pages
  auto out = std::make_shared<RuntimeMemory>(*memory);
  bool changed = false;
  for (CoreMemory& c : out->cores) {
    const double room = std::max(0.0, core_room - static_cast<double>(c.Total()));
    const double add = std::floor(std::min(per_core, room) / kMiB) * kMiB;
    if (add <= 0) continue;
    c.tensors += static_cast<std::uint64_t>(add);
    changed = true;
  }
  return changed ? out : memory;
}

void Instance::FillDeviceMemory(Snapshot& s, Nanos t) const {
  const std::size_t cpd = static_cast<std::size_t>(spec_.cores_per_device());
  using Categories = std::array<std::uint64_t, kDeviceMemoryCategories.size()>;
  const auto add = [](Categories& to, const CoreMemory& m, bool keep_max) {
    for (const auto& [name, bytes] : m.ByCategory()) {
      std::uint64_t& v = to[DeviceMemoryCategory(name)];
      v = keep_max ? std::max(v, bytes) : v + bytes;
    }
  };
  std::vector<Categories> used(s.devices.size(), Categories{});
  for (const RuntimeSample& r : s.runtimes) {
    if (r.memory == nullptr) continue;
    for (const CoreMemory& m : r.memory->cores) {
      if (m.core / cpd < used.size()) add(used[m.core / cpd], m, false);
    }
  }
  // Per logical core, the most each category held since the last reset.
  Nanos since{0};
  for (Nanos reset : faults_.Resets()) {
    if (reset <= t) since = reset;
  }
  std::vector<Categories> core_peak(s.devices.size() * cpd, Categories{});
  for (const Worker& w : workers_) {
    if (w.start > t || (w.stop && *w.stop <= since) || !w.memory.running) continue;
    const Nanos at = w.stop ? std::min(t, *w.stop - Nanos(1)) : t;
    std::shared_ptr<const RuntimeMemory> m =
        at < w.run_start ? LoadingMemory(w, at) : Grown(w, w.memory.running, at);
    for (const CoreMemory& c : m->cores) {
      if (c.core < core_peak.size()) add(core_peak[c.core], c, true);
    }
  }
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    DeviceMemory& out = s.devices[d].memory;
    out.measured = true;
    out.used = used[d];
    for (std::size_t k = 0; k < cpd; ++k) {
      for (std::size_t i = 0; i < out.peak.size(); ++i) out.peak[i] += core_peak[d * cpd + k][i];
    }
    for (std::size_t i = 0; i < out.peak.size(); ++i)
      out.peak[i] = std::max(out.peak[i], out.used[i]);
  }
}

void Instance::FillPower(Snapshot& s, Nanos t) const {
  const auto [from, to] = PowerInterval(t);
  const auto a = loads_.find(from.count()), b = loads_.find(to.count());
  if (from == to || a == loads_.end() || b == loads_.end()) return;
  const double seconds = ToSeconds(to - from);
  const int cpd = spec_.cores_per_device();
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    DeviceCounters& dev = s.devices[d];
    if (!dev.present || d >= a->second.busy_ns.size() || d >= b->second.busy_ns.size()) continue;
    const double busy = std::clamp(
        (b->second.busy_ns[d] - a->second.busy_ns[d]) / (1e9 * seconds * std::max(1, cpd)), 0.0,
        1.0);
    const double hbm = std::clamp((b->second.hbm_bytes[d] - a->second.hbm_bytes[d]) /
                                      (seconds * std::max(1.0, spec_.hbm_peak_bytes_per_second)),
                                  0.0, 1.0);
    const double load = std::min(1.0, 0.8 * busy + 0.2 * hbm);
    // A few percent of noise per interval and device, as a real sensor's.
    const double noise = 1 + 0.06 * (Uniform(seed_, kStreamPower,
                                             static_cast<std::uint64_t>(to.count() / 1000000), d) -
                                     0.5);
    const double avg =
        std::min(100.0, noise * (spec_.power_idle_percent +
                                 (spec_.power_full_percent - spec_.power_idle_percent) * load));
    const auto round2 = [](double v) { return std::round(v * 100) / 100; };
    dev.power.unavailable.clear();
    dev.power.average_percent = round2(avg);
    dev.power.min_percent = round2(0.05 * avg);
    dev.power.max_percent = round2(std::min(100.0, 1.3 * avg + 1.3));
  }
}

Snapshot Instance::Read(Nanos t) {
  if (last_read_ && t < *last_read_) Restart();
  const std::vector<Nanos>& resets = faults_.Resets();
  // Reads at the resets passed (baselines) and at the ends of the power interval not yet seen,
  // in time order: RawRead only moves forward.
  const std::vector<Nanos> ends = PowerEndsToCapture(t);
  auto next_end = ends.begin();
  while (baselines_.size() < resets.size() && resets[baselines_.size()] <= t) {
    const Nanos reset = resets[baselines_.size()];
    while (next_end != ends.end() && *next_end < reset) CaptureLoad(*next_end++);
    if (next_end != ends.end() && *next_end == reset) {
      baselines_.push_back(CaptureLoad(*next_end++));
    } else {
      baselines_.push_back(RawRead(reset));
    }
  }
  while (next_end != ends.end()) CaptureLoad(*next_end++);
  Snapshot s = RawRead(t);
  FillPower(s, t);
  FillDeviceMemory(s, t);
  if (!baselines_.empty()) Subtract(s, baselines_.back());
  s.epoch = baselines_.size();
  last_read_ = t;
  return s;
}

std::vector<Nanos> Instance::PowerEndsToCapture(Nanos t) {
  const auto interval = PowerInterval(t);
  const Nanos power_from = interval.first;
  const Nanos power_to = interval.second;
  std::erase_if(loads_, [&](const auto& l) {
    return l.first != power_from.count() && l.first != power_to.count();
  });
  std::vector<Nanos> ends;
  for (Nanos e : {power_from, power_to}) {
    if (!loads_.count(e.count()) && (ends.empty() || ends.back() != e)) ends.push_back(e);
  }
  return ends;
}

Snapshot Instance::CaptureLoad(Nanos at) {
  const Snapshot raw = RawRead(at);
  DeviceLoad& load = loads_[at.count()];
  const int cpd = spec_.cores_per_device();
  for (std::size_t d = 0; d < raw.devices.size(); ++d) {
    double busy = 0;
    for (int k = 0; k < cpd; ++k) {
      const std::size_t c = d * static_cast<std::size_t>(cpd) + static_cast<std::size_t>(k);
      if (c < raw.cores.size()) busy += static_cast<double>(raw.cores[c].busy_ns);
    }
    load.busy_ns.push_back(busy);
    load.hbm_bytes.push_back(
        static_cast<double>(raw.devices[d].hbm_read_bytes + raw.devices[d].hbm_write_bytes));
  }
  return raw;
}

v1::Inventory Instance::Inventory(Nanos t) const {
  v1::Inventory inv = inventory_;
  std::vector<const Worker*> alive;
  for (const Worker& w : workers_) {
    if (Alive(w, t)) alive.push_back(&w);
  }
  std::sort(alive.begin(), alive.end(),
            [](const Worker* a, const Worker* b) { return a->pid < b->pid; });
  for (const Worker* w : alive) {
    v1::Process* p = inv.add_processes();
    p->set_pid(w->pid);
    p->set_tag(w->tag);
    p->set_command(w->spec->command);
    p->set_runtime_version(w->spec->runtime_version);
    p->set_framework_version(w->spec->framework_version);
    FillAttribution(*w->spec, *p->mutable_attribution());
    for (int d : w->layout.devices) p->add_device_indices(static_cast<std::uint32_t>(d));
    for (std::uint32_t c : w->layout.cores) p->add_core_ids(c);
  }
  return inv;
}

std::vector<ExpectedVerdict> Instance::Expected(Nanos t) const {
  auto at = [t](const std::vector<Expectation>& list, int rank) {
    std::string d;
    for (const Expectation& e : list) {
      const bool mine = e.ranks.empty() || std::count(e.ranks.begin(), e.ranks.end(), rank) > 0;
      if (e.from <= t && mine) d = e.diagnosis;
    }
    return d;
  };
  std::vector<ExpectedVerdict> out;
  for (const Worker& w : workers_) {
    if (Alive(w, t)) out.push_back({w.pid, w.tag, at(w.spec->expect, w.layout.rank)});
  }
  out.push_back({0, "instance", at(scenario_.instance_expect, 0)});
  return out;
}

}  // namespace neuronmon::simdev
