// Probes: what /healthz (alive) and /readyz (ready) answer, from what DaemonCore already holds —
// they never sample, never read a file, and reveal nothing a probe should not (no device, process
// or host names), so they answer without the token. The systemd watchdog asks Liveness too, so the
// unit is restarted exactly when /healthz says the daemon is not alive (docs/service.md).
// Plain values and functions; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/report/history.h"
#include "proto/common/clock.h"

namespace neuronmon::daemon {

struct ProbeCheck {
  std::string_view name;  // "sampling", "first_sample", "backend", "history"
  bool ok = false;
  std::string detail;  // "last sample 0.4 s ago", "no sample yet", the backend's error, ...
};

struct ProbeResult {
  bool ok = true;  // every check passed
  std::vector<ProbeCheck> checks;
};

struct ProbeInput {
  const History* history = nullptr;
  Nanos period{std::chrono::seconds(1)};
  MonoTime now;
  MonoTime started;  // when the daemon began sampling
};

// The first sample may take this long after the start (a real host's first read discovers every
// device and scans /proc) before "no sample yet" stops being alive.
inline constexpr Nanos kProbeStartupGrace = std::chrono::seconds(30);

// Whether sampling is on schedule: the newest sample is at most 3 periods old (or, before the
// first, the daemon started less than kProbeStartupGrace and 3 periods ago).
ProbeCheck CheckSampling(const ProbeInput& in);

// Alive: sampling on schedule. One check, "sampling".
ProbeResult Liveness(const ProbeInput& in);
// Ready: alive, a first sample taken, the backend answering at the newest sample (its read has no
// error), and the history holding two samples (every rate needs a window). Checks "sampling",
// "first_sample", "backend", "history", in that order.
ProbeResult Readiness(const ProbeInput& in);

// "ok\n", or "not ok: sampling: last sample 4.2 s ago (period 1 s); backend: ...\n" (the failed
// checks' details, stripped of control characters).
std::string ProbeText(const ProbeResult& result);
// {"status":"ok"|"fail","checks":[{"name":"sampling","ok":true,"detail":"..."},...]}\n
std::string ProbeJson(const ProbeResult& result);

}  // namespace neuronmon::daemon
