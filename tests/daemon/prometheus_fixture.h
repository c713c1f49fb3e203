// Test helpers for the Prometheus tests: a DaemonCore over the simulator sampled at fixed times
// with fixed host files, lookups in an Exposition, and `promtool check metrics`.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/core/daemon_core.h"
#include "daemon/core/metrics/prometheus.h"

namespace neuronmon::daemon::testing {

inline constexpr const char* kPromtool = "/usr/bin/promtool";

class SimCore {
 public:
  // sim:`preset` running `scenario` (a name or a file), seed 1, period 1 s, sampled at each of
  // `seconds` after its start; /proc/stat and /proc/meminfo are fixed texts whose counters grow
  // with each sample. Throws std::runtime_error when the backend cannot be built.
  SimCore(const std::string& preset, const std::string& scenario, const std::vector<int>& seconds);

  DaemonCore& core() { return *core_; }
  DaemonStats& stats() { return stats_; }  // the fixed stats Build passes
  // BuildMetrics over the newest 5 s window with fixed daemon stats and process metrics.
  // `end` (when given) replaces the newest snapshot; `findings` is passed through.
  Exposition Build(const Snapshot* end = nullptr, const FindingsByPid* findings = nullptr) const;

 private:
  std::unique_ptr<DaemonCore> core_;
  DaemonStats stats_;
  ScrapeStats scrapes_;
  Result<procfs::ProcessMetrics> process_;
};

// A trn1.32xlarge scenario file: "short-lived" (device 0) exits at 20 s, "long-lived" (devices
// 1-15) keeps training. Written once to the temp directory; returns its path.
std::string ExitingScenario();

// The family rendered under `name`, or nullptr.
const MetricFamily* Family(const Exposition& e, const std::string& name);
// The value of `label` in `s`, or "" when absent.
std::string LabelOf(const MetricSample& s, const std::string& label);
std::set<std::string> LabelNames(const MetricSample& s);
// The value of the one sample of family `name` whose labels include all of `labels`; NaN when
// there is none, and a test failure when there are several.
double Value(const Exposition& e, const std::string& name,
             const std::map<std::string, std::string>& labels);

// Runs `promtool check metrics` on `exposition`; returns its exit code and sets `output`.
int RunPromtool(const std::string& exposition, std::string* output);

}  // namespace neuronmon::daemon::testing
