// SessionContext: what a Session needs of the server that owns it, and nothing more — the daemon's
// core and counters, the limits and token, the budgets every session shares (the bytes queued for
// all clients, the compiled tag filters and their compile budget per peer), the rate-limited log,
// and the two things a session tells its owner (it was welcomed, it closed). StreamServer
// implements it; sessions never see the rest of the server. Not thread-safe: the io_context
// thread.
#pragma once

#include <cstddef>
#include <string>

#include "daemon/core/config/server_options.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/stats.h"
#include "daemon/server/asio.h"
#include "daemon/server/log.h"
#include "proto/common/tag_filter.h"

namespace neuronmon::daemon {

class Session;

class SessionContext {
 public:
  virtual asio::io_context& io() = 0;
  virtual DaemonCore& core() = 0;
  virtual DaemonStats& stats() = 0;
  virtual const ServerLimits& limits() const = 0;
  // What a Hello must carry where the listener requires a token.
  virtual const std::string& token() const = 0;
  virtual Logger& log() = 0;
  // Logs `message` unless another under `key` was logged in the last 10 s (then it is counted and
  // the next one let through says how many were suppressed).
  virtual void LogLimited(LogSeverity severity, const std::string& key,
                          const std::string& message) = 0;

  // Bytes queued for every client together, and a session's change to them.
  virtual std::size_t queued_bytes_total() const = 0;
  virtual void AdjustQueuedBytes(std::size_t bytes, bool add) = 0;
  // Compiled tag filters, shared by every session.
  virtual TagFilterCache& filter_cache() = 0;
  // Whether the peer `key` may compile one more tag filter now (a token bucket per uid or
  // address: filter_compiles_per_second, as many in a burst); empty keys are not limited.
  virtual bool AdmitFilterCompile(const std::string& key, MonoTime now) = 0;

  // Sends every subscribed session the events logged since (a session added one: a job mark).
  virtual void PumpEvents() = 0;
  // The session finished its handshake.
  virtual void OnWelcomed(Session& session) = 0;
  // The session closed, for `reason`: its owner forgets it.
  virtual void Remove(Session& session, const std::string& reason) = 0;

 protected:
  ~SessionContext() = default;
};

}  // namespace neuronmon::daemon
