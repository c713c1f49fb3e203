// The analyzer against generated training variants whose bottleneck is known by construction: each
// must be classified correctly at least 95% of the time, and the kubelet's allocations compared
// with use across them. Simulated time only; nothing sleeps.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>

#include "daemon/core/analysis/analyzer.h"
#include "proto/names/names.h"
#include "simdev/collective_model.h"
#include "simdev/instance.h"
#include "simdev/job.h"
#include "simdev/scenario_library.h"
#include "tests/daemon/analyzer_sim_run.h"

namespace neuronmon::daemon {
namespace {

using sim_run::SimRun;
using sim_run::Verdict;
using std::chrono::seconds;

// One generated training (or idle) workload whose bottleneck is known by construction.
struct Variant {
  std::string label;  // the verdict it must get
  std::string preset;
  simdev::Scenario scenario;
  std::uint64_t seed = 1;
  std::string description;
};

simdev::CollectiveSpec AllReduce(double bytes, double count, double overlap) {
  simdev::CollectiveSpec c;
  c.kind = CollectiveKind::kAllReduce;
  c.bytes = bytes;
  c.count = count;
  c.overlap = overlap;
  return c;
}

Variant MakeVariant(const std::string& label, const simdev::InstanceSpec& spec,
                    std::mt19937_64& rng) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  Variant v;
  v.label = label;
  v.preset = spec.name;
  v.seed = rng() % 1000 + 1;
  simdev::RuntimeSpec rt;
  rt.name = "job";
  rt.tag = "rank{rank}";
  rt.command = "torchrun train.py --variant";
  rt.load_duration = seconds(5);
  if (label == "idle_allocated") {
    rt.workload = simdev::IdleSpec{};
    rt.workers = simdev::Workers::kSingle;
    rt.devices = {static_cast<int>(rng() % static_cast<unsigned>(spec.device_count))};
    v.description = "idle on nd" + std::to_string(rt.devices[0]);
    v.scenario.runtimes.push_back(rt);
    v.scenario.name = "variant";
    v.scenario.instance = spec.name;
    return v;
  }
  simdev::TrainingSpec t;
  t.parameters = uniform(1e9, 1.5e10);
  t.noise = uniform(0.005, 0.04);
  t.nodes = std::vector<int>{1, 1, 2, 4}[rng() % 4];
  t.warmup_steps = 2;
  const double cores = spec.core_count() * t.nodes;
  const double step = uniform(0.6, 2.5);  // compute seconds per step
  const double peak = simdev::PeakFlopsPerCore(spec, simdev::DType::kBf16) * t.compute_efficiency;
  t.tokens_per_step = step * peak * cores / (6 * t.parameters);
  t.input_seconds = uniform(0.05, 0.5) * step;
  t.input_prefetch = true;
  const double bucket = std::vector<double>{8 << 20, 32 << 20, 64 << 20, 128 << 20}[rng() % 4];
  // Gradient all-reduces mostly hidden behind compute.
  t.collectives.push_back(AllReduce(bucket, uniform(5, 40), uniform(0.85, 0.97)));
  char text[200];
  if (label == "input_bound") {
    t.input_prefetch = false;
    t.input_seconds = uniform(0.4, 1.4) * step;
    t.dataloader_cpus = uniform(1, 8);
  } else if (label == "collective_bound") {
    const simdev::CollectiveGroup group{spec.devices_per_node(), t.nodes, false};
    const double latency =
        simdev::EstimateCollective(spec, group, CollectiveKind::kAllReduce, bucket, 0.1).seconds;
    const double overlap = uniform(0.0, 0.3);
    const double exposed = uniform(0.6, 1.5) * step;
    t.collectives = {AllReduce(bucket, exposed / ((1 - overlap) * latency), overlap)};
  } else if (label == "hbm_bound") {
    // Memory-bound steps: the batch is sized so the HBM-limited step lasts `step` seconds.
    t.arithmetic_intensity = uniform(15, 60);
    const double bandwidth = simdev::HbmBandwidthPerCore(spec) * 0.92;
    t.tokens_per_step = step * t.arithmetic_intensity * bandwidth * cores / (6 * t.parameters);
  }
  std::snprintf(text, sizeof text,
                "%s %.1fB params, %.2fs steps, %d node(s), input %.2fs%s, AI %.0f",
                spec.name.c_str(), t.parameters / 1e9, step, t.nodes, t.input_seconds,
                t.input_prefetch ? " prefetched" : "", t.arithmetic_intensity);
  v.description = text;
  rt.workload = t;
  v.scenario.runtimes.push_back(rt);
  if (label == "straggler") {
    simdev::FaultSpec slow;
    slow.type = simdev::FaultType::kSlowdown;
    slow.device = static_cast<int>(rng() % static_cast<unsigned>(spec.device_count));
    slow.factor = uniform(1.3, 1.8);
    v.scenario.faults.push_back(slow);
    v.description +=
        ", nd" + std::to_string(slow.device) + " x" + std::to_string(slow.factor).substr(0, 4);
  } else if (label == "errors" && rng() % 2 == 0) {
    simdev::FaultSpec nan;
    nan.type = simdev::FaultType::kNanErrors;
    nan.runtime = "job";
    nan.per_second = uniform(0.3, 2);
    v.scenario.faults.push_back(nan);
  } else if (label == "errors") {
    // A device's hardware fails executions (an uncorrectable NeuronCore or HBM error, a DMA
    // abort, a collectives error).
    simdev::FaultSpec hw;
    hw.type = simdev::FaultType::kHardwareError;
    hw.device = static_cast<int>(rng() % static_cast<unsigned>(spec.device_count));
    hw.error = static_cast<simdev::HardwareErrorKind>(rng() % 4);
    hw.per_second = uniform(0.2, 1);
    v.scenario.faults.push_back(hw);
    v.description += ", hardware errors on nd" + std::to_string(hw.device);
  } else if (label == "memory_pressure") {
    // The job's device memory grows (a leak, activations of a growing sequence) until the HBM
    // is nearly full.
    simdev::FaultSpec grow;
    grow.type = simdev::FaultType::kMemoryGrowth;
    grow.runtime = "job";
    grow.start = seconds(20);
    grow.per_second = uniform(1, 4) * static_cast<double>(spec.hbm_bytes) / 40;
    grow.limit = uniform(0.92, 0.99);
    v.scenario.faults.push_back(grow);
    v.description += ", memory growing to " + std::to_string(grow.limit).substr(0, 4);
  }
  v.scenario.name = "variant";
  v.scenario.instance = spec.name;
  return v;
}

TEST(Analyzer, GeneratedVariantsAreClassifiedAtLeast95PercentOfTheTime) {
  std::mt19937_64 rng(8);
  std::vector<Variant> variants;
  for (const char* preset : {"trn2.48xlarge", "trn1.32xlarge"}) {
    const simdev::InstanceSpec spec = *simdev::FindPreset(preset);
    for (const char* label : {"healthy", "input_bound", "collective_bound", "hbm_bound",
                              "straggler", "errors", "idle_allocated", "memory_pressure"}) {
      for (int i = 0; i < 8; ++i) variants.push_back(MakeVariant(label, spec, rng));
    }
  }
  int correct = 0;
  std::string wrong;
  for (const Variant& v : variants) {
    SimRun run(*simdev::FindPreset(v.preset), v.scenario, v.seed);
    std::string verdict;
    for (int t = 0; t <= 90; ++t) verdict = Verdict(run.At(t), 0);
    if (verdict == v.label) {
      ++correct;
    } else {
      wrong += "  expected " + v.label + ", got " + verdict + ": " + v.description + "\n";
    }
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(variants.size());
  std::printf("analyzer accuracy: %d of %zu generated variants (%.1f%%)\n%s", correct,
              variants.size(), 100 * accuracy, wrong.c_str());
  EXPECT_GE(accuracy, 0.95) << "misclassified:\n" << wrong;
}

// The allocation findings over generated workloads on a Kubernetes node: pod "half" was allocated
// the first half of the devices and pod "last" the last device. Every runtime using a device in
// between gets `unallocated` naming exactly those devices (and no other runtime does), and each
// pod none of whose devices any runtime uses gets its idle_allocated finding — never a pod in use.
TEST(Analyzer, AllocationFindingsHoldAcrossGeneratedVariants) {
  std::mt19937_64 rng(11);
  int unallocated = 0, idle_pods = 0;
  for (const char* preset : {"trn2.48xlarge", "trn1.32xlarge"}) {
    const simdev::InstanceSpec spec = *simdev::FindPreset(preset);
    const auto n = static_cast<std::uint32_t>(spec.device_count);
    for (const char* label : {"healthy", "input_bound", "straggler", "idle_allocated"}) {
      for (int i = 0; i < 2; ++i) {
        const Variant v = MakeVariant(label, spec, rng);
        SimRun run(spec, v.scenario, v.seed, [n](v1::Inventory& inv) {
          v1::PodAllocation* half = inv.add_allocations();
          half->set_pod("half");
          half->set_resource_name("aws.amazon.com/neuron");
          for (std::uint32_t d = 0; d < n / 2; ++d) half->add_device_indices(d);
          v1::PodAllocation* last = inv.add_allocations();
          last->set_pod("last");
          last->set_resource_name("aws.amazon.com/neuron");
          last->add_device_indices(n - 1);
        });
        const Analysis* a = nullptr;
        for (int t = 0; t <= 60; ++t) a = &run.At(t);
        const std::uint32_t per = static_cast<std::uint32_t>(spec.cores_per_device());
        std::set<std::uint32_t> used;
        for (const RuntimeSample& r : run.core->history().newest()->runtimes) {
          std::set<std::uint32_t> outside;
          for (std::uint32_t c : r.cores) {
            used.insert(c / per);
            if (c / per >= n / 2 && c / per < n - 1) outside.insert(c / per);
          }
          std::string want;
          for (std::uint32_t d : outside)
            want += (want.empty() ? "nd" : ", nd") + std::to_string(d);
          ASSERT_TRUE(a->runtimes.count(r.pid)) << v.description;
          const std::vector<v1::Finding>& f = a->runtimes.at(r.pid);
          ASSERT_FALSE(f.empty()) << v.description;
          const bool has = f.back().kind() == v1::FINDING_KIND_UNALLOCATED;
          EXPECT_EQ(has, !outside.empty()) << v.description << ", pid " << r.pid;
          if (has) {
            ++unallocated;
            EXPECT_EQ(f.back().summary(),
                      "uses " + want + ", which Kubernetes allocated to no pod");
            EXPECT_GE(f.size(), 2u) << "the verdict comes first";
          }
        }
        std::set<std::string> idle;
        for (const v1::Finding& f : a->allocations) idle.insert(f.subject());
        bool half_used = false;
        for (std::uint32_t d = 0; d < n / 2; ++d) half_used = half_used || used.count(d) > 0;
        EXPECT_EQ(idle.count("pod half"), half_used ? 0u : 1u) << v.description;
        EXPECT_EQ(idle.count("pod last"), used.count(n - 1) ? 0u : 1u) << v.description;
        idle_pods += static_cast<int>(idle.size());
      }
    }
  }
  // Both kinds were exercised.
  EXPECT_GT(unallocated, 0);
  EXPECT_GT(idle_pods, 0);
}

}  // namespace
}  // namespace neuronmon::daemon
