// simdev: the cost of reading a simulated instance. The target (issue: simdev) is that reading a
// trn2.48xlarge once per simulated second for a simulated hour costs well under one second of CPU.
#include <benchmark/benchmark.h>

#include "simdev/instance.h"
#include "simdev/scenario_library.h"

namespace {

using namespace neuronmon;
using namespace neuronmon::simdev;

std::unique_ptr<Instance> Make(const char* device, const char* scenario) {
  auto made = Instance::Create(*ParseDeviceSpec(device), *LoadScenario(scenario), 1);
  return std::move(made).value();
}

// One simulated hour read once per simulated second (3600 reads).
void BM_HourAtOneHertz(benchmark::State& state, const char* device, const char* scenario) {
  for (auto _ : state) {
    auto inst = Make(device, scenario);
    for (int t = 0; t < 3600; ++t) {
      benchmark::DoNotOptimize(inst->Read(std::chrono::seconds(t)));
    }
  }
  state.counters["reads_per_s"] = benchmark::Counter(
      3600.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_HourAtOneHertz, trn2_healthy_training, "sim:trn2.48xlarge", "healthy-training")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HourAtOneHertz, trn2_inference_serving, "sim:trn2.48xlarge",
                  "inference-serving")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HourAtOneHertz, trn2_mixed, "sim:trn2.48xlarge", "mixed")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HourAtOneHertz, ultraserver_healthy_training, "sim:trn2-ultraserver",
                  "healthy-training")
    ->Unit(benchmark::kMillisecond);

// A single jump of one simulated hour.
void BM_HourJump(benchmark::State& state) {
  for (auto _ : state) {
    auto inst = Make("sim:trn2.48xlarge", "healthy-training");
    benchmark::DoNotOptimize(inst->Read(std::chrono::hours(1)));
  }
}
BENCHMARK(BM_HourJump)->Unit(benchmark::kMillisecond);

// One read of a steady trn2.48xlarge, one second after the previous one.
void BM_ReadOneSecond(benchmark::State& state) {
  auto inst = Make("sim:trn2.48xlarge", "healthy-training");
  int t = 60;
  for (auto _ : state) benchmark::DoNotOptimize(inst->Read(std::chrono::seconds(t++)));
}
BENCHMARK(BM_ReadOneSecond)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
