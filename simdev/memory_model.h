// Memory model: a runtime's host and device memory by category, sized from its model the way the
// Neuron runtime lays it out (reference/neuron-tools.md §4 memory facts): weights as constants,
// ~96 MB of model code per physical core plus the NEFF's code, a shared scratchpad in 64 MiB pages,
// runtime memory, and tensors (optimizer state, gradients, activations, KV cache). Pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "proto/common/snapshot.h"
#include "simdev/job.h"
#include "simdev/preset.h"
#include "simdev/scenario.h"

namespace neuronmon::simdev {

struct MemoryPlan {
  std::shared_ptr<const RuntimeMemory> running;  // after loading, models executing
  std::shared_ptr<const RuntimeMemory> stalled;  // same memory, models not running
  std::uint64_t largest_core_bytes = 0;          // to check the model fits in HBM
};

// `total_cores` counts the cores of every worker of the job (on every node).
MemoryPlan PlanMemory(const InstanceSpec& spec, const RuntimeSpec& runtime,
                      const WorkerLayout& worker, double total_cores, std::uint32_t model_id,
                      std::uint64_t seed);

// `memory` with every byte count scaled by `fraction` (0..1): a model still loading.
std::shared_ptr<const RuntimeMemory> Loading(const RuntimeMemory& memory, double fraction);

}  // namespace neuronmon::simdev
