// History memory: the default retention (10 min at the default 1 s period) of a trn2.48xlarge
// running healthy-training, measured with mallinfo2 around filling the ring. Also the cost of one
// report.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include "daemon/core/daemon_core.h"
#include "daemon/core/report/report_builder.h"

namespace {

using namespace neuronmon;
using namespace neuronmon::daemon;

std::unique_ptr<DaemonCore> Core(const char* device) {
  auto backend = MakeBackend({device, "healthy-training", 1, 1}, MonoTime(std::chrono::seconds(0)));
  return std::make_unique<DaemonCore>(
      CoreOptions{std::chrono::seconds(1), std::chrono::minutes(10), "bench"}, std::move(*backend),
      [] { return ReadHost(); });
}

void BM_HistoryMemoryDefaultRetention(benchmark::State& state, const char* device) {
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    auto core = Core(device);
    for (int t = 0; t < 1200; ++t) {  // twice the retention: the ring is full and evicting
      core->Sample(MonoTime(std::chrono::seconds(t)), WallTime(std::chrono::seconds(t)));
    }
    const std::size_t after = mallinfo2().uordblks;
    state.counters["snapshots"] = static_cast<double>(core->history().size());
    state.counters["MiB"] = static_cast<double>(after - before) / (1024.0 * 1024.0);
  }
}
BENCHMARK_CAPTURE(BM_HistoryMemoryDefaultRetention, trn2, "sim:trn2.48xlarge")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_HistoryMemoryDefaultRetention, trn1_32xlarge, "sim:trn1.32xlarge")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Building and encoding one live report with every group for trn2.48xlarge.
void BM_LiveFrameAllGroups(benchmark::State& state) {
  auto core = Core("sim:trn2.48xlarge");
  int t = 0;
  for (; t < 60; ++t)
    core->Sample(MonoTime(std::chrono::seconds(t)), WallTime(std::chrono::seconds(t)));
  auto sub = Subscription::FromRequest(v1::Subscribe(), std::chrono::seconds(1));
  std::size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    core->Sample(MonoTime(std::chrono::seconds(t)), WallTime(std::chrono::seconds(t)));
    ++t;
    state.ResumeTiming();
    bytes = core->LiveFrame(*sub)->size();
  }
  state.counters["frame_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_LiveFrameAllGroups)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
