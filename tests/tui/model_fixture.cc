#include "tests/tui/model_fixture.h"

#include "daemon/core/daemon_core.h"
#include "tests/daemon/unmeasured_backend.h"

namespace neuronmon::tui::testing {
namespace {

std::string Stat(int t) {
  // Two CPUs whose busy share changes with time, deterministically.
  const auto user = static_cast<unsigned long>(1000 + 37 * t);
  const auto idle = static_cast<unsigned long>(5000 + 60 * t);
  std::string s = "cpu  " + std::to_string(2 * user) + " 0 " + std::to_string(200 + 3 * t) + " " +
                  std::to_string(2 * idle) + " 0 0 0 0 0 0\n";
  s += "cpu0 " + std::to_string(user) + " 0 " + std::to_string(100 + 2 * t) + " " +
       std::to_string(idle) + " 0 0 0 0 0 0\n";
  s += "cpu1 " + std::to_string(user) + " 0 " + std::to_string(100 + t) + " " +
       std::to_string(idle) + " 0 0 0 0 0 0\n";
  s += "ctxt " + std::to_string(100000 + 1500 * t) + "\nbtime 1767225600\n";
  return s;
}

constexpr const char* kMeminfo =
    "MemTotal:       32768000 kB\nMemFree:         8000000 kB\nMemAvailable:   20000000 kB\n"
    "Buffers:          100000 kB\nCached:          4000000 kB\nSwapTotal:             0 kB\n"
    "SwapFree:              0 kB\n";

}  // namespace

Model BuildModel(const std::string& device, const std::string& scenario, int seconds,
                 const Unmeasured* unmeasured) {
  auto backend =
      daemon::MakeBackend({device, scenario, 1, 1}, MonoTime(std::chrono::seconds(1000)));
  if (unmeasured != nullptr) {
    *backend =
        std::make_unique<daemon::testing::UnmeasuredBackend>(std::move(*backend), *unmeasured);
  }
  return BuildModelOver(std::move(*backend), seconds);
}

Model BuildModelOver(std::unique_ptr<daemon::Backend> backend, int seconds) {
  using namespace daemon;
  const MonoTime start(std::chrono::seconds(1000));
  int t = 0;
  DaemonCore core({std::chrono::seconds(1), std::chrono::minutes(10), "test"}, std::move(backend),
                  [&t] { return HostFromText(Stat(t), kMeminfo); });
  v1::Subscribe request;
  for (v1::Group g : AllGroups()) {
    if (g != v1::GROUP_TOTALS) request.add_groups()->set_group(g);
  }
  const Subscription sub = *Subscription::FromRequest(request, std::chrono::seconds(1));
  Model model;
  for (t = 0; t <= seconds; ++t) {
    const std::uint64_t seq = core.Sample(start + std::chrono::seconds(t),
                                          WallTime(std::chrono::seconds(1767225600 + t)));
    if (t == 0) model.SetWelcome(core.MakeWelcome(start));
    if (auto report = core.ReportAt(sub, seq,
                                    t == 0        ? ReportScope::kFirst
                                    : t < seconds ? ReportScope::kReplay
                                                  : ReportScope::kLive))
      model.Apply(*report);
  }
  model.connection = ConnectionState::kLive;
  model.endpoint = "unix:/run/neuron-monitor/neuron-monitord.sock";
  return model;
}

}  // namespace neuronmon::tui::testing
