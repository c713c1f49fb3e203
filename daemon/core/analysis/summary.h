// Internals of the Analyzer (analyzer.h): the instance's one summary finding over the runtimes'
// verdicts (docs/diagnosis.md, "Instance summary") — a hang, errors, a straggler or memory
// pressure anywhere names its culprit; otherwise the kind most applications share — and what the
// evaluation did without (signals no rule could judge an application for). Not part of the
// daemon's API. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/core/analysis/analysis.h"

namespace neuronmon::daemon::analysis_internal {

// What an evaluation did without: the signals candidates lacked, by pid.
struct Gaps {
  std::map<std::uint32_t, std::string> undetermined;  // no rule could judge these applications
  std::set<std::string> lacking;                      // what judged candidates did without
};

// The instance finding over `a.runtimes`, since `now_ns`; `any_runtime`: whether any application
// is running (judged or not yet). A culprit's straggler and hang detail are the instance's. A
// failed device (`devices`: every device's health over the window) keeps the instance from reading
// healthy: it becomes a critical `errors` finding naming the device, with its reason and advice.
v1::Finding Summarize(const Analysis& a, bool any_runtime, std::int64_t now_ns, const Gaps& gaps,
                      const std::vector<v1::DeviceHealth>& devices = {});
// The same over the applications alone.
v1::Finding SummarizeApplications(const Analysis& a, bool any_runtime, std::int64_t now_ns,
                                  const Gaps& gaps);

}  // namespace neuronmon::daemon::analysis_internal
