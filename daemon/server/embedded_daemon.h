// EmbeddedDaemon: the daemon running inside a client process (--standalone, and the automatic
// fallback when no daemon socket exists) on its own thread, with no listeners, signals or systemd.
// Connect() hands out one end of a socketpair that is served exactly as a unix-socket client is —
// the same code path and protocol, never a second implementation. This header is the only part of
// the daemon that clients may include. Thread-safe: Connect() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "proto/common/simulator_options.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

struct EmbeddedOptions {
  SimulatorOptions simulate;  // unset fields: the daemon's defaults (sim:trn2.48xlarge, ...)
  int log_fd = -1;            // where the daemon logs warnings; -1: nowhere
};

class EmbeddedDaemon {
 public:
  // Starts the daemon thread; fails with the daemon's startup error (bad device, scenario, ...).
  static Result<std::unique_ptr<EmbeddedDaemon>> Start(const EmbeddedOptions& options);
  // Stops the daemon (clients get a shutdown Notice) and joins its thread.
  ~EmbeddedDaemon();

  // A new connected stream socket served by the daemon; the caller owns the fd.
  Result<int> Connect();

 private:
  struct Impl;
  explicit EmbeddedDaemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuronmon::daemon
