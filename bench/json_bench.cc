// neuron-monitor document rendering: a trn2.48xlarge running healthy-training (16 runtimes),
// every group subscribed, on a 192-vCPU host; the document is rendered into a reused string.
// Target: >= 200 MB/s of output on one core (bytes_per_second).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>

#include "daemon/core/daemon_core.h"
#include "daemon/core/host_reader.h"
#include "exporter/monitor_json.h"

namespace {

using namespace neuronmon;
using std::chrono::seconds;

constexpr int kHostCpus = 192;  // trn2.48xlarge

// /proc/stat of a busy 192-vCPU host after `tick` seconds.
std::string StatText(int tick) {
  const auto t = static_cast<std::uint64_t>(tick);
  std::string cpus;
  std::uint64_t user_total = 0, system_total = 0, idle_total = 0;
  for (int k = 0; k < kHostCpus; ++k) {
    const std::uint64_t user = 1000 + (20 + k % 50) * t + t / 3;
    const std::uint64_t system = 200 + (3 + k % 7) * t;
    const std::uint64_t idle = 50000 + (77 - k % 50 - k % 7) * t;
    user_total += user;
    system_total += system;
    idle_total += idle;
    cpus += "cpu" + std::to_string(k) + " " + std::to_string(user) + " 0 " +
            std::to_string(system) + " " + std::to_string(idle) + " 0 0 0 0 0 0\n";
  }
  return "cpu  " + std::to_string(user_total) + " 0 " + std::to_string(system_total) + " " +
         std::to_string(idle_total) + " 0 0 0 0 0 0\n" + cpus + "ctxt " +
         std::to_string(1000000 + 48213 * tick) + "\nbtime 1767225000\n";
}

constexpr char kMeminfo[] =
    "MemTotal:       2113421216 kB\nMemAvailable:   2053000000 kB\n"
    "SwapTotal:             0 kB\nSwapFree:              0 kB\n";

exporter::MonitorState Trn2TrainingState() {
  auto backend =
      daemon::MakeBackend({"sim:trn2.48xlarge", "healthy-training", 1, 1}, MonoTime(seconds(0)));
  auto tick = std::make_shared<int>(0);
  daemon::DaemonCore core({seconds(1), std::chrono::minutes(2), "bench"}, std::move(*backend),
                          [tick] { return daemon::HostFromText(StatText((*tick)++), kMeminfo); });
  auto sub = daemon::Subscription::FromRequest(v1::Subscribe(), seconds(1));
  exporter::MonitorState state;
  for (int t = 0; t <= 60; ++t) {
    const std::uint64_t seq = core.Sample(MonoTime(seconds(t)), WallTime(seconds(t)));
    if (auto report = core.ReportAt(
            *sub, seq, t == 0 ? daemon::ReportScope::kFirst : daemon::ReportScope::kLive))
      state.Apply(*report);
  }
  state.SetInventory(core.inventory());
  return state;
}

void BM_RenderMonitorJson(benchmark::State& bench, bool include_extensions) {
  const exporter::MonitorState state = Trn2TrainingState();
  const exporter::RenderOptions options{.include_extensions = include_extensions};
  std::string out;
  std::int64_t bytes = 0;
  for (auto _ : bench) {
    out.clear();
    exporter::AppendMonitorJson(state, options, out);
    benchmark::DoNotOptimize(out.data());
    bytes += static_cast<std::int64_t>(out.size());
  }
  bench.SetBytesProcessed(bytes);
  bench.counters["document_bytes"] = static_cast<double>(out.size());
  bench.counters["runtimes"] = static_cast<double>(state.runtimes().size());
}
BENCHMARK_CAPTURE(BM_RenderMonitorJson, trn2_healthy_training, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderMonitorJson, trn2_healthy_training_aws_only, false)
    ->Unit(benchmark::kMicrosecond);

// Merging one report with every group into the state (neuron-monitor does it once per window).
void BM_ApplyReport(benchmark::State& bench) {
  auto backend =
      daemon::MakeBackend({"sim:trn2.48xlarge", "healthy-training", 1, 1}, MonoTime(seconds(0)));
  daemon::DaemonCore core({seconds(1), std::chrono::minutes(2), "bench"}, std::move(*backend),
                          [] { return daemon::HostFromText(StatText(0), kMeminfo); });
  auto sub = daemon::Subscription::FromRequest(v1::Subscribe(), seconds(1));
  for (int t = 0; t <= 30; ++t) core.Sample(MonoTime(seconds(t)), WallTime(seconds(t)));
  const v1::Report report =
      *core.ReportAt(*sub, core.history().newest_seq(), daemon::ReportScope::kFirst);
  exporter::MonitorState state;
  for (auto _ : bench) {
    state.Apply(report);
    benchmark::DoNotOptimize(&state);
  }
}
BENCHMARK(BM_ApplyReport)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
