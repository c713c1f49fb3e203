// The real backend's device layer: one read of a fabricated trn2.48xlarge driver tree (16 devices
// of 8 physical cores, as driver 2.28 lays it out) with SysfsTree — every file opened, read and
// closed each time. The budget for the whole backend is 0.5% of one core at 1 Hz (5 ms of
// CPU per read); bench/README.md has the figures.
#include <benchmark/benchmark.h>

#include "neurondev/sysfs_tree.h"
#include "tests/neurondev/tree_writer.h"

namespace {

using namespace neuronmon;

void BM_ReadTrn2Tree(benchmark::State& state) {
  neurondev::testing::FakeTree tree;
  tree.WriteDriverVersion("2.28.4.0");
  for (int n = 0; n < 16; ++n) tree.WriteTrn2Device(n);
  const neurondev::SysfsTree sysfs(tree.root());
  std::size_t errors = 0;
  for (auto _ : state) {
    neurondev::TreeReading r = sysfs.Read();
    for (const neurondev::DeviceReading& d : r.devices) errors += d.errors.size();
    benchmark::DoNotOptimize(r);
  }
  if (errors != 0) state.SkipWithError("the fabricated tree read with errors");
  state.counters["devices"] = 16;
}
BENCHMARK(BM_ReadTrn2Tree)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
