#include "daemon/core/probes.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "proto/common/terminal_text.h"

namespace neuronmon::daemon {
namespace {

std::string Seconds(Nanos d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

std::string PeriodText(Nanos period) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", std::chrono::duration<double>(period).count());
  return text;
}

}  // namespace

ProbeCheck CheckSampling(const ProbeInput& in) {
  ProbeCheck c{.name = "sampling", .ok = false, .detail = ""};
  const Snapshot* newest = in.history != nullptr ? in.history->newest() : nullptr;
  if (newest == nullptr) {
    const Nanos up = in.now - in.started;
    c.ok = up <= std::max(kProbeStartupGrace, 3 * in.period);
    c.detail = "no sample yet (up " + Seconds(up) + ")";
    return c;
  }
  const Nanos age = in.now - newest->mono;
  c.ok = age <= 3 * in.period;
  c.detail = "last sample " + Seconds(age) + " ago (period " + PeriodText(in.period) + ")";
  return c;
}

ProbeResult Liveness(const ProbeInput& in) {
  ProbeResult r;
  r.checks.push_back(CheckSampling(in));
  r.ok = r.checks.back().ok;
  return r;
}

ProbeResult Readiness(const ProbeInput& in) {
  ProbeResult r = Liveness(in);
  const Snapshot* newest = in.history != nullptr ? in.history->newest() : nullptr;
  r.checks.push_back({.name = "first_sample",
                      .ok = newest != nullptr,
                      .detail = newest != nullptr ? "sample " + std::to_string(newest->seq)
                                                  : std::string("no sample yet")});
  if (newest == nullptr) {
    r.checks.push_back({.name = "backend", .ok = false, .detail = "not read yet"});
  } else if (!newest->error.empty()) {
    r.checks.push_back({.name = "backend", .ok = false, .detail = newest->error});
  } else {
    r.checks.push_back({.name = "backend", .ok = true, .detail = "answering"});
  }
  const std::size_t held = in.history != nullptr ? in.history->size() : 0;
  r.checks.push_back({.name = "history",
                      .ok = held >= 2,
                      .detail = std::to_string(held) + (held == 1 ? " sample" : " samples") +
                                (held >= 2 ? "" : " (rates need two)")});
  r.ok = std::all_of(r.checks.begin(), r.checks.end(), [](const ProbeCheck& c) { return c.ok; });
  return r;
}

std::string ProbeText(const ProbeResult& result) {
  if (result.ok) return "ok\n";
  std::string out = "not ok:";
  bool first = true;
  for (const ProbeCheck& c : result.checks) {
    if (c.ok) continue;
    out += first ? " " : "; ";
    out += std::string(c.name) + ": " + SanitizeForTerminal(c.detail);
    first = false;
  }
  return out + "\n";
}

std::string ProbeJson(const ProbeResult& result) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const ProbeCheck& c : result.checks) {
    checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  }
  const nlohmann::ordered_json out = {{"status", result.ok ? "ok" : "fail"}, {"checks", checks}};
  // A detail that is not UTF-8 (a backend's error quoting a file) is replaced, never refused.
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace neuronmon::daemon
