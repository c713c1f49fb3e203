// StreamServer: the protobuf stream endpoint of the daemon — unix socket (and optional TCP)
// acceptors, the set of client sessions, and fan-out of each sample's reports. Each distinct
// subscription's report is encoded once (DaemonCore::LiveFrame) and the same bytes are queued to
// every session that asked for it. Runs on one io_context thread; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/daemon_core.h"
#include "daemon/core/stats.h"
#include "daemon/server/asio.h"
#include "daemon/server/log.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

class Session;

struct ServerLimits {
  std::size_t max_clients = 2048;
  std::size_t queue_depth = 64;  // report frames queued per client
  Nanos handshake_timeout = std::chrono::seconds(5);
  Nanos write_timeout = std::chrono::seconds(10);
  Nanos idle_timeout{0};  // 0: never
  Nanos heartbeat_interval = std::chrono::seconds(5);
};

struct UnixListenOptions {
  std::string path;
  unsigned mode = 0660;
  std::string group;  // empty: keep the daemon's group
};

class StreamServer {
 public:
  StreamServer(asio::io_context& io, DaemonCore& core, Logger& log, DaemonStats& stats,
               ServerLimits limits, std::string token);
  ~StreamServer();

  // Binds the unix socket: creates its directory (0750) if missing, replaces a stale socket file,
  // and refuses (kAlreadyExists) when a live daemon already answers on it.
  Status ListenUnix(const UnixListenOptions& options);
  // Binds TCP `host:port`; `requires_token` makes Hello carry the auth token.
  Status ListenTcp(const std::string& host, std::uint16_t port, bool requires_token);
  // Serves a listening socket passed by systemd (LISTEN_FDS).
  Status AdoptListener(int fd);
  // Serves an already connected socket (the in-process embedding's socketpair end).
  void ServeConnected(int fd, Transport transport);

  // After a sample: queue seq's report to every subscribed session it is due for.
  void Broadcast();
  // Heartbeats to sessions with nothing sent for the heartbeat interval; disconnects sessions
  // whose write has been stuck for the write timeout.
  void Heartbeat(MonoTime now);
  // Sends `notice` to every welcomed session.
  void NoticeAll(const v1::Notice& notice);
  // Stops accepting, sends every client a shutdown Notice, and calls `done` when all sessions have
  // closed or after `deadline`, whichever is first. Removes the unix socket file.
  void Shutdown(Nanos deadline, std::function<void()> done);

  void SetLimits(const ServerLimits& limits) { limits_ = limits; }
  const ServerLimits& limits() const { return limits_; }
  std::size_t session_count() const { return sessions_.size(); }
  std::vector<std::string> listening_on() const;

  // For sessions.
  DaemonCore& core() { return core_; }
  Logger& log() { return log_; }
  DaemonStats& stats() { return stats_; }
  const std::string& token() const { return token_; }
  asio::io_context& io() { return io_; }
  void Remove(Session& session, const std::string& reason);

 private:
  struct Listener;
  void Accept(Listener& listener);
  void OnAccepted(Listener& listener, GenericSocket socket);
  std::string PeerOf(GenericSocket& socket, Transport transport);
  void MaybeFinishShutdown();

  asio::io_context& io_;
  DaemonCore& core_;
  Logger& log_;
  DaemonStats& stats_;
  ServerLimits limits_;
  std::string token_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::map<std::uint64_t, std::shared_ptr<Session>> sessions_;
  std::uint64_t next_id_ = 1;
  std::string unix_path_;  // removed at shutdown
  bool shutting_down_ = false;
  std::function<void()> shutdown_done_;
  std::unique_ptr<asio::steady_timer> shutdown_timer_;
};

}  // namespace neuronmon::daemon
