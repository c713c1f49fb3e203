// A DaemonCore over an in-memory simulated instance, for the analyzer's tests: sampled at whole
// simulated seconds, beside a twin instance that tells the ground truth; and what the tests read
// of an Analysis (its verdicts, evidence that contradicts itself). Simulated time only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "daemon/core/daemon_core.h"
#include "proto/names/names.h"
#include "simdev/instance.h"

namespace neuronmon::daemon::sim_run {

// A DaemonCore over an in-memory simdev instance, sampled once per simulated second.
struct SimRun {
  // `edit` (when given) changes every inventory the backend gives (e.g. adds the kubelet's
  // allocations, which the simulator does not make).
  explicit SimRun(const simdev::InstanceSpec& spec, const simdev::Scenario& scenario,
                  std::uint64_t seed = 1, std::function<void(v1::Inventory&)> edit = nullptr) {
    auto instance = simdev::Instance::Create(spec, scenario, seed);
    EXPECT_TRUE(instance.ok()) << instance.status().ToString();
    truth = std::move(*instance);
    auto made = simdev::Instance::Create(spec, scenario, seed);
    // The backend the daemon samples: the same scenario, seed and times as `truth`.
    struct Backend final : daemon::Backend {
      std::unique_ptr<simdev::Instance> sim;
      std::function<void(v1::Inventory&)> edit;
      v1::Inventory Inventory(MonoTime now) override {
        v1::Inventory inv = sim->Inventory(now.time_since_epoch());
        if (edit) edit(inv);
        return inv;
      }
      Snapshot Read(MonoTime now) override { return sim->Read(now.time_since_epoch()); }
      std::string Describe() const override { return "test"; }
    };
    auto backend = std::make_unique<Backend>();
    backend->sim = std::move(*made);
    backend->edit = std::move(edit);
    core = std::make_unique<DaemonCore>(
        CoreOptions{std::chrono::seconds(1), std::chrono::minutes(2), "test"}, std::move(backend),
        nullptr);
  }
  const Analysis& At(int t) {
    core->Sample(MonoTime(std::chrono::seconds(t)), WallTime(std::chrono::seconds(1767225600 + t)));
    return *core->latest_analysis();
  }
  std::unique_ptr<simdev::Instance> truth;
  std::unique_ptr<DaemonCore> core;
};

// Every piece of evidence states a comparison of its value with its threshold; it must be true.
inline int FalseEvidence(const Analysis& a, std::string* example) {
  int wrong = 0;
  auto check = [&](const v1::Finding& f) {
    for (const v1::Evidence& e : f.evidence()) {
      const double v = e.value(), t = e.threshold();
      const std::string& c = e.comparison();
      const bool holds = c == "<"    ? v < t
                         : c == "<=" ? v <= t
                         : c == ">"  ? v > t
                         : c == ">=" ? v >= t
                                     : false;
      if (!holds) {
        ++wrong;
        *example = std::string(FindingKindName(f.kind())) + ": " + e.name() + " " +
                   std::to_string(v) + " " + c + " " + std::to_string(t);
      }
    }
  };
  for (const auto& [pid, findings] : a.runtimes)
    for (const v1::Finding& f : findings) check(f);
  check(a.instance);
  return wrong;
}

inline std::string Verdict(const Analysis& a, std::uint32_t pid) {
  if (pid == 0) return FindingKindName(a.instance.kind());
  auto it = a.runtimes.find(pid);
  return it == a.runtimes.end() || it->second.empty() ? ""
                                                      : FindingKindName(it->second.front().kind());
}

// Before any verdict: no finding at all on the first sample (nothing to compare yet), then
// "collecting data" while applications run unjudged — not "no Neuron application is running",

}  // namespace neuronmon::daemon::sim_run
