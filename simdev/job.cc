#include "simdev/job.h"

#include <algorithm>
#include <cmath>

#include "simdev/collective_model.h"
#include "simdev/fault_plan.h"
#include "simdev/rng.h"

namespace neuronmon::simdev {
namespace {

constexpr double kHbmEfficiency = 0.92;  // achievable fraction of peak HBM bandwidth
constexpr double kUsefulFlops = 0.97;    // effective / executed FLOPs (padding, recompute)
// A NeuronCore is not busy for every nanosecond of a graph execution: kernel launch gaps and DMA
// waits leave it idle a few percent of the time.
constexpr double kComputeBusy = 0.94;

double BytesPerParameter(DType d) { return d == DType::kFp32 ? 4 : d == DType::kFp8 ? 1 : 2; }

// Counts of an event that happens `per_step` times per step, spread exactly over steps.
std::uint64_t CountInStep(double per_step, std::uint64_t index) {
  const auto before = static_cast<std::uint64_t>(std::floor(per_step * static_cast<double>(index)));
  const auto after =
      static_cast<std::uint64_t>(std::floor(per_step * static_cast<double>(index + 1)));
  return after - before;
}

// Fills per-core jitter of one episode (busy multiplier and physical sub-core skew).
void Jitter(Episode& e, std::size_t cores, std::uint64_t seed, std::uint64_t job,
            std::uint64_t step, int rank) {
  e.core_jitter.resize(cores);
  e.physical_skew.resize(cores);
  for (std::size_t c = 0; c < cores; ++c) {
    const std::uint64_t key = (static_cast<std::uint64_t>(rank) << 20) ^ c;
    e.core_jitter[c] = static_cast<float>(0.006 * Triangular(seed, kStreamCore, job ^ key, step));
    e.physical_skew[c] =
        static_cast<float>(0.008 * Triangular(seed, kStreamCore, job ^ key, ~step));
  }
}

// Splits `count` operations into up to three latency samples around `mean` with a floor.
void AddSamples(Episode& e, CollectiveKind kind, std::uint64_t count, double bytes, double mean,
                double floor, double extra, std::uint64_t seed, std::uint64_t key) {
  if (count == 0) return;
  const std::uint64_t samples = std::min<std::uint64_t>(count, 3);
  for (std::uint64_t s = 0; s < samples; ++s) {
    const std::uint64_t n = count / samples + (s < count % samples ? 1 : 0);
    const double spread = std::exp(0.08 * Triangular(seed, kStreamCollective, key, s));
    const double latency = floor + (mean - floor) * spread + extra;
    e.collectives.push_back({kind, n, bytes, latency});
  }
}

CollectiveGroup GroupFor(const InstanceSpec& spec, const JobContext& ctx, int nodes) {
  CollectiveGroup g;
  int devices = 0;
  for (const WorkerLayout& w : ctx.workers) devices += static_cast<int>(w.devices.size());
  if (ctx.workers.size() > 1 && ctx.workers[0].devices == ctx.workers[1].devices) {
    devices = static_cast<int>(ctx.workers[0].devices.size());  // per-core workers share devices
    for (const WorkerLayout& w : ctx.workers) {
      if (w.devices != ctx.workers[0].devices) {
        devices = spec.device_count;
        break;
      }
    }
  }
  const int local_nodes =
      std::max(1, (devices + spec.devices_per_node() - 1) / std::max(1, spec.devices_per_node()));
  g.devices_per_node = std::min(devices, spec.devices_per_node());
  g.nodes = std::max(nodes, local_nodes);
  g.nodes_over_neuronlink = spec.topology == Topology::kUltraServer && nodes <= spec.nodes;
  return g;
}

class TrainingJob final : public Job {
 public:
  TrainingJob(JobContext ctx, TrainingSpec t) : ctx_(std::move(ctx)), t_(std::move(t)) {
    const InstanceSpec& spec = *ctx_.spec;
    std::size_t cores = 0;
    for (const WorkerLayout& w : ctx_.workers) cores += w.cores.size();
    cores_total_ = std::max<std::size_t>(1, cores) * static_cast<std::size_t>(t_.nodes);
    const double flops_per_token = t_.flops_per_token > 0 ? t_.flops_per_token : 6 * t_.parameters;
    flops_per_core_ = flops_per_token * t_.tokens_per_step / static_cast<double>(cores_total_);
    t_flop_ = flops_per_core_ / (PeakFlopsPerCore(spec, t_.dtype) * t_.compute_efficiency);
    hbm_per_core_ = flops_per_core_ / t_.arithmetic_intensity;
    t_hbm_ = hbm_per_core_ / (HbmBandwidthPerCore(spec) * kHbmEfficiency);
    compute_ = std::max(t_flop_, t_hbm_);
    hbm_load_ = hbm_per_core_ / compute_ / HbmBandwidthPerCore(spec);
    params_per_core_ = t_.parameters / static_cast<double>(cores_total_);
    optimizer_ = params_per_core_ * t_.optimizer_bytes_per_parameter /
                 (HbmBandwidthPerCore(spec) * kHbmEfficiency);
    const CollectiveGroup group = GroupFor(spec, ctx_, t_.nodes);
    for (const CollectiveSpec& c : t_.collectives) {
      costs_.push_back(
          EstimateCollective(spec, group, c.kind, c.bytes, c.overlap > 0.5 ? hbm_load_ : 0.1));
    }
  }

  void Step(std::uint64_t index, Nanos start, std::vector<Episode>& out) override {
    out.resize(ctx_.workers.size());
    if (Interrupted(start, out)) return;
    const StepPlan plan = PlanStep(index, start);
    for (std::size_t i = 0; i < out.size(); ++i) FillEpisode(i, index, plan, out[i]);
  }

 private:
  // One step's timing, which its workers' episodes share.
  struct StepPlan {
    Nanos start{0};
    Nanos end{0};
    double slow_network = 1;  // fault factors
    double hbm_traffic = 1;
    double input_wait = 0;
    double host_overhead = 0;
    double c_max = 0;       // the slowest worker's compute time, on any node
    double total_coll = 0;  // the collectives' time in the step ...
    double exposed = 0;     // ... the part of it not hidden behind compute
    double coll_bytes = 0;
    double ckpt = 0;  // checkpoint time; 0 in a step that writes none
  };

  // A step the job cannot take fills `out` with one second of waiting and returns true.
  bool Interrupted(Nanos start, std::vector<Episode>& out) {
    // Lost device: the whole job stalls until it answers again (re-checked every second).
    for (const WorkerLayout& w : ctx_.workers) {
      for (int d : w.devices) {
        if (!ctx_.faults->DeviceLost(d, start)) continue;
        Stall(start, out);
        return true;
      }
    }
    const FaultPlan& faults = *ctx_.faults;
    const std::string& name = ctx_.runtime->name;
    // A hung rank anywhere in the job: no collective completes, so no step does.
    if (const std::optional<Hang> hang = faults.HangOf(name, start)) {
      Hung(start, *hang, out);
      return true;
    }
    // A stalled process holds its cores and submits nothing.
    if (!faults.Stalled(name, start)) return false;
    Stall(start, out);
    return true;
  }

  // Times step `index`, leaving each local worker's compute time in scratch_.
  StepPlan PlanStep(std::uint64_t index, Nanos start) {
    const FaultPlan& faults = *ctx_.faults;
    const std::string& name = ctx_.runtime->name;
    StepPlan p;
    p.start = start;
    const double slow_input = faults.RuntimeFactor(FaultType::kInputSlowdown, name, start);
    p.slow_network = faults.RuntimeFactor(FaultType::kNetworkSlowdown, name, start);
    // More bytes through HBM per step: compute takes the longer of its FLOPs and its bytes.
    p.hbm_traffic = faults.RuntimeFactor(FaultType::kHbmTraffic, name, start);
    const double c_min = ComputeTimes(index, start, p);
    const double input =
        t_.input_seconds * slow_input *
        std::max(0.2, 1 + 0.1 * Normal(ctx_.seed, kStreamInput, ctx_.job_id, index));
    p.input_wait = t_.input_prefetch ? std::max(0.0, input - last_compute_) : input;
    last_compute_ = p.c_max;
    const bool warming = index < static_cast<std::uint64_t>(t_.warmup_steps);
    p.host_overhead = warming ? (t_.warmup_slowdown - 1) * p.c_max : 0;
    CollectiveTimes(c_min, p);
    const bool checkpoint =
        t_.checkpoint_every_steps > 0 &&
        (index + 1) % static_cast<std::uint64_t>(t_.checkpoint_every_steps) == 0;
    p.ckpt = checkpoint ? ToSeconds(t_.checkpoint_duration) : 0;
    const double step = p.input_wait + p.host_overhead + p.c_max + p.exposed + optimizer_ + p.ckpt;
    p.end = start + Seconds(step);
    return p;
  }

  // Fills scratch_ with the local workers' compute times and sets p.c_max; returns the shortest
  // local one.
  double ComputeTimes(std::uint64_t index, Nanos start, StepPlan& p) {
    const std::size_t n = ctx_.workers.size();
    const double base = std::max(t_flop_, t_hbm_ * p.hbm_traffic);
    const double shared = 1 + t_.noise * Normal(ctx_.seed, kStreamStep, ctx_.job_id, index);
    std::vector<double>& compute = scratch_;
    compute.assign(n, 0);
    double c_min = 1e300;
    for (std::size_t i = 0; i < n; ++i) {
      compute[i] = Compute(ctx_.node, i, base, shared, index, start);
      c_min = std::min(c_min, compute[i]);
    }
    // Every node of the cluster waits for the slowest worker of the job, wherever it runs: each
    // node works out the others' compute times from the same seed and fault plan.
    double c_max = *std::max_element(compute.begin(), compute.end());
    for (int node = 0; node < ctx_.nodes; ++node) {
      if (node == ctx_.node) continue;
      for (std::size_t i = 0; i < n; ++i)
        c_max = std::max(c_max, Compute(node, i, base, shared, index, start));
    }
    p.c_max = c_max;
    return c_min;
  }

  // Collectives: totals of this step, the overlapped share hidden behind compute.
  void CollectiveTimes(double c_min, StepPlan& p) const {
    double hidden = 0;
    for (std::size_t k = 0; k < costs_.size(); ++k) {
      const double per_step = t_.collectives[k].count * costs_[k].seconds * p.slow_network;
      p.total_coll += per_step;
      p.exposed += (1 - t_.collectives[k].overlap) * per_step;
      hidden += t_.collectives[k].overlap * per_step;
      p.coll_bytes +=
          t_.collectives[k].count * t_.collectives[k].bytes * BusFactor(t_.collectives[k].kind, 2);
    }
    p.exposed += std::max(0.0, hidden - c_min);
  }

  // Worker i's episode of the step: input, host overhead, compute, waiting for the others and
  // the exposed collectives, the optimizer, a checkpoint.
  void FillEpisode(std::size_t i, std::uint64_t index, const StepPlan& p, Episode& e) const {
    const double compute = scratch_[i];
    e.Clear(p.start, p.end);
    Jitter(e, ctx_.workers[i].cores.size(), ctx_.seed, ctx_.job_id, index, ctx_.workers[i].rank);
    const double wait = p.c_max - compute;
    e.Then(Seconds(p.input_wait), {.cpu_user = t_.dataloader_cpus, .cpu_system = 0.2});
    e.Then(Seconds(p.host_overhead), {.cpu_user = 1.0, .cpu_system = 0.3});
    e.Then(Seconds(compute), {.busy = kComputeBusy,
                              .flops = flops_per_core_ / compute,
                              .effective_flops = kUsefulFlops * flops_per_core_ / compute,
                              .hbm_read = 0.6 * p.hbm_traffic * hbm_per_core_ / compute,
                              .hbm_write = 0.4 * p.hbm_traffic * hbm_per_core_ / compute,
                              .cpu_user = 0.3 + 0.3 * t_.dataloader_cpus,
                              .cpu_system = 0.05});
    const double sync = wait + p.exposed;
    if (sync > 0) {
      // Exposed collectives stream their share of the bytes through HBM; bounded by the DMA
      // share.
      const double moved = p.total_coll > 0 ? p.coll_bytes * p.exposed / p.total_coll : 0;
      const double rate = std::min(moved / sync, 0.2 * HbmBandwidthPerCore(*ctx_.spec));
      e.Then(Seconds(sync),
             {.hbm_read = rate, .hbm_write = rate, .cpu_user = 0.2, .cpu_system = 0.1});
    }
    ThenOptimizer(p, e);
    AddCollectiveSamples(i, index, wait, p, e);
    const double device = compute + optimizer_;
    e.executions.push_back({1, 0, device + sync, device});
  }

  // The optimizer's update, then the checkpoint of a step that writes one.
  void ThenOptimizer(const StepPlan& p, Episode& e) const {
    const double opt_bytes = params_per_core_ * t_.optimizer_bytes_per_parameter;
    e.Then(Seconds(optimizer_), {.busy = 1,
                                 .flops = 12 * params_per_core_ / optimizer_,
                                 .effective_flops = 12 * params_per_core_ / optimizer_,
                                 .hbm_read = 0.5 * opt_bytes / optimizer_,
                                 .hbm_write = 0.5 * opt_bytes / optimizer_,
                                 .cpu_user = 0.2});
    if (p.ckpt > 0) {
      const double bytes = params_per_core_ * BytesPerParameter(t_.dtype) * 3;
      e.Then(Seconds(p.ckpt), {.hbm_read = bytes / p.ckpt, .cpu_user = 0.5, .cpu_system = 1.5});
    }
  }

  // Peers of a straggler wait inside their collectives: spread the wait over the operations.
  void AddCollectiveSamples(std::size_t i, std::uint64_t index, double wait, const StepPlan& p,
                            Episode& e) const {
    for (std::size_t k = 0; k < costs_.size(); ++k) {
      const std::uint64_t count = CountInStep(t_.collectives[k].count, index);
      const double share =
          p.total_coll > 0 ? wait * costs_[k].seconds * p.slow_network / p.total_coll : 0;
      AddSamples(e, t_.collectives[k].kind, count, t_.collectives[k].bytes,
                 costs_[k].seconds * p.slow_network, costs_[k].floor_seconds * p.slow_network,
                 share, ctx_.seed,
                 Hash(ctx_.job_id, index, k, static_cast<std::uint64_t>(ctx_.workers[i].rank)));
    }
  }
  // Compute time of worker `i` of `node` in step `index`, whose undisturbed compute time is
  // `base` (node 0's noise is that of a single instance).
  double Compute(int node, std::size_t i, double base, double shared, std::uint64_t index,
                 Nanos start) const {
    double slow = 1;
    for (int d : ctx_.workers[i].devices)
      slow = std::max(slow, ctx_.faults->SlowdownOn(node, d, start));
    const std::uint64_t key = ctx_.job_id ^ (i + 1) ^ (static_cast<std::uint64_t>(node) << 32);
    const double own = 1 + t_.noise * 0.5 * Normal(ctx_.seed, kStreamStep, key, index);
    return base * std::max(0.5, shared * own) * slow;
  }

  // One second of a hung job: the rank that stopped joining spins on the host outside any
  // collective; every other rank waits inside the step's first collective, which never completes.
  void Hung(Nanos start, const Hang& hang, std::vector<Episode>& out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      Episode& e = out[i];
      e.Clear(start, start + std::chrono::seconds(1));
      Jitter(e, ctx_.workers[i].cores.size(), ctx_.seed, ctx_.job_id, 0, ctx_.workers[i].rank);
      if (hang.node == ctx_.node && hang.rank == ctx_.workers[i].rank) {
        e.Then(std::chrono::seconds(1), {.cpu_user = 1.0, .cpu_system = 0.02});
        continue;
      }
      e.Then(std::chrono::seconds(1), {.cpu_user = 0.1, .cpu_system = 0.05});
      if (!t_.collectives.empty()) e.in_flight = t_.collectives.front().kind;
    }
  }

  void Stall(Nanos start, std::vector<Episode>& out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].Clear(start, start + std::chrono::seconds(1));
      Jitter(out[i], ctx_.workers[i].cores.size(), ctx_.seed, ctx_.job_id, 0, ctx_.workers[i].rank);
      out[i].Then(std::chrono::seconds(1), {.cpu_user = 0.05});
    }
  }

  JobContext ctx_;
  TrainingSpec t_;
  std::size_t cores_total_ = 1;
  double flops_per_core_ = 0;
  double hbm_per_core_ = 0;
  double t_flop_ = 0;  // compute time of a step at the cores' FLOP/s ...
  double t_hbm_ = 0;   // ... and at HBM bandwidth: the larger is the step's compute time
  double compute_ = 0;
  double hbm_load_ = 0;
  double params_per_core_ = 0;
  double optimizer_ = 0;
  double last_compute_ = 0;
  std::vector<CollectiveCost> costs_;
  std::vector<double> scratch_;
};

class InferenceJob final : public Job {
 public:
  static constexpr Nanos kQuantum = std::chrono::milliseconds(200);

  InferenceJob(JobContext ctx, InferenceSpec s) : ctx_(std::move(ctx)), s_(std::move(s)) {
    const InstanceSpec& spec = *ctx_.spec;
    const double cores =
        static_cast<double>(std::max<std::size_t>(1, ctx_.workers[0].cores.size()));
    flops_rate_ = PeakFlopsPerCore(spec, s_.dtype) * cores * 0.5;
    weights_per_core_ = s_.parameters * BytesPerParameter(s_.dtype) / cores;
    kv_per_core_ = s_.kv_bytes_per_request / cores;
    bandwidth_ = HbmBandwidthPerCore(spec) * kHbmEfficiency;
    cores_ = cores;
    CollectiveGroup group;
    group.devices_per_node = static_cast<int>(ctx_.workers[0].devices.size());
    for (const CollectiveSpec& c : s_.collectives) {
      costs_.push_back(EstimateCollective(spec, group, c.kind, c.bytes, 0.5));
    }
    backlog_.assign(ctx_.workers.size(), 0);
  }

  void Step(std::uint64_t index, Nanos start, std::vector<Episode>& out) override {
    out.resize(ctx_.workers.size());
    for (std::size_t i = 0; i < out.size(); ++i) Serve(index, start, i, out[i]);
  }

 private:
  // Device time of one batch of `m` requests: weights stream from HBM once per batch.
  double Service(double m) const {
    const double flop_time = m * s_.flops_per_request / flops_rate_;
    const double hbm_time = (weights_per_core_ + m * kv_per_core_) / bandwidth_;
    return ToSeconds(s_.overhead) + std::max(flop_time, hbm_time);
  }

  // One quantum of worker w's serving: its batches and what they left queued or dropped.
  struct Quantum {
    double lambda = 0;     // requests per second arriving
    double m = 1;          // requests per batch
    double service = 0;    // device time of a batch
    double coll = 0;       // collectives' time per batch
    double per_batch = 0;  // service + coll
    double batches = 0;
    double served = 0;
    double before = 0;  // requests queued before the quantum
    std::uint64_t dropped = 0;
  };

  void Serve(std::uint64_t index, Nanos start, std::size_t w, Episode& e) {
    const std::uint64_t key = ctx_.job_id ^ (w << 24);
    e.Clear(start, start + kQuantum);
    Jitter(e, ctx_.workers[w].cores.size(), ctx_.seed, ctx_.job_id, index, ctx_.workers[w].rank);
    for (int d : ctx_.workers[w].devices) {
      if (ctx_.faults->DeviceLost(d, start)) {
        e.Then(kQuantum, {.cpu_user = 0.05});
        return;
      }
    }
    const Quantum b = Schedule(index, start, w, key);
    ThenServing(b, e);
    AddExecutions(index, key, b, e);
    for (std::size_t k = 0; k < costs_.size(); ++k) {
      const std::uint64_t n = static_cast<std::uint64_t>(b.batches * s_.collectives[k].count);
      AddSamples(e, s_.collectives[k].kind, n, s_.collectives[k].bytes, costs_[k].seconds,
                 costs_[k].floor_seconds, 0, ctx_.seed, Hash(key, index, k));
    }
  }

  double ArrivalRate(Nanos start) const {
    double lambda = s_.requests_per_second;
    if (s_.load_swing > 0) {
      const double phase = 2 * 3.141592653589793 * ToSeconds(start) / ToSeconds(s_.swing_period);
      lambda *= std::max(0.0, 1 + s_.load_swing * std::sin(phase));
    }
    return lambda;
  }

  // Batches worker w's queue and this quantum's arrivals; updates its backlog.
  Quantum Schedule(std::uint64_t index, Nanos start, std::size_t w, std::uint64_t key) {
    const double q = ToSeconds(kQuantum);
    Quantum b;
    b.lambda = ArrivalRate(start);
    const double arrivals =
        static_cast<double>(Poisson(b.lambda * q, ctx_.seed, kStreamArrivals ^ key, index));
    const double work = backlog_[w] + arrivals;
    for (std::size_t k = 0; k < costs_.size(); ++k)
      b.coll += s_.collectives[k].count * costs_[k].seconds;
    const double fill = b.lambda * (ToSeconds(s_.batch_timeout) + Service(1));
    b.m = std::clamp(std::max(fill, work > 4 * s_.max_batch ? s_.max_batch : 1.0), 1.0,
                     static_cast<double>(s_.max_batch));
    b.service = Service(b.m);
    b.per_batch = b.service + b.coll;
    b.batches = std::ceil(work / b.m);
    if (b.batches * b.per_batch > q) b.batches = std::floor(q / b.per_batch);
    b.served = std::min(work, b.batches * b.m);
    b.before = backlog_[w];
    backlog_[w] = work - b.served;
    if (backlog_[w] > s_.max_queue) {
      b.dropped = static_cast<std::uint64_t>(backlog_[w] - s_.max_queue);
      backlog_[w] = s_.max_queue;
    }
    return b;
  }

  void ThenServing(const Quantum& b, Episode& e) const {
    const double q = ToSeconds(kQuantum);
    const double busy = std::min(1.0, b.batches * b.service / q);
    const double flops = b.served * s_.flops_per_request / cores_ / q;
    const double bytes = b.batches * (weights_per_core_ + b.m * kv_per_core_) / q;
    e.Then(kQuantum, {.busy = busy,
                      .flops = flops,
                      .effective_flops = kUsefulFlops * flops,
                      .hbm_read = 0.85 * bytes,
                      .hbm_write = 0.15 * bytes,
                      .cpu_user = 0.3 + b.served * 4e-4 / q,
                      .cpu_system = 0.05 + b.batches * 1e-4 / q});
  }

  // The quantum's executions in up to four latency samples; the first carries the drops.
  void AddExecutions(std::uint64_t index, std::uint64_t key, const Quantum& b, Episode& e) const {
    const std::uint64_t seed = ctx_.seed;
    const auto count = static_cast<std::uint64_t>(b.batches);
    const double queue_wait =
        std::min(ToSeconds(s_.batch_timeout), b.m / std::max(b.lambda, 1e-9)) / 2 +
        b.before / b.m * b.per_batch;
    const std::uint64_t samples = std::min<std::uint64_t>(count, 4);
    for (std::uint64_t s = 0; s < samples; ++s) {
      const std::uint64_t n = count / samples + (s < count % samples ? 1 : 0);
      const double device =
          b.service * std::exp(s_.noise * Triangular(seed, kStreamLatency, key, index * 8 + s));
      const double wait = queue_wait * (0.5 + Uniform(seed, kStreamLatency, key, index * 8 + s));
      e.executions.push_back({n, s == 0 ? b.dropped : 0, device + b.coll + wait, device});
    }
    if (samples == 0 && b.dropped > 0) e.executions.push_back({0, b.dropped, 0, 0});
  }

  JobContext ctx_;
  InferenceSpec s_;
  double flops_rate_ = 1;
  double weights_per_core_ = 0;
  double kv_per_core_ = 0;
  double bandwidth_ = 1;
  double cores_ = 1;
  std::vector<CollectiveCost> costs_;
  std::vector<double> backlog_;
};

class IdleJob final : public Job {
 public:
  explicit IdleJob(JobContext ctx) : ctx_(std::move(ctx)) {}
  void Step(std::uint64_t index, Nanos start, std::vector<Episode>& out) override {
    out.resize(ctx_.workers.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].Clear(start, start + std::chrono::seconds(1));
      out[i].running = false;
      Jitter(out[i], ctx_.workers[i].cores.size(), ctx_.seed, ctx_.job_id, index,
             ctx_.workers[i].rank);
      out[i].Then(std::chrono::seconds(1), {.cpu_user = 0.01, .cpu_system = 0.002});
    }
  }

 private:
  JobContext ctx_;
};

}  // namespace

double PeakFlopsPerCore(const InstanceSpec& spec, DType dtype) {
  const double device = dtype == DType::kFp8    ? spec.peak_fp8_flops
                        : dtype == DType::kFp32 ? spec.peak_fp32_flops
                                                : spec.peak_bf16_flops;
  return device / spec.cores_per_device();
}

double HbmBandwidthPerCore(const InstanceSpec& spec) {
  return spec.hbm_peak_bytes_per_second / spec.cores_per_device();
}

std::unique_ptr<Job> MakeJob(JobContext context) {
  const Workload& w = context.runtime->workload;
  if (const auto* t = std::get_if<TrainingSpec>(&w)) {
    return std::make_unique<TrainingJob>(std::move(context), *t);
  }
  if (const auto* s = std::get_if<InferenceSpec>(&w)) {
    return std::make_unique<InferenceJob>(std::move(context), *s);
  }
  return std::make_unique<IdleJob>(std::move(context));
}

}  // namespace neuronmon::simdev
