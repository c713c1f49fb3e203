#include "simdev/instance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "simdev/job.h"
#include "simdev/scenario_library.h"
#include "tests/simdev/window.h"

namespace neuronmon::simdev {
namespace {

using std::chrono::seconds;
using testing::Between;
using testing::Window;

std::unique_ptr<Instance> Make(std::string_view scenario, std::string_view device = "",
                               std::uint64_t seed = 1) {
  Result<Scenario> s = LoadScenario(scenario);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Result<InstanceSpec> spec = device.empty() ? FindPreset(s->instance) : ParseDeviceSpec(device);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  Result<std::unique_ptr<Instance>> i = Instance::Create(*spec, *s, seed);
  EXPECT_TRUE(i.ok()) << i.status().ToString();
  return i.ok() ? std::move(*i) : nullptr;
}

std::unique_ptr<Instance> FromJson(std::string_view json,
                                   std::string_view device = "sim:trn2.48xlarge") {
  Result<Scenario> s = ParseScenario(json, "inline.json");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Result<std::unique_ptr<Instance>> i = Instance::Create(*ParseDeviceSpec(device), *s, 3);
  EXPECT_TRUE(i.ok()) << i.status().ToString();
  return i.ok() ? std::move(*i) : nullptr;
}

Window WindowAt(Instance& inst, int from, int to) {
  const Snapshot a = inst.Read(seconds(from));
  const Snapshot b = inst.Read(seconds(to));
  return Between(inst.spec(), a, b);
}

const testing::RuntimeWindow* Runtime(const Window& w, std::string_view tag) {
  for (const auto& r : w.runtimes) {
    if (r.tag == tag) return &r;
  }
  return nullptr;
}

void ExpectMonotonic(const Snapshot& a, const Snapshot& b, const std::string& where) {
  for (std::size_t c = 0; c < b.cores.size(); ++c) {
    ASSERT_GE(b.cores[c].busy_ns, a.cores[c].busy_ns) << where << " core " << c;
    ASSERT_GE(b.cores[c].flops, a.cores[c].flops) << where;
    for (std::size_t p = 0; p < b.cores[c].physical_busy_ns.size(); ++p) {
      ASSERT_GE(b.cores[c].physical_busy_ns[p], a.cores[c].physical_busy_ns[p]) << where;
    }
  }
  for (std::size_t d = 0; d < b.devices.size(); ++d) {
    ASSERT_GE(b.devices[d].hbm_read_bytes, a.devices[d].hbm_read_bytes) << where;
    ASSERT_GE(b.devices[d].hbm_write_bytes, a.devices[d].hbm_write_bytes) << where;
    ASSERT_GE(b.devices[d].ecc.mem_corrected, a.devices[d].ecc.mem_corrected) << where;
  }
  for (const RuntimeSample& r : b.runtimes) {
    for (const RuntimeSample& old : a.runtimes) {
      if (old.pid != r.pid) continue;
      ASSERT_GE(r.executions.completed, old.executions.completed) << where;
      ASSERT_GE(r.cpu_user_ns, old.cpu_user_ns) << where;
      for (std::size_t k = 0; k < r.collectives.size(); ++k) {
        ASSERT_GE(r.collectives[k].count, old.collectives[k].count) << where;
        ASSERT_GE(r.collectives[k].latency.count(), old.collectives[k].latency.count()) << where;
      }
    }
  }
}

// Invariants over every preset x scenario that fits it, read every 3 s for 4 simulated minutes.
TEST(Instance, InvariantsHoldForEveryPresetAndScenario) {
  int combos = 0;
  for (const std::string& preset : PresetNames()) {
    const InstanceSpec spec = *FindPreset(preset);
    for (const BuiltinScenario& b : BuiltinScenarios()) {
      Result<Scenario> scenario = LoadScenario(b.name);
      ASSERT_TRUE(scenario.ok());
      auto where_of = [&](std::string_view n) { return preset + "/" + std::string(n) + ": "; };
      Result<std::unique_ptr<Instance>> made = Instance::Create(spec, *scenario, 11);
      if (!made.ok()) {
        // Only scenarios naming devices the preset lacks may be refused.
        EXPECT_NE(made.status().message().find("does not exist on " + preset), std::string::npos)
            << where_of(b.name) << made.status().message();
        continue;
      }
      ++combos;
      Instance& inst = **made;
      const std::string where = preset + "/" + std::string(b.name);
      const double core_hbm = static_cast<double>(spec.hbm_bytes) / spec.cores_per_device();
      Snapshot prev = inst.Read(Nanos(0));
      for (int t = 3; t <= 240; t += 3) {
        Snapshot s = inst.Read(seconds(t));
        ExpectMonotonic(prev, s, where + " t=" + std::to_string(t));
        const Window w = Between(spec, prev, s);
        for (double u : w.core_utilization) {
          ASSERT_GE(u, 0) << where;
          ASSERT_LE(u, 100.0 + 1e-9) << where;
        }
        for (double h : w.hbm_fraction) ASSERT_LE(h, 1.0) << where << " t=" << t;
        std::vector<double> device_bytes(spec.device_count, 0);
        for (const RuntimeSample& r : s.runtimes) {
          ASSERT_NE(r.memory, nullptr);
          for (const CoreMemory& c : r.memory->cores) {
            ASSERT_LE(static_cast<double>(c.Total()), core_hbm) << where;
            device_bytes[c.core / spec.cores_per_device()] += static_cast<double>(c.Total());
          }
          for (const CollectiveCounters& c : r.collectives) {
            if (!c.latency.empty()) {
              // No operation beats one hop of ~1 us.
              ASSERT_GE(LatencyHistogram::UpperEdge(c.latency.buckets().front().first), 1e-6);
            }
          }
        }
        for (double bytes : device_bytes) ASSERT_LE(bytes, static_cast<double>(spec.hbm_bytes));
        prev = std::move(s);
      }
    }
  }
  EXPECT_GE(combos, 55);
}

bool SameCounters(const Snapshot& a, const Snapshot& b) {
  if (a.cores.size() != b.cores.size() || a.runtimes.size() != b.runtimes.size()) return false;
  for (std::size_t c = 0; c < a.cores.size(); ++c) {
    if (a.cores[c].busy_ns != b.cores[c].busy_ns || a.cores[c].flops != b.cores[c].flops ||
        a.cores[c].physical_busy_ns != b.cores[c].physical_busy_ns) {
      return false;
    }
  }
  for (std::size_t d = 0; d < a.devices.size(); ++d) {
    if (a.devices[d].hbm_read_bytes != b.devices[d].hbm_read_bytes) return false;
    const DevicePower& p = a.devices[d].power;
    const DevicePower& q = b.devices[d].power;
    if (p.unavailable != q.unavailable || p.average_percent != q.average_percent ||
        p.max_percent != q.max_percent ||
        a.devices[d].errors.Total() != b.devices[d].errors.Total())
      return false;
  }
  for (std::size_t r = 0; r < a.runtimes.size(); ++r) {
    const RuntimeSample& x = a.runtimes[r];
    const RuntimeSample& y = b.runtimes[r];
    if (x.pid != y.pid || x.tag != y.tag || x.executions.completed != y.executions.completed ||
        x.cpu_user_ns != y.cpu_user_ns || !(x.total_latency == y.total_latency)) {
      return false;
    }
    for (std::size_t k = 0; k < x.collectives.size(); ++k) {
      if (!(x.collectives[k].latency == y.collectives[k].latency)) return false;
    }
  }
  return true;
}

TEST(Instance, SameSeedAndTimeGiveSameReadingWhateverTheReadPattern) {
  for (const char* scenario : {"healthy-training", "inference-serving", "ecc-degradation"}) {
    auto stepwise = Make(scenario);
    auto jump = Make(scenario);
    Snapshot a;
    for (int t = 0; t <= 600; t += 7) a = stepwise->Read(seconds(t));
    const Snapshot b = jump->Read(seconds(595));
    EXPECT_TRUE(SameCounters(a, b)) << scenario;
    // Reading backwards replays and agrees too.
    const Snapshot early = stepwise->Read(seconds(30));
    EXPECT_TRUE(SameCounters(early, Make(scenario)->Read(seconds(30)))) << scenario;
    EXPECT_FALSE(SameCounters(b, Make(scenario, "", 2)->Read(seconds(595)))) << scenario;
  }
}

TEST(Instance, TimelineLoadsThenWarmsUpThenRunsSteadily) {
  auto inst = Make("healthy-training");
  const Snapshot loading = inst->Read(seconds(4));
  ASSERT_EQ(loading.runtimes.size(), 16u);
  const RuntimeMemory& half = *loading.runtimes[0].memory;
  EXPECT_FALSE(half.models.front().is_running);
  const Snapshot loaded = inst->Read(seconds(60));
  const RuntimeMemory& full = *loaded.runtimes[0].memory;
  EXPECT_TRUE(full.models.front().is_running);
  EXPECT_LT(half.DeviceTotal(), full.DeviceTotal());
  // ~96 MB of model code per physical core (2 per logical core on trn2) plus the NEFF's code.
  EXPECT_GE(full.cores[0].model_code, 2u * 96 * 1024 * 1024);
  EXPECT_LT(full.cores[0].model_code, 2u * 96 * 1024 * 1024 + 64u * 1024 * 1024);
  EXPECT_EQ(full.models.front().subgraphs.size(), 4u);
  EXPECT_EQ(loaded.runtimes[0].tag, "llama3-8b-rank0");
  EXPECT_EQ(loaded.runtimes[0].pid, 41200u);
  EXPECT_EQ(loaded.runtimes[0].cores, (std::vector<std::uint32_t>{0, 1, 2, 3}));

  auto fresh = Make("healthy-training");
  const Window load = WindowAt(*fresh, 0, 7);
  const Window warm = WindowAt(*fresh, 9, 20);
  const Window steady = WindowAt(*fresh, 60, 120);
  EXPECT_EQ(load.core_utilization[0], 0);
  EXPECT_LT(warm.runtimes[0].utilization, 60);
  EXPECT_GT(steady.runtimes[0].utilization, 85);
}

// A step's collectives complete throughout the step, not all at its end: with steps longer than
// the sampling period, every 1 s window still sees operations.
TEST(Instance, CollectivesProgressWithinAStep) {
  auto inst = Make("mixed");
  auto total = [](const Snapshot& s) {
    std::uint64_t n = 0;
    for (const CollectiveCounters& c : s.runtimes.at(0).collectives) n += c.count;
    return n;
  };
  Snapshot prev = inst->Read(seconds(60));
  ASSERT_EQ(prev.runtimes.at(0).tag, "llama3-8b-rank0");
  int windows_without_a_step = 0;
  for (int t = 61; t <= 120; ++t) {
    const Snapshot next = inst->Read(seconds(t));
    EXPECT_GT(total(next), total(prev)) << "no collectives in second " << t;
    if (next.runtimes[0].executions.completed == prev.runtimes[0].executions.completed) {
      ++windows_without_a_step;
    }
    prev = next;
  }
  EXPECT_GT(windows_without_a_step, 10)
      << "steps are shorter than a window: the test shows nothing";
}

TEST(Instance, HealthyTrainingSignature) {
  auto inst = Make("healthy-training");
  const Window w = WindowAt(*inst, 60, 180);
  ASSERT_EQ(w.runtimes.size(), 16u);
  for (const auto& r : w.runtimes) {
    EXPECT_GT(r.utilization, 85) << r.tag;
    EXPECT_LT(r.collective_share, 0.15) << r.tag;
    EXPECT_GT(r.flops_fraction, 0.4) << r.tag;
  }
  // Physical sub-cores average to their logical core.
  const Snapshot a = inst->Read(seconds(200));
  const Snapshot b = inst->Read(seconds(210));
  const double logical = static_cast<double>(b.cores[5].busy_ns - a.cores[5].busy_ns);
  const double p0 =
      static_cast<double>(b.cores[5].physical_busy_ns[0] - a.cores[5].physical_busy_ns[0]);
  const double p1 =
      static_cast<double>(b.cores[5].physical_busy_ns[1] - a.cores[5].physical_busy_ns[1]);
  EXPECT_NEAR((p0 + p1) / 2, logical, logical * 1e-6 + 2);
  EXPECT_NE(p0, p1);
  // Each core's FLOPs follow its own busy time: the cores of one worker differ a little, and
  // FLOPs per busy second stay the same.
  const double f4 = b.cores[4].effective_flops - a.cores[4].effective_flops;
  const double f5 = b.cores[5].effective_flops - a.cores[5].effective_flops;
  const double busy4 = static_cast<double>(b.cores[4].busy_ns - a.cores[4].busy_ns);
  EXPECT_NE(f4, f5);
  EXPECT_NEAR(f4 / busy4, f5 / logical, 0.001 * f5 / logical);
}

TEST(Instance, InputBoundSignature) {
  auto inst = Make("input-bound");
  const Window w = WindowAt(*inst, 60, 180);
  for (const auto& r : w.runtimes) {
    EXPECT_GT(r.utilization, 40) << r.tag;
    EXPECT_LT(r.utilization, 70) << r.tag;
    EXPECT_LT(r.collective_share, 0.1) << r.tag;
  }
}

TEST(Instance, CollectiveBoundSignature) {
  auto inst = Make("collective-bound");
  const Window w = WindowAt(*inst, 60, 180);
  for (const auto& r : w.runtimes) {
    EXPECT_LT(r.utilization, 65) << r.tag;
    EXPECT_GT(r.collective_share, 0.4) << r.tag;
  }
}

TEST(Instance, HbmBoundSignature) {
  auto inst = Make("hbm-bound");
  const Window w = WindowAt(*inst, 60, 180);
  for (double h : w.hbm_fraction) EXPECT_GE(h, 0.85);
  for (const auto& r : w.runtimes) {
    EXPECT_LT(r.flops_fraction, 0.3) << r.tag;
    EXPECT_GT(r.utilization, 85) << r.tag;
  }
}

TEST(Instance, StragglerSignature) {
  auto inst = Make("straggler");
  const Window w = WindowAt(*inst, 60, 180);
  const auto* slow = Runtime(w, "llama3-8b-rank5");
  ASSERT_NE(slow, nullptr);
  EXPECT_GT(slow->utilization, 85);
  for (const auto& r : w.runtimes) {
    if (r.tag == slow->tag) continue;
    EXPECT_LT(r.utilization, 75) << r.tag;
    EXPECT_GT(r.collective_share, 0.2) << r.tag;
    EXPECT_GT(r.p50_collective, 3 * slow->p50_collective) << r.tag;
  }
}

TEST(Instance, InferenceServingSignature) {
  auto inst = Make("inference-serving");
  const Snapshot a = inst->Read(seconds(60));
  const Snapshot b = inst->Read(seconds(120));
  const Window w = Between(inst->spec(), a, b);
  for (const auto& r : w.runtimes) {
    EXPECT_GT(r.executions, 1000u) << r.tag;
    EXPECT_GT(r.utilization, 75) << r.tag;
    EXPECT_LT(r.utilization, 98) << r.tag;
  }
  const LatencyHistogram lat = b.runtimes[0].total_latency.Minus(a.runtimes[0].total_latency);
  EXPECT_LT(lat.Quantile(0.5), lat.Quantile(0.99));
  EXPECT_GT(lat.Quantile(0.5), 1e-3);
}

TEST(Instance, EccDegradationRaisesTransientThenHardwareErrors) {
  auto inst = Make("ecc-degradation");
  const Snapshot before = inst->Read(seconds(55));
  const Snapshot corrected = inst->Read(seconds(170));
  const Snapshot uncorrected = inst->Read(seconds(300));
  EXPECT_EQ(before.devices[3].ecc.mem_corrected, 0u);
  EXPECT_GT(corrected.devices[3].ecc.mem_corrected, 40u);
  EXPECT_EQ(corrected.devices[3].ecc.mem_uncorrected, 0u);
  EXPECT_GT(uncorrected.devices[3].ecc.mem_uncorrected, 5u);
  EXPECT_EQ(uncorrected.devices[4].ecc.mem_corrected, 0u);
  const RuntimeSample& rank3 = corrected.runtimes[3];
  ASSERT_EQ(rank3.tag, "llama3-8b-rank3");
  EXPECT_EQ(rank3.executions.transient, corrected.devices[3].ecc.mem_corrected);
  EXPECT_EQ(rank3.executions.hardware, 0u);
  EXPECT_EQ(uncorrected.runtimes[3].executions.hardware,
            uncorrected.devices[3].ecc.mem_uncorrected);
  EXPECT_EQ(uncorrected.runtimes[3].executions.completed_with_err,
            uncorrected.devices[3].ecc.mem_uncorrected);
  EXPECT_EQ(uncorrected.runtimes[4].executions.hardware, 0u);
}

TEST(Instance, MultiNodeCollectivesPayInterNodeHops) {
  auto inst = Make("multi-node");
  const Snapshot s = inst->Read(seconds(120));
  const CollectiveCounters& ar = s.runtimes[0].collectives[0];
  ASSERT_FALSE(ar.latency.empty());
  // 4 nodes: 2 x 3 inter-node hops at 15 us each, on top of the intra-node hops.
  EXPECT_GE(LatencyHistogram::LowerEdge(ar.latency.buckets().front().first), 90e-6);
  const Window w = WindowAt(*inst, 60, 180);
  EXPECT_GT(w.runtimes[0].utilization, 85);
}

TEST(Instance, IdleAndIdleAllocated) {
  auto idle = Make("idle");
  const Snapshot s = idle->Read(seconds(60));
  EXPECT_TRUE(s.runtimes.empty());
  for (const CoreCounters& c : s.cores) EXPECT_EQ(c.busy_ns, 0u);

  auto held = Make("idle-allocated");
  const Window w = WindowAt(*held, 30, 90);
  ASSERT_EQ(w.runtimes.size(), 1u);
  EXPECT_EQ(w.runtimes[0].utilization, 0);
  const Snapshot h = held->Read(seconds(90));
  EXPECT_EQ(h.runtimes[0].cores.size(), 8u);
  EXPECT_GT(h.runtimes[0].memory->DeviceTotal(), 1u << 30);
  EXPECT_FALSE(h.runtimes[0].memory->models.front().is_running);
}

TEST(Instance, MixedRunsTrainingAndInferenceOnSeparateDevices) {
  auto inst = Make("mixed");
  const Snapshot s = inst->Read(seconds(90));
  ASSERT_EQ(s.runtimes.size(), 12u);
  std::set<std::string> kinds;
  for (const RuntimeSample& r : s.runtimes) kinds.insert(r.tag.substr(0, 4));
  EXPECT_EQ(kinds, (std::set<std::string>{"llam", "vllm"}));
  const Window w = WindowAt(*inst, 60, 120);
  for (const auto& r : w.runtimes) EXPECT_GT(r.utilization, 75) << r.tag;
}

constexpr std::string_view kFaultScenario = R"({
  "name": "faults",
  "runtimes": [
    {"name": "a", "tag": "a{rank}", "devices": "0-1", "load": "1s",
     "training": {"tokens_per_step": 65536, "warmup": {"steps": 0}}},
    {"name": "b", "tag": "b", "devices": [2], "load": "1s",
     "inference": {"requests_per_second": 50}}
  ],
  "faults": [
    {"type": "runtime_exit", "runtime": "b", "at": "60s"},
    {"type": "device_lost", "device": 1, "start": "20s", "end": "30s"},
    {"type": "nan_errors", "runtime": "a", "start": "10s", "end": "15s", "per_second": 2},
    {"type": "timeouts", "runtime": "b", "start": "10s", "per_second": 1},
    {"type": "device_reset", "at": "45s"}
  ]
})";

const RuntimeSample* Tagged(const Snapshot& s, std::string_view tag) {
  for (const RuntimeSample& r : s.runtimes) {
    if (r.tag == tag) return &r;
  }
  return nullptr;
}

TEST(Instance, FaultsHaveTheirEffects) {
  auto inst = FromJson(kFaultScenario);
  const Snapshot s9 = inst->Read(seconds(9));
  const Snapshot s18 = inst->Read(seconds(18));
  ASSERT_NE(Tagged(s18, "a0"), nullptr);
  EXPECT_EQ(Tagged(s18, "a0")->executions.numerical - Tagged(s9, "a0")->executions.numerical, 10u);
  EXPECT_EQ(Tagged(s18, "a1")->executions.completed_with_num_err, 10u);
  ASSERT_NE(Tagged(s18, "b"), nullptr);
  EXPECT_GE(Tagged(s18, "b")->executions.timed_out, 7u);

  // Device 1 lost: its reads fail, the runtime on it reports the error and the job stalls.
  const Snapshot s25 = inst->Read(seconds(25));
  EXPECT_FALSE(s25.devices[1].present);
  EXPECT_TRUE(s25.devices[0].present);
  EXPECT_EQ(Tagged(s25, "a1")->error, "nd1: device is not responding");
  EXPECT_TRUE(Tagged(s25, "a0")->error.empty());
  const Snapshot s29 = inst->Read(seconds(29));
  EXPECT_EQ(s29.cores[0].busy_ns, s25.cores[0].busy_ns) << "peers stall with the lost device";
  const Snapshot s40 = inst->Read(seconds(40));
  EXPECT_TRUE(s40.devices[1].present);
  EXPECT_GT(s40.cores[0].busy_ns, s29.cores[0].busy_ns);
  EXPECT_EQ(s40.epoch, 0u);

  // Device reset at 45 s: counters restart from zero, the epoch says so.
  const Snapshot s50 = inst->Read(seconds(50));
  EXPECT_EQ(s50.epoch, 1u);
  EXPECT_LT(s50.cores[0].busy_ns, s40.cores[0].busy_ns);
  EXPECT_LE(s50.cores[0].busy_ns, 5'000'000'000u);
  EXPECT_LT(Tagged(s50, "a0")->executions.completed, Tagged(s40, "a0")->executions.completed);

  // Runtime exit at 60 s.
  EXPECT_EQ(inst->Read(seconds(59)).runtimes.size(), 3u);
  const Snapshot s61 = inst->Read(seconds(61));
  EXPECT_EQ(s61.runtimes.size(), 2u);
  EXPECT_EQ(Tagged(s61, "b"), nullptr);
  const std::uint64_t core8 = s61.cores[8].busy_ns;
  EXPECT_EQ(inst->Read(seconds(90)).cores[8].busy_ns, core8) << "exited runtime's core stays idle";
}

constexpr std::string_view kHealthScenario = R"({
  "name": "health",
  "runtimes": [
    {"name": "a", "tag": "a{rank}", "devices": "0-1", "load": "1s",
     "training": {"tokens_per_step": 65536, "warmup": {"steps": 0}}}
  ],
  "faults": [
    {"type": "hardware_error", "device": 1, "error": "dma", "start": "10s", "end": "15s",
     "per_second": 2},
    {"type": "hardware_error", "device": 3, "error": "event", "start": "10s", "per_second": 1},
    {"type": "ecc", "device": 0, "severity": "repairable", "start": "10s", "end": "12s",
     "per_second": 1},
    {"type": "ecc", "device": 0, "severity": "uncorrected", "start": "20s", "end": "21s",
     "per_second": 1}
  ]
})";

TEST(Instance, HardwareErrorFaultsCountOnTheDeviceAndFailItsExecutions) {
  auto inst = FromJson(kHealthScenario);
  const Snapshot s9 = inst->Read(seconds(9));
  const Snapshot s30 = inst->Read(seconds(30));
  EXPECT_EQ(s9.devices[1].errors.Total(), 0u);
  EXPECT_EQ(s30.devices[1].errors.dma_abort, 10u);
  EXPECT_EQ(s30.devices[1].errors.events, 10u);  // each abort is an event too
  EXPECT_EQ(s30.devices[3].errors.events, 20u);  // events alone
  EXPECT_EQ(s30.devices[3].errors.dma_abort, 0u);
  EXPECT_EQ(s30.devices[0].errors.mem_ecc_repairable, 2u);
  EXPECT_EQ(s30.devices[0].errors.mem_ecc_uncorrected, 1u);
  EXPECT_EQ(s30.devices[0].ecc.mem_uncorrected, 1u);  // repairable ones are not in ecc
  // The runtime on devices 0 and 1 ran into the aborts, the repairable and the uncorrected errors;
  // the events on device 3 (not its device) fail nothing.
  EXPECT_EQ(Tagged(s30, "a1")->executions.hardware - Tagged(s9, "a1")->executions.hardware, 10u);
  EXPECT_EQ(Tagged(s30, "a0")->executions.hardware - Tagged(s9, "a0")->executions.hardware, 3u);
}

TEST(Instance, PowerFollowsTheLoadOfTheLastWholeMinute) {
  auto inst = Make("healthy-training", "sim:trn1.32xlarge");
  EXPECT_FALSE(inst->Read(Nanos(0)).devices[0].power.unavailable.empty()) << "no reading at 0";
  // Loading (the first seconds): near idle; training at full tilt: most of the full-load figure.
  const Snapshot early = inst->Read(seconds(3));
  ASSERT_EQ(early.devices[0].power.unavailable, "");
  EXPECT_LT(early.devices[0].power.average_percent, 5);
  const Snapshot busy = inst->Read(seconds(150));
  const DevicePower& p = busy.devices[0].power;
  ASSERT_EQ(p.unavailable, "");
  EXPECT_GT(p.average_percent, 0.6 * inst->spec().power_full_percent);
  EXPECT_LE(p.average_percent, 1.05 * inst->spec().power_full_percent);
  EXPECT_LT(p.min_percent, p.average_percent);
  EXPECT_GT(p.max_percent, p.average_percent);
  // Refreshed once a minute: the same reading within the minute, a new one after it.
  EXPECT_EQ(inst->Read(seconds(170)).devices[0].power.average_percent, p.average_percent);
  // An idle instance draws its idle figure, as inf2 reads idle (0.56%).
  auto idle = Make("idle", "sim:inf2.48xlarge");
  const DevicePower q = idle->Read(seconds(150)).devices[5].power;
  ASSERT_EQ(q.unavailable, "");
  EXPECT_NEAR(q.average_percent, 0.6, 0.05);
}

TEST(Instance, MemoryGrowthFillsTheDevicesUpToItsLimit) {
  auto inst = Make("memory-pressure");
  const auto device_memory = [&](int t) {
    const Snapshot s = inst->Read(seconds(t));
    std::uint64_t bytes = 0;
    for (const RuntimeSample& r : s.runtimes) {
      for (const CoreMemory& c : r.memory->cores) {
        if (c.core / static_cast<std::uint32_t>(inst->spec().cores_per_device()) == 0)
          bytes += c.Total();
      }
    }
    return static_cast<double>(bytes) / static_cast<double>(inst->spec().hbm_bytes);
  };
  const double before = device_memory(50);
  const double later = device_memory(150);
  EXPECT_GT(later, before + 0.05) << before << " -> " << later;
  EXPECT_LE(device_memory(3600), 0.97 + 1e-9);  // the fault's limit
  EXPECT_GE(device_memory(3600), 0.96);
}

TEST(Instance, InventoryListsLiveProcessesAndExpectations) {
  auto inst = Make("straggler");
  const v1::Inventory inv = inst->Inventory(seconds(60));
  ASSERT_EQ(inv.processes_size(), 16);
  EXPECT_EQ(inv.processes(0).pid(), 41200u);
  EXPECT_EQ(inv.processes(5).device_indices(0), 5u);
  EXPECT_EQ(inv.scenario(), "straggler");
  const std::vector<ExpectedVerdict> early = inst->Expected(seconds(10));
  EXPECT_EQ(early.front().diagnosis, "");
  const std::vector<ExpectedVerdict> late = inst->Expected(seconds(60));
  EXPECT_EQ(late.front().diagnosis, "straggler");
  EXPECT_EQ(late.back().tag, "instance");

  auto ecc = Make("ecc-degradation");
  const std::vector<ExpectedVerdict> v = ecc->Expected(seconds(200));
  EXPECT_EQ(v[3].diagnosis, "errors");
  EXPECT_EQ(v[4].diagnosis, "healthy");
}

namespace cluster {

std::unique_ptr<Instance> Node(const std::string& scenario, int node) {
  Result<Scenario> s = LoadScenario(scenario);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  s->node = node;
  Result<std::unique_ptr<Instance>> i = Instance::Create(*FindPreset(s->instance), *s, 1);
  EXPECT_TRUE(i.ok()) << i.status().ToString();
  return i.ok() ? std::move(*i) : nullptr;
}

double MeanUtilization(const Window& w) {
  double sum = 0;
  for (const auto& r : w.runtimes) sum += r.utilization;
  return w.runtimes.empty() ? 0 : sum / static_cast<double>(w.runtimes.size());
}

double MeanShare(const Window& w) {
  double sum = 0;
  for (const auto& r : w.runtimes) sum += r.collective_share;
  return w.runtimes.empty() ? 0 : sum / static_cast<double>(w.runtimes.size());
}

}  // namespace cluster

// The four nodes of cluster-straggler agree on the job's steps: each completes the same number of
// executions, node 2 (40% slower) is the busiest and waits least in collectives, and the others
// wait for it.
TEST(Instance, ClusterNodesAgreeOnStepsAndWaitForTheSlowNode) {
  std::vector<Window> w;
  for (int node = 0; node < 4; ++node) {
    auto inst = cluster::Node("cluster-straggler", node);
    w.push_back(WindowAt(*inst, 60, 180));
    EXPECT_EQ(inst->Inventory(seconds(60)).instance_info().instance_name(),
              "ip-10-0-0-" + std::to_string(4 + node));
  }
  for (int node = 0; node < 4; ++node) {
    ASSERT_EQ(w[node].runtimes.size(), 16u);
    EXPECT_EQ(w[node].runtimes[0].executions, w[0].runtimes[0].executions) << "node " << node;
    EXPECT_EQ(w[node].runtimes[0].tag, "llama3-8b-node" + std::to_string(node) + "-rank0");
    if (node == 2) continue;
    EXPECT_GT(cluster::MeanUtilization(w[2]), cluster::MeanUtilization(w[node]) + 12)
        << "node " << node;
    EXPECT_LT(cluster::MeanShare(w[2]), 0.6 * cluster::MeanShare(w[node])) << "node " << node;
    EXPECT_GT(cluster::MeanShare(w[node]), 0.15) << "node " << node;
  }
  // The same job on one node alone, without the slow node, completes more steps.
  Result<Scenario> alone = LoadScenario("cluster-straggler");
  alone->faults.clear();
  auto fast = Instance::Create(*FindPreset("trn1.32xlarge"), *alone, 1).value();
  EXPECT_GT(WindowAt(*fast, 60, 180).runtimes[0].executions, w[0].runtimes[0].executions);
}

// cluster-hang: from 2 min no execution completes on any node; the stuck rank is outside every
// collective while every other rank has one in flight the whole time.
TEST(Instance, HangStopsTheJobOnEveryNode) {
  for (int node : {0, 3}) {
    auto inst = cluster::Node("cluster-hang", node);
    const Window before = WindowAt(*inst, 60, 110);
    const Window after = WindowAt(*inst, 125, 185);
    ASSERT_EQ(after.runtimes.size(), 16u);
    for (const auto& r : after.runtimes) {
      EXPECT_GT(before.runtimes[0].executions, 0u);
      EXPECT_EQ(r.executions, 0u) << "node " << node << " " << r.tag;
      if (node == 3 && r.tag == "llama3-8b-node3-rank5") {
        EXPECT_LT(r.collective_share, 0.05) << r.tag;
      } else {
        EXPECT_GT(r.collective_share, 0.9) << "node " << node << " " << r.tag;
      }
    }
  }
}

TEST(Instance, ClusterNodeAndFaultNodeMustBeInTheCluster) {
  Result<Scenario> s = LoadScenario("cluster-straggler");
  s->node = 4;
  EXPECT_EQ(Instance::Create(*FindPreset("trn1.32xlarge"), *s, 1).status().message(),
            "cluster-straggler: node 4 is not one of the cluster's 4 nodes (0-3)");
  s->node = 0;
  s->nodes = 2;
  const std::string message =
      Instance::Create(*FindPreset("trn1.32xlarge"), *s, 1).status().message();
  EXPECT_NE(message.find("faults[0]: node 2 is not one of the cluster's 2"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace neuronmon::simdev
