#include "simdev/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "simdev/rng.h"

namespace neuronmon::simdev {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

std::uint64_t Bytes(double b) { return static_cast<std::uint64_t>(std::max(0.0, std::round(b))); }

double RoundUp(double b, double page) { return std::ceil(b / page) * page; }

double BytesPerParameter(DType d) { return d == DType::kFp32 ? 4 : d == DType::kFp8 ? 1 : 2; }

std::string Hex(std::uint64_t v, int digits) {
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4)
    out[static_cast<std::size_t>(i)] = "0123456789abcdef"[v & 15];
  return out;
}

std::string DefaultNeffName(std::uint64_t seed, std::uint64_t key) {
  return "/var/tmp/neuron-compile-cache/neuronxcc-2.21.18209.0+043b1bf7/MODULE_" +
         std::to_string(Hash(seed, kStreamIdentity, key) % 10'000'000'000'000'000ULL) + "+" +
         Hex(Hash(seed, kStreamIdentity, key, 1), 8) + "/model.neff";
}

struct PerCore {
  double constants = 0, code = 0, neff_code = 0, scratchpad = 0, runtime = 12.4 * kMiB, tensors = 0;
};

PerCore SizeCore(const InstanceSpec& spec, const Workload& workload, double total_cores,
                 double worker_cores) {
  PerCore c;
  c.code = 96 * kMiB * spec.lnc;
  if (const auto* t = std::get_if<TrainingSpec>(&workload)) {
    const double params = t->parameters / total_cores;
    const double tokens = t->tokens_per_step / total_cores;
    c.constants = params * BytesPerParameter(t->dtype);
    c.neff_code = 13 * kMiB + params * 0.002;
    c.scratchpad = std::clamp(RoundUp(tokens * 16 * 1024, 64 * kMiB), 512 * kMiB, 4 * kGiB);
    c.tensors =
        params * (12 + BytesPerParameter(t->dtype)) + tokens * t->activation_bytes_per_token;
  } else if (const auto* s = std::get_if<InferenceSpec>(&workload)) {
    c.constants = s->parameters * BytesPerParameter(s->dtype) / worker_cores;
    c.neff_code = 20 * kMiB;
    c.scratchpad = 512 * kMiB;
    c.tensors = s->kv_bytes_per_request * s->max_batch / worker_cores;
  } else {
    c.constants = 1.5 * kGiB;
    c.neff_code = 8 * kMiB;
    c.scratchpad = 256 * kMiB;
    c.tensors = 64 * kMiB;
  }
  return c;
}

}  // namespace

MemoryPlan PlanMemory(const InstanceSpec& spec, const RuntimeSpec& runtime,
                      const WorkerLayout& worker, double total_cores, std::uint32_t model_id,
                      std::uint64_t seed) {
  const double worker_cores = static_cast<double>(std::max<std::size_t>(1, worker.cores.size()));
  const PerCore pc = SizeCore(spec, runtime.workload, std::max(1.0, total_cores), worker_cores);
  auto memory = std::make_shared<RuntimeMemory>();
  memory->host.application_memory = Bytes(1.6 * kGiB + 0.35 * kGiB * worker_cores);
  memory->host.constants = 0;
  memory->host.dma_buffers = Bytes(16 * kMiB * worker_cores);
  memory->host.tensors =
      Bytes(std::holds_alternative<TrainingSpec>(runtime.workload) ? 256 * kMiB : 32 * kMiB);

  LoadedModel model;
  const std::uint64_t key = Hash(seed, model_id, std::hash<std::string>{}(runtime.name));
  model.name = runtime.model_name.empty() ? DefaultNeffName(seed, key) : runtime.model_name;
  model.uuid = Hex(Hash(key, 1), 16) + Hex(Hash(key, 2), 16);
  model.model_id = model_id;
  model.is_running = true;
  const int cores_per_device = spec.cores_per_device();
  for (std::size_t i = 0; i < worker.cores.size(); ++i) {
    const std::uint32_t core = worker.cores[i];
    CoreMemory cm;
    cm.core = core;
    cm.constants = Bytes(pc.constants);
    cm.model_code = Bytes(pc.code + pc.neff_code);
    cm.model_shared_scratchpad = Bytes(pc.scratchpad);
    cm.runtime_memory = Bytes(pc.runtime);
    cm.tensors = Bytes(pc.tensors);
    memory->cores.push_back(cm);

    SubgraphMemory sg;
    char name[32];
    std::snprintf(name, sizeof name, "sg_%02zu", i);
    sg.name = name;
    sg.core = core % static_cast<std::uint32_t>(cores_per_device);
    sg.device = core / static_cast<std::uint32_t>(cores_per_device);
    sg.host.application_memory = 20480;
    sg.host.dma_buffers = 524288;
    sg.constants = cm.constants;
    sg.model_code = Bytes(pc.neff_code);
    sg.runtime_memory = 1073152;
    model.subgraphs.push_back(sg);
  }
  memory->models.push_back(model);

  MemoryPlan plan;
  plan.largest_core_bytes = memory->cores.empty() ? 0 : memory->cores.front().Total();
  auto stalled = std::make_shared<RuntimeMemory>(*memory);
  for (LoadedModel& m : stalled->models) m.is_running = false;
  if (std::holds_alternative<IdleSpec>(runtime.workload)) {
    memory->models.front().is_running = false;
  }
  plan.running = std::move(memory);
  plan.stalled = std::move(stalled);
  return plan;
}

std::shared_ptr<const RuntimeMemory> Loading(const RuntimeMemory& memory, double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  auto scale = [fraction](std::uint64_t& v) { v = Bytes(static_cast<double>(v) * fraction); };
  auto out = std::make_shared<RuntimeMemory>(memory);
  scale(out->host.application_memory);
  scale(out->host.dma_buffers);
  scale(out->host.tensors);
  for (CoreMemory& c : out->cores) {
    scale(c.constants);
    scale(c.model_code);
    scale(c.model_shared_scratchpad);
    scale(c.tensors);
  }
  // Subgraphs load one after another.
  for (LoadedModel& m : out->models) {
    m.is_running = false;
    const auto keep =
        static_cast<std::size_t>(std::floor(fraction * static_cast<double>(m.subgraphs.size())));
    m.subgraphs.resize(keep);
  }
  return out;
}

}  // namespace neuronmon::simdev
