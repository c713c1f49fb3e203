#include "simdev/instance.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>

#include "simdev/instance_state.h"
#include "simdev/memory_model.h"
#include "simdev/rng.h"
#include "simdev/scenario_library.h"

namespace neuronmon::simdev {

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

namespace {

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

// Every fault names a node of the cluster and a device of the instance.
Status CheckFaults(const Scenario& scenario, const InstanceSpec& spec) {
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultSpec& f = scenario.faults[i];
    if (f.node >= scenario.nodes) {
      return Status::InvalidArgument(scenario.name + ": faults[" + std::to_string(i) + "]: node " +
                                     std::to_string(f.node) + " is not one of the cluster's " +
                                     std::to_string(scenario.nodes) +
                                     " nodes (set \"nodes\" or --nodes)");
    }
    const int d = f.device;
    if (d >= spec.device_count) {
      return Status::InvalidArgument(scenario.name + ": faults[" + std::to_string(i) +
                                     "]: device " + std::to_string(d) + " does not exist on " +
                                     spec.name + " (devices 0-" +
                                     std::to_string(spec.device_count - 1) + ")");
    }
  }
  return Status::Ok();
}

// The devices a runtime runs on: those it names, else all of the instance's.
Result<std::vector<int>> RuntimeDevices(const InstanceSpec& spec, const RuntimeSpec& rs,
                                        const std::string& where) {
  std::vector<int> devices = rs.devices;
  if (devices.empty()) {
    for (int d = 0; d < spec.device_count; ++d) devices.push_back(d);
  }
  for (int d : devices) {
    if (d >= spec.device_count) {
      return Status::InvalidArgument(where + ": device " + std::to_string(d) +
                                     " does not exist on " + spec.name + " (devices 0-" +
                                     std::to_string(spec.device_count - 1) + ")");
    }
  }
  return devices;
}

std::vector<std::uint32_t> CoresOf(int d, int cpd) {
  std::vector<std::uint32_t> c;
  for (int k = 0; k < cpd; ++k) c.push_back(static_cast<std::uint32_t>(d * cpd + k));
  return c;
}

// One layout per worker: a single worker on every device, one per device, or one per core.
std::vector<WorkerLayout> LayoutWorkers(const RuntimeSpec& rs, const std::vector<int>& devices,
                                        int cpd) {
  std::vector<WorkerLayout> layouts;
  if (rs.workers == Workers::kSingle) {
    WorkerLayout w;
    w.devices = devices;
    for (int d : devices) {
      for (std::uint32_t c : CoresOf(d, cpd)) w.cores.push_back(c);
    }
    layouts.push_back(std::move(w));
    return layouts;
  }
  for (int d : devices) {
    if (rs.workers == Workers::kPerDevice) {
      layouts.push_back({0, {d}, CoresOf(d, cpd)});
    } else {
      for (std::uint32_t c : CoresOf(d, cpd)) layouts.push_back({0, {d}, {c}});
    }
  }
  return layouts;
}

// When the runtime's processes stop: at its own stop, or at an exit fault before it.
std::optional<Nanos> StopOf(const RuntimeSpec& rs, const FaultPlan& faults) {
  const std::optional<Nanos> exit = faults.RuntimeExit(rs.name);
  std::optional<Nanos> stop = rs.stop;
  if (exit && (!stop || *exit < *stop)) stop = exit;
  return stop;
}

// The cores the runtime's job spans, on every node of the cluster for a training job.
double JobCores(const std::vector<WorkerLayout>& layouts, const RuntimeSpec& rs) {
  double total_cores = 0;
  for (const WorkerLayout& w : layouts) total_cores += static_cast<double>(w.cores.size());
  if (const auto* t = std::get_if<TrainingSpec>(&rs.workload)) total_cores *= t->nodes;
  return total_cores;
}

}  // namespace

Instance::Instance(InstanceSpec spec, Scenario scenario, std::uint64_t seed)
    : spec_(std::move(spec)),
      scenario_(std::move(scenario)),
      seed_(seed),
      faults_(scenario_.faults, seed, scenario_.node) {}

Instance::~Instance() = default;

Result<std::unique_ptr<Instance>> Instance::Named(std::string_view device,
                                                  std::string_view scenario, std::uint64_t seed) {
  Result<InstanceSpec> spec = ParseDeviceSpec(device);
  if (!spec.ok()) return spec.status();
  Result<Scenario> loaded = LoadScenario(scenario);
  if (!loaded.ok()) return loaded.status();
  return Create(std::move(*spec), std::move(*loaded), seed);
}

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
  if (Status status = CheckFaults(scenario_, spec_); !status.ok()) return status;
  std::set<std::uint32_t> pids;
  for (std::size_t r = 0; r < scenario_.runtimes.size(); ++r) {
    if (Status status = AddRuntime(r, pids); !status.ok()) return status;
  }
  return Status::Ok();
}

Status Instance::AddRuntime(std::size_t r, std::set<std::uint32_t>& pids) {
  const RuntimeSpec& rs = scenario_.runtimes[r];
  const std::string where =
      scenario_.name + ": runtimes[" + std::to_string(r) + "] (" + rs.name + ")";
  Result<std::vector<int>> devices = RuntimeDevices(spec_, rs, where);
  if (!devices.ok()) return devices.status();
  std::vector<WorkerLayout> layouts = LayoutWorkers(rs, *devices, spec_.cores_per_device());
  const double total_cores = JobCores(layouts, rs);
  std::uint32_t pid =
      rs.pid != 0
          ? rs.pid
          : static_cast<std::uint32_t>(20000 + Hash(seed_, kStreamIdentity, 1000 + r) % 900000);
  JobState job;
  job.run_start = rs.start + rs.load_duration;
  job.stop = StopOf(rs, faults_);
  JobContext ctx{&spec_,         &rs,
                 &faults_,       {},
                 seed_,          Hash(seed_, kStreamStep, r + 1),
                 scenario_.node, std::get_if<TrainingSpec>(&rs.workload) ? scenario_.nodes : 1};
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    while (pids.count(pid)) ++pid;
    pids.insert(pid);
    layouts[i].rank = static_cast<int>(i);
    Worker w = NewWorker(rs, i, pid, layouts[i], job, total_cores);
    if (Status status = CheckWorker(w, where); !status.ok()) return status;
    job.workers.push_back(workers_.size());
    ctx.workers.push_back(w.layout);
    workers_.push_back(std::move(w));
    ++pid;
  }
  job.job = MakeJob(std::move(ctx));
  jobs_.push_back(std::move(job));
  return Status::Ok();
}

Instance::Worker Instance::NewWorker(const RuntimeSpec& rs, std::size_t rank, std::uint32_t pid,
                                     const WorkerLayout& layout, const JobState& job,
                                     double total_cores) const {
  Worker w;
  w.spec = &rs;
  w.pid = pid;
  w.tag = ExpandTag(rs.tag, static_cast<int>(rank), scenario_.node, pid);
  w.layout = layout;
  w.start = rs.start;
  w.run_start = job.run_start;
  w.stop = job.stop;
  w.job = jobs_.size();
  w.memory =
      PlanMemory(spec_, rs, w.layout, total_cores, 10001 + static_cast<std::uint32_t>(rank), seed_);
  return w;
}

Status Instance::CheckWorker(const Worker& w, const std::string& where) const {
  const double per_core = static_cast<double>(spec_.hbm_bytes) / spec_.cores_per_device();
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
                                       " is already held by runtime \"" + other.spec->name + "\"");
      }
    }
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

}  // namespace neuronmon::simdev
