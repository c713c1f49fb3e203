// The real backend's device layer on a fabricated trn2.48xlarge driver tree (16 devices of 8
// physical cores, as driver 2.28 lays it out): one SysfsTree::Read() — every file opened, read and
// closed each time — and one SysfsSampler::Sample() — the files kept open and re-read with one
// pread each. The sampler's arguments are SamplerOptions: rediscover_every (0: never after the
// first discovery) and slow_every (1: every file at every sample, exactly what Read() returns).
// The budget for the whole backend is 0.5% of one core at 1 Hz (5 ms of CPU per read);
// bench/README.md has the figures.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <limits>

#include "neurondev/sysfs_tree.h"
#include "tests/neurondev/tree_writer.h"

namespace {

using namespace neuronmon;

void WriteTrn2Tree(const neurondev::testing::FakeTree& tree) {
  tree.WriteDriverVersion("2.28.4.0");
  for (int n = 0; n < 16; ++n) tree.WriteTrn2Device(n);
}

std::size_t Errors(const neurondev::TreeReading& r) {
  std::size_t errors = r.errors.size();
  for (const neurondev::DeviceReading& d : r.devices) errors += d.errors.size() + d.absent.size();
  return errors;
}

void BM_ReadTrn2Tree(benchmark::State& state) {
  neurondev::testing::FakeTree tree;
  WriteTrn2Tree(tree);
  const neurondev::SysfsTree sysfs(tree.root());
  std::size_t errors = 0;
  for (auto _ : state) {
    neurondev::TreeReading r = sysfs.Read();
    errors += Errors(r);
    benchmark::DoNotOptimize(r);
  }
  if (errors != 0) state.SkipWithError("the fabricated tree read with errors");
  state.counters["devices"] = 16;
  // Descriptors kept between reads; the sampler reports its own (and CSV wants the same counters).
  state.counters["open_files"] = 0;
}
BENCHMARK(BM_ReadTrn2Tree)->Unit(benchmark::kMillisecond);

void BM_SysfsSampler_Trn2_16Devices(benchmark::State& state) {
  neurondev::testing::FakeTree tree;
  WriteTrn2Tree(tree);
  neurondev::SamplerOptions options;
  options.rediscover_every = state.range(0) > 0 ? static_cast<std::uint32_t>(state.range(0))
                                                : std::numeric_limits<std::uint32_t>::max();
  options.slow_every = static_cast<std::uint32_t>(state.range(1));
  neurondev::SysfsSampler sampler(tree.root(), {}, options);
  std::size_t errors = Errors(sampler.Sample());  // the first discovery
  for (auto _ : state) {
    neurondev::TreeReading r = sampler.Sample();
    errors += Errors(r);
    benchmark::DoNotOptimize(r);
  }
  if (errors != 0) state.SkipWithError("the fabricated tree read with errors");
  state.counters["devices"] = 16;
  state.counters["open_files"] = static_cast<double>(sampler.open_files());
}
BENCHMARK(BM_SysfsSampler_Trn2_16Devices)
    ->ArgNames({"rediscover_every", "slow_every"})
    ->Args({300, 1})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({300, 10})
    ->Args({300, 20})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
