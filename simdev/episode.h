// Episode: what one worker (runtime process) does during one step of its job — a few intervals of
// constant activity rates, and the events (collective operations, executions) that complete at the
// step's end. Jobs produce episodes; the instance integrates them into cumulative counters.
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "proto/common/clock.h"
#include "proto/common/snapshot.h"

namespace neuronmon::simdev {

// Per-core activity rates (busy is a fraction 0..1; the rest per second), plus the process's CPU
// use in CPU-seconds per second.
struct Rates {
  double busy = 0;
  double flops = 0;
  double effective_flops = 0;
  double hbm_read = 0;   // bytes/s
  double hbm_write = 0;  // bytes/s
  double cpu_user = 0;
  double cpu_system = 0;
};

struct Interval {
  Nanos start{0};
  Nanos end{0};
  Rates rates;
};

// `count` operations that each took `latency` seconds and moved `bytes_each`.
struct CollectiveSample {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::uint64_t count = 0;
  double bytes_each = 0;
  double latency = 0;
};

struct ExecutionSample {
  std::uint64_t count = 0;
  std::uint64_t failed_to_queue = 0;
  double total_latency = 0;
  double device_latency = 0;
};

struct Episode {
  Nanos start{0};
  Nanos end{0};
  bool running = true;               // the model is executing (loaded_models.is_running)
  std::vector<Interval> intervals;   // ascending, within [start, end)
  std::vector<float> core_jitter;    // per core of the worker: busy multiplier - 1
  std::vector<float> physical_skew;  // per core: physical sub-core imbalance
  std::vector<CollectiveSample> collectives;
  std::vector<ExecutionSample> executions;
  // The worker waits the whole episode inside a collective of this kind that does not complete
  // (its job hangs): its time in flight grows, its operation count does not.
  std::optional<CollectiveKind> in_flight;

  void Clear(Nanos from, Nanos to) {
    start = from;
    end = to;
    running = true;
    intervals.clear();
    collectives.clear();
    executions.clear();
    in_flight.reset();
  }
  // Appends an interval of `length` after the last one (or at start).
  void Then(Nanos length, const Rates& rates) {
    const Nanos from = intervals.empty() ? start : intervals.back().end;
    if (length > Nanos(0)) intervals.push_back({from, from + length, rates});
  }
};

inline Nanos Seconds(double s) { return Nanos(static_cast<std::int64_t>(s * 1e9)); }
inline double ToSeconds(Nanos n) { return static_cast<double>(n.count()) * 1e-9; }

}  // namespace neuronmon::simdev
