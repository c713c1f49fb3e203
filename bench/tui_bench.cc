// neuron-top's frame cost: building one 200x60 frame of a trn2.48xlarge running the mixed scenario
// (12 runtimes), and the whole Render -> canvas diff path for an unchanged and a changed frame.
#include <benchmark/benchmark.h>

#include "daemon/core/daemon_core.h"
#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/view.h"

namespace {

using namespace neuronmon;

tui::Model BuildModel(const char* device, const char* scenario) {
  const MonoTime start(std::chrono::seconds(0));
  auto backend = daemon::MakeBackend({device, scenario, 1, 1}, start);
  daemon::DaemonCore core({std::chrono::seconds(1), std::chrono::minutes(10), "bench"},
                          std::move(*backend), nullptr);
  const daemon::Subscription sub =
      *daemon::Subscription::FromRequest(v1::Subscribe(), std::chrono::seconds(1));
  tui::Model model;
  for (int t = 0; t <= 300; ++t) {
    const std::uint64_t seq =
        core.Sample(start + std::chrono::seconds(t), WallTime(std::chrono::seconds(t)));
    if (t == 0) model.SetWelcome(core.MakeWelcome(start));
    if (auto r = core.ReportAt(sub, seq,
                               t == 0 ? daemon::ReportScope::kFirst : daemon::ReportScope::kLive))
      model.Apply(*r);
  }
  return model;
}

void BM_RenderFrame(benchmark::State& state, const char* device, const char* scenario, int w,
                    int h) {
  const tui::Model model = BuildModel(device, scenario);
  tui::ViewState view;
  view.version = "bench";
  view.expanded = {"d0", "d0/c0"};
  tui::TextCanvas canvas(w, h);
  for (auto _ : state) benchmark::DoNotOptimize(tui::Render(model, view, canvas));
  state.counters["cells"] = w * h;
}
BENCHMARK_CAPTURE(BM_RenderFrame, trn2_mixed_200x60, "sim:trn2.48xlarge", "mixed", 200, 60)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderFrame, trn2_mixed_80x24, "sim:trn2.48xlarge", "mixed", 80, 24)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderFrame, trn1_32xlarge_120x40, "sim:trn1.32xlarge", "healthy-training",
                  120, 40)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
