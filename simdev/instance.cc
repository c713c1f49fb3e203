#include "simdev/instance.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <set>

#include "simdev/memory_model.h"
#include "simdev/rng.h"

namespace neuronmon::simdev {

struct Instance::CoreAccum {
  double busy_ns = 0;
  double flops = 0;
  double effective_flops = 0;
  double hbm_read = 0;
  double hbm_write = 0;
  std::array<double, 2> physical_busy_ns = {0, 0};
};

struct Instance::Worker {
  const RuntimeSpec* spec = nullptr;
  std::uint32_t pid = 0;
  std::string tag;
  WorkerLayout layout;
  Nanos start{0};
  Nanos run_start{0};
  std::optional<Nanos> stop;
  MemoryPlan memory;
  std::size_t job = 0;
  // Runtime-level counters committed from finished episodes.
  double cpu_user_ns = 0;
  double cpu_system_ns = 0;
  ExecutionCounters executions;
  LatencyHistogram total_latency;
  LatencyHistogram device_latency;
  std::array<CollectiveCounters, kCollectiveKinds> collectives;
};

struct Instance::JobState {
  std::unique_ptr<Job> job;
  std::vector<std::size_t> workers;  // indices into workers_, in episode order
  Nanos run_start{0};
  std::optional<Nanos> stop;
  std::uint64_t next_step = 0;
  std::vector<Episode> current;
  bool has_current = false;
  bool finished = false;
};

namespace {

// Adds the collectives of episode `e` that completed by `until` to `out`. A step's operations are
// spread evenly over it, as gradient buckets and parameter gathers run throughout a real step, so
// a window shorter than a step still sees its share.
void AddCollectives(const Episode& e, Nanos until,
                    std::array<CollectiveCounters, kCollectiveKinds>& out) {
  const double length = static_cast<double>((e.end - e.start).count());
  const double done =
      until >= e.end
          ? 1
          : std::clamp(static_cast<double>((until - e.start).count()) / length, 0.0, 1.0);
  for (const CollectiveSample& c : e.collectives) {
    const auto n =
        done >= 1 ? c.count : static_cast<std::uint64_t>(done * static_cast<double>(c.count));
    if (n == 0) continue;
    CollectiveCounters& cc = out[static_cast<std::size_t>(c.kind)];
    cc.kind = c.kind;
    cc.count += n;
    cc.bytes += static_cast<std::uint64_t>(c.bytes_each * static_cast<double>(n));
    cc.busy_ns += static_cast<std::uint64_t>(c.latency * 1e9 * static_cast<double>(n));
    cc.latency.Add(c.latency, n);
  }
  if (e.in_flight) {
    const Nanos waited = std::min(until, e.end) - e.start;
    CollectiveCounters& cc = out[static_cast<std::size_t>(*e.in_flight)];
    cc.kind = *e.in_flight;
    if (waited > Nanos(0)) cc.busy_ns += static_cast<std::uint64_t>(waited.count());
  }
}

std::string ExpandTag(const std::string& pattern, int rank, int node, std::uint32_t pid) {
  if (pattern.empty()) return std::to_string(pid);
  std::string out = pattern;
  for (const auto& [field, value] :
       {std::pair<std::string_view, int>{"{rank}", rank}, {"{node}", node}}) {
    for (std::size_t at; (at = out.find(field)) != std::string::npos;) {
      out.replace(at, field.size(), std::to_string(value));
    }
  }
  return out;
}

// Splits a logical core's busy fraction over its two physical cores with a small skew, keeping
// their mean equal to `busy` and each within [0, 1].
std::pair<double, double> SplitPhysical(double busy, double skew) {
  double p0 = busy * (1 + skew);
  double p1 = busy * (1 - skew);
  if (p0 > 1) {
    p1 += p0 - 1;
    p0 = 1;
  }
  if (p1 > 1) {
    p0 += p1 - 1;
    p1 = 1;
  }
  return {std::max(0.0, p0), std::max(0.0, p1)};
}

std::string GiB(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

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

// A scenario describes per-core behaviour on the instance it was written for. On another instance
// a training job keeps the same work per core: its model and batch scale with the instance's
// compute (and never beyond its HBM), so the scenario's signature survives the move.
void ScaleToInstance(const InstanceSpec& spec, Scenario& scenario) {
  Result<InstanceSpec> written_for = FindPreset(scenario.instance);
  if (!written_for.ok() || written_for->name == spec.name) return;
  const InstanceSpec& ref = *written_for;
  auto devices = [](const RuntimeSpec& r, const InstanceSpec& i) {
    return r.devices.empty() ? i.device_count : static_cast<int>(r.devices.size());
  };
  for (RuntimeSpec& r : scenario.runtimes) {
    auto* t = std::get_if<TrainingSpec>(&r.workload);
    if (t == nullptr) continue;
    // The job's compute and memory on this instance relative to the one it was written for.
    const double compute =
        spec.peak_bf16_flops * devices(r, spec) / (ref.peak_bf16_flops * devices(r, ref));
    const double memory = static_cast<double>(spec.hbm_bytes) * devices(r, spec) /
                          (static_cast<double>(ref.hbm_bytes) * devices(r, ref));
    // The model shrinks with the memory (never beyond it), the batch makes up the compute, so
    // FLOPs per second of step stay as they were: FLOPs ~ parameters x tokens.
    const double model = std::min(compute, memory);
    t->parameters *= model;
    t->tokens_per_step = std::max(1.0, t->tokens_per_step * compute / model);
    // A smaller model keeps fewer activation bytes per token (its layers are narrower).
    t->activation_bytes_per_token *= model;
    // Gradient traffic follows the model's size.
    for (CollectiveSpec& c : t->collectives) c.count *= model;
  }
}

}  // namespace

Instance::Instance(InstanceSpec spec, Scenario scenario, std::uint64_t seed)
    : spec_(std::move(spec)),
      scenario_(std::move(scenario)),
      seed_(seed),
      faults_(scenario_.faults, seed, scenario_.node) {}

Instance::~Instance() = default;

Result<std::unique_ptr<Instance>> Instance::Create(InstanceSpec spec, Scenario scenario,
                                                   std::uint64_t seed) {
  if (scenario.nodes < 1 || scenario.nodes > kMaxNodes || scenario.node < 0 ||
      scenario.node >= scenario.nodes) {
    return Status::InvalidArgument(scenario.name + ": node " + std::to_string(scenario.node) +
                                   " is not one of the cluster's " +
                                   std::to_string(scenario.nodes) + " nodes (0-" +
                                   std::to_string(scenario.nodes - 1) + ")");
  }
  // A cluster's training jobs span every node.
  for (RuntimeSpec& rs : scenario.runtimes) {
    if (auto* t = std::get_if<TrainingSpec>(&rs.workload))
      t->nodes = std::max(t->nodes, scenario.nodes);
  }
  ScaleToInstance(spec, scenario);
  std::unique_ptr<Instance> instance(new Instance(std::move(spec), std::move(scenario), seed));
  Status status = instance->Build();
  if (!status.ok()) return status;
  return instance;
}

Status Instance::Build() {
  workers_.clear();
  jobs_.clear();
  cores_.assign(static_cast<std::size_t>(spec_.core_count()), CoreAccum{});
  baselines_.clear();
  loads_.clear();
  last_read_.reset();
  inventory_ = BuildInventory(spec_, seed_, scenario_.node, scenario_.nodes);
  inventory_.set_scenario(scenario_.name);
  const int cpd = spec_.cores_per_device();
  for (std::size_t i = 0; i < scenario_.faults.size(); ++i) {
    const FaultSpec& f = scenario_.faults[i];
    if (f.node >= scenario_.nodes) {
      return Status::InvalidArgument(scenario_.name + ": faults[" + std::to_string(i) + "]: node " +
                                     std::to_string(f.node) + " is not one of the cluster's " +
                                     std::to_string(scenario_.nodes) +
                                     " nodes (set \"nodes\" or --nodes)");
    }
    const int d = f.device;
    if (d >= spec_.device_count) {
      return Status::InvalidArgument(scenario_.name + ": faults[" + std::to_string(i) +
                                     "]: device " + std::to_string(d) + " does not exist on " +
                                     spec_.name + " (devices 0-" +
                                     std::to_string(spec_.device_count - 1) + ")");
    }
  }
  std::set<std::uint32_t> pids;
  for (std::size_t r = 0; r < scenario_.runtimes.size(); ++r) {
    const RuntimeSpec& rs = scenario_.runtimes[r];
    const std::string where =
        scenario_.name + ": runtimes[" + std::to_string(r) + "] (" + rs.name + ")";
    std::vector<int> devices = rs.devices;
    if (devices.empty()) {
      for (int d = 0; d < spec_.device_count; ++d) devices.push_back(d);
    }
    for (int d : devices) {
      if (d >= spec_.device_count) {
        return Status::InvalidArgument(where + ": device " + std::to_string(d) +
                                       " does not exist on " + spec_.name + " (devices 0-" +
                                       std::to_string(spec_.device_count - 1) + ")");
      }
    }
    std::vector<WorkerLayout> layouts;
    auto cores_of = [&](int d) {
      std::vector<std::uint32_t> c;
      for (int k = 0; k < cpd; ++k) c.push_back(static_cast<std::uint32_t>(d * cpd + k));
      return c;
    };
    if (rs.workers == Workers::kSingle) {
      WorkerLayout w;
      w.devices = devices;
      for (int d : devices) {
        for (std::uint32_t c : cores_of(d)) w.cores.push_back(c);
      }
      layouts.push_back(std::move(w));
    } else {
      for (int d : devices) {
        if (rs.workers == Workers::kPerDevice) {
          layouts.push_back({0, {d}, cores_of(d)});
        } else {
          for (std::uint32_t c : cores_of(d)) layouts.push_back({0, {d}, {c}});
        }
      }
    }
    const std::optional<Nanos> exit = faults_.RuntimeExit(rs.name);
    std::optional<Nanos> stop = rs.stop;
    if (exit && (!stop || *exit < *stop)) stop = exit;
    double total_cores = 0;
    for (const WorkerLayout& w : layouts) total_cores += static_cast<double>(w.cores.size());
    if (const auto* t = std::get_if<TrainingSpec>(&rs.workload)) total_cores *= t->nodes;

    std::uint32_t pid =
        rs.pid != 0
            ? rs.pid
            : static_cast<std::uint32_t>(20000 + Hash(seed_, kStreamIdentity, 1000 + r) % 900000);
    JobState job;
    job.run_start = rs.start + rs.load_duration;
    job.stop = stop;
    JobContext ctx{&spec_,         &rs,
                   &faults_,       {},
                   seed_,          Hash(seed_, kStreamStep, r + 1),
                   scenario_.node, std::get_if<TrainingSpec>(&rs.workload) ? scenario_.nodes : 1};
    for (std::size_t i = 0; i < layouts.size(); ++i) {
      while (pids.count(pid)) ++pid;
      pids.insert(pid);
      layouts[i].rank = static_cast<int>(i);
      Worker w;
      w.spec = &rs;
      w.pid = pid;
      w.tag = ExpandTag(rs.tag, static_cast<int>(i), scenario_.node, pid);
      w.layout = layouts[i];
      w.start = rs.start;
      w.run_start = job.run_start;
      w.stop = stop;
      w.job = jobs_.size();
      w.memory = PlanMemory(spec_, rs, w.layout, total_cores, 10001 + static_cast<std::uint32_t>(i),
                            seed_);
      const double per_core = static_cast<double>(spec_.hbm_bytes) / cpd;
      if (static_cast<double>(w.memory.largest_core_bytes) > per_core) {
        return Status::InvalidArgument(
            where + ": the model needs " + GiB(static_cast<double>(w.memory.largest_core_bytes)) +
            " per NeuronCore but a " + spec_.name + " core has " + GiB(per_core) + " of HBM");
      }
      for (std::uint32_t c : w.layout.cores) {
        for (const Worker& other : workers_) {
          const bool overlap =
              (!other.stop || *other.stop > w.start) && (!w.stop || *w.stop > other.start);
          if (overlap && std::count(other.layout.cores.begin(), other.layout.cores.end(), c)) {
            return Status::InvalidArgument(where + ": NeuronCore " + std::to_string(c) +
                                           " is already held by runtime \"" + other.spec->name +
                                           "\"");
          }
        }
      }
      job.workers.push_back(workers_.size());
      ctx.workers.push_back(w.layout);
      workers_.push_back(std::move(w));
      ++pid;
    }
    job.job = MakeJob(std::move(ctx));
    jobs_.push_back(std::move(job));
  }
  return Status::Ok();
}

void Instance::Restart() { (void)Build(); }

bool Instance::Alive(const Worker& w, Nanos t) const {
  return t >= w.start && (!w.stop || t < *w.stop);
}

void Instance::Integrate(const Episode& e, const Worker& w, Nanos until,
                         std::vector<CoreAccum>& cores, double* cpu_user_ns,
                         double* cpu_system_ns) const {
  const bool physical = spec_.lnc > 1;
  for (const Interval& in : e.intervals) {
    const Nanos b = std::min(in.end, until);
    if (b <= in.start) break;
    const double ns = static_cast<double>((b - in.start).count());
    const double s = ns * 1e-9;
    *cpu_user_ns += in.rates.cpu_user * ns;
    *cpu_system_ns += in.rates.cpu_system * ns;
    for (std::size_t k = 0; k < w.layout.cores.size(); ++k) {
      CoreAccum& c = cores[w.layout.cores[k]];
      const double busy = std::clamp(in.rates.busy * (1 + e.core_jitter[k]), 0.0, 1.0);
      c.busy_ns += busy * ns;
      // A core's FLOPs follow its own busy time, jitter included, as its utilization does.
      const double share = in.rates.busy > 0 ? busy / in.rates.busy : 1.0;
      c.flops += in.rates.flops * share * s;
      c.effective_flops += in.rates.effective_flops * share * s;
      c.hbm_read += in.rates.hbm_read * s;
      c.hbm_write += in.rates.hbm_write * s;
      if (physical) {
        const auto [p0, p1] = SplitPhysical(busy, e.physical_skew[k]);
        c.physical_busy_ns[0] += p0 * ns;
        c.physical_busy_ns[1] += p1 * ns;
      }
    }
  }
}

void Instance::Commit(JobState& job) {
  const Nanos until = job.stop ? std::min(job.current[0].end, *job.stop) : job.current[0].end;
  const bool complete = until >= job.current[0].end;
  for (std::size_t i = 0; i < job.workers.size(); ++i) {
    Worker& w = workers_[job.workers[i]];
    const Episode& e = job.current[i];
    Integrate(e, w, until, cores_, &w.cpu_user_ns, &w.cpu_system_ns);
    AddCollectives(e, until, w.collectives);
    if (!complete) continue;  // the process exited before the step finished
    for (const ExecutionSample& x : e.executions) {
      w.executions.completed += x.count;
      w.executions.failed_to_queue += x.failed_to_queue;
      w.total_latency.Add(x.total_latency, x.count);
      w.device_latency.Add(x.device_latency, x.count);
    }
  }
}

void Instance::Advance(Nanos t) {
  for (JobState& job : jobs_) {
    if (job.finished || t <= job.run_start) continue;
    if (!job.has_current) {
      if (job.stop && job.run_start >= *job.stop) {
        job.finished = true;
        continue;
      }
      job.job->Step(job.next_step++, job.run_start, job.current);
      job.has_current = true;
    }
    while (job.current[0].end <= t) {
      Commit(job);
      const Nanos next = job.current[0].end;
      if (job.stop && next >= *job.stop) {
        job.has_current = false;
        job.finished = true;
        break;
      }
      job.job->Step(job.next_step++, next, job.current);
    }
  }
}

Snapshot Instance::RawRead(Nanos t) {
  Advance(t);
  Snapshot s;
  s.device_time = t;
  std::vector<CoreAccum> cores = cores_;
  std::vector<std::array<double, 2>> cpu(workers_.size());
  std::vector<std::array<CollectiveCounters, kCollectiveKinds>> collectives(workers_.size());
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    cpu[i] = {workers_[i].cpu_user_ns, workers_[i].cpu_system_ns};
    collectives[i] = workers_[i].collectives;
  }
  for (const JobState& job : jobs_) {
    if (!job.has_current) continue;
    const Nanos until = job.stop ? std::min(t, *job.stop) : t;
    for (std::size_t i = 0; i < job.workers.size(); ++i) {
      const std::size_t w = job.workers[i];
      Integrate(job.current[i], workers_[w], until, cores, &cpu[w][0], &cpu[w][1]);
      AddCollectives(job.current[i], until, collectives[w]);
    }
  }
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
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const Worker& w = workers_[i];
    if (!Alive(w, t)) continue;
    RuntimeSample r;
    r.pid = w.pid;
    r.tag = w.tag;
    r.cores = w.layout.cores;
    r.executions = w.executions;
    r.total_latency = w.total_latency;
    r.device_latency = w.device_latency;
    r.cpu_user_ns = static_cast<std::uint64_t>(cpu[i][0]);
    r.cpu_system_ns = static_cast<std::uint64_t>(cpu[i][1]);
    r.collectives = std::move(collectives[i]);
    for (int k = 0; k < kCollectiveKinds; ++k) {
      r.collectives[static_cast<std::size_t>(k)].kind = static_cast<CollectiveKind>(k);
    }
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
    if (t < w.run_start) {
      r.memory = LoadingMemory(w, t);
    } else {
      const JobState& job = jobs_[w.job];
      const bool running = job.has_current && job.current[0].running && r.error.empty();
      r.memory = Grown(w, running ? w.memory.running : w.memory.stalled, t);
    }
    s.runtimes.push_back(std::move(r));
  }
  std::sort(s.runtimes.begin(), s.runtimes.end(),
            [](const RuntimeSample& a, const RuntimeSample& b) { return a.pid < b.pid; });
  return s;
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
  auto next_end = ends.begin();
  const auto capture = [&](Nanos at) {
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
  };
  while (baselines_.size() < resets.size() && resets[baselines_.size()] <= t) {
    const Nanos reset = resets[baselines_.size()];
    while (next_end != ends.end() && *next_end < reset) capture(*next_end++);
    if (next_end != ends.end() && *next_end == reset) {
      baselines_.push_back(capture(*next_end++));
    } else {
      baselines_.push_back(RawRead(reset));
    }
  }
  while (next_end != ends.end()) capture(*next_end++);
  Snapshot s = RawRead(t);
  FillPower(s, t);
  FillDeviceMemory(s, t);
  if (!baselines_.empty()) Subtract(s, baselines_.back());
  s.epoch = baselines_.size();
  last_read_ = t;
  return s;
}

namespace {

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
