// The state an Instance keeps between reads, shared by its two halves: instance.cc builds the
// workers and jobs from the scenario and moves the jobs forward, instance_read.cc turns them into
// what a read at a time shows. A Worker is one process of a runtime; a JobState the job its
// workers step together, with the episodes of its current step; a CoreAccum a logical core's
// counters as floating-point sums. Internal to simdev/instance*.cc. The Instance owns them all;
// a Worker points at its RuntimeSpec in the Instance's scenario. Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simdev/instance.h"
#include "simdev/memory_model.h"

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

// Adds the collectives of episode `e` that completed by `until` to `out` (instance.cc).
void AddCollectives(const Episode& e, Nanos until,
                    std::array<CollectiveCounters, kCollectiveKinds>& out);

}  // namespace neuronmon::simdev
