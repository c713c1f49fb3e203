// Job: the workload model behind one RuntimeSpec — a training job whose workers step in lockstep,
// an inference server answering Poisson arrivals, or an idle process holding cores. A job emits its
// steps in order: Step(k, start, out) fills one Episode per worker for step k beginning at `start`.
// Steps depend only on the seed, the spec and earlier steps, so replaying from step 0 always gives
// the same episodes. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "simdev/episode.h"
#include "simdev/preset.h"
#include "simdev/scenario.h"

namespace neuronmon::simdev {

class FaultPlan;

// One worker of a job: the process and the cores it holds.
struct WorkerLayout {
  int rank = 0;
  std::vector<int> devices;          // ascending
  std::vector<std::uint32_t> cores;  // global logical core indices, ascending
};

class Job {
 public:
  virtual ~Job() = default;
  // Fills `out` (resized to the worker count) with step `index` starting at `start`.
  virtual void Step(std::uint64_t index, Nanos start, std::vector<Episode>& out) = 0;
};

struct JobContext {
  const InstanceSpec* spec = nullptr;  // outlive the job
  const RuntimeSpec* runtime = nullptr;
  const FaultPlan* faults = nullptr;
  std::vector<WorkerLayout> workers;
  std::uint64_t seed = 0;
  std::uint64_t job_id = 0;
  int node = 0;   // this instance's node of the cluster
  int nodes = 1;  // cluster nodes the job's steps are agreed across
};

std::unique_ptr<Job> MakeJob(JobContext context);

// Peak FLOP/s of one logical core for `dtype`.
double PeakFlopsPerCore(const InstanceSpec& spec, DType dtype);
// HBM bandwidth available to one logical core (its share of the device).
double HbmBandwidthPerCore(const InstanceSpec& spec);

}  // namespace neuronmon::simdev
