// Fuzzes neuron-monitor's -c configuration: ParseMonitorConfig(text) (AWS's format, comments
// allowed, RE2 tag filters), then MonitorSubscriptions(config), the Subscribes neuron-monitor
// sends. Invariants: no crash and no exception escapes; an accepted config yields at least one
// subscription, no more than neuron-monitor can tell apart (MonitorState::kMaxSources — RunMonitor
// passes each one's index to MonitorState::Apply, which REQUIRES source < kMaxSources), and every
// one of them is accepted by the daemon (Subscription::FromRequest with the default limits), so a
// config neuron-monitor accepts is never refused later by the daemon.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/report/subscription.h"
#include "exporter/monitor_config.h"
#include "exporter/monitor_json.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("monitor_config_fuzz", what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<exporter::MonitorConfig> config = exporter::ParseMonitorConfig(text, "fuzz.conf");
  if (!config.ok()) {
    if (!config.status().message().starts_with("fuzz.conf")) Fail("an error not naming the file");
    return 0;
  }
  const std::vector<v1::Subscribe> subs = exporter::MonitorSubscriptions(*config);
  if (subs.empty()) Fail("an accepted config subscribes to nothing");
  if (subs.size() > exporter::MonitorState::kMaxSources) {
    Fail("an accepted config makes " + std::to_string(subs.size()) +
         " subscriptions; neuron-monitor tells at most " +
         std::to_string(exporter::MonitorState::kMaxSources) + " apart");
  }
  for (const v1::Subscribe& s : subs) {
    Result<daemon::Subscription> sub =
        daemon::Subscription::FromRequest(s, std::chrono::seconds(1));
    if (!sub.ok()) Fail("the daemon refuses a subscription: " + sub.status().message());
  }
  return 0;
}
