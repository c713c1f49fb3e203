// StreamServer: the protobuf stream endpoint of the daemon — unix socket (and optional TCP)
// acceptors, the set of client sessions, and fan-out of each sample's reports. Each distinct
// subscription's report is encoded once (DaemonCore::LiveFrame) and the same bytes are queued to
// every session that asked for it.
// Slots cannot be hoarded: at most max_clients sessions, max_clients_per_uid per local user (unix,
// by SO_PEERCRED) or per address (TCP), and max_handshaking not yet welcomed — when that is full
// the oldest unwelcomed connection is closed to make room, so a client that says Hello at once
// always gets in. An accept that fails for want of descriptors or memory backs off (50 ms, doubling
// to 1 s) instead of spinning. Repeating log lines go through a rate limiter: one per key per 10 s,
// with a count of those suppressed. Runs on one io_context thread; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/core/config/server_options.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/stats.h"
#include "daemon/server/asio.h"
#include "daemon/server/log.h"
#include "daemon/server/session_context.h"
#include "proto/common/status.h"
#include "proto/common/tag_filter.h"

namespace neuronmon::daemon {

class ByteStream;
class Session;
class TlsServerContext;

class StreamServer final : private SessionContext {
 public:
  StreamServer(asio::io_context& io, DaemonCore& core, Logger& log, DaemonStats& stats,
               ServerLimits limits, std::string token);
  ~StreamServer();

  // Binds the unix socket: creates its directory (0750) if missing, replaces a stale socket file,
  // and refuses (kAlreadyExists) when a live daemon already answers on it.
  Status ListenUnix(const UnixListenOptions& options);
  // Binds TCP `host:port`; `requires_token` makes Hello carry the auth token (unless `tls`
  // verified the client's certificate); `tls` non-null: clients speak TLS.
  Status ListenTcp(const std::string& host, std::uint16_t port, bool requires_token,
                   std::shared_ptr<const TlsServerContext> tls = nullptr);
  // Serves a listening socket passed by systemd (LISTEN_FDS). A TCP one asks for the token off
  // loopback, and on loopback when `loopback_requires_token` (see TcpRequiresToken), and speaks
  // TLS with `tcp_tls` when that is set; one off loopback without TLS is refused
  // (kFailedPrecondition) unless `allow_plaintext`.
  Status AdoptListener(int fd, bool loopback_requires_token,
                       std::shared_ptr<const TlsServerContext> tcp_tls = nullptr,
                       bool allow_plaintext = false);
  // New connections to the TLS listeners use `tls` (reloaded certificates); connected clients
  // keep their sessions.
  void SetTcpTls(std::shared_ptr<const TlsServerContext> tls);
  // Serves an already connected socket (the in-process embedding's socketpair end).
  void ServeConnected(int fd, Transport transport);

  // After a sample: queue seq's report to every subscribed session it is due for.
  void Broadcast();
  // Heartbeats to sessions with nothing sent for the heartbeat interval; disconnects sessions
  // whose write has been stuck for the write timeout.
  void Heartbeat(MonoTime now);
  // Sends `notice` to every welcomed client; health and incident notices only to clients that did
  // not subscribe to events.
  void NoticeAll(const v1::Notice& notice);
  // Sends the events logged since the last call to the clients subscribed to them (Broadcast does
  // it for each sample's).
  void PumpEvents() override;
  // Stops accepting, sends every client a shutdown Notice, and calls `done` when all sessions have
  // closed or after `deadline`, whichever is first. Removes the unix socket file.
  void Shutdown(Nanos deadline, std::function<void()> done);

  void SetLimits(const ServerLimits& limits) { limits_ = limits; }
  const ServerLimits& limits() const override { return limits_; }
  std::size_t session_count() const { return sessions_.size(); }
  std::vector<std::string> listening_on() const;

  // Bytes queued for every client together.
  std::size_t queued_bytes_total() const override { return queued_bytes_total_; }

 private:
  // SessionContext, for the sessions this server owns.
  asio::io_context& io() override { return io_; }
  DaemonCore& core() override { return core_; }
  DaemonStats& stats() override { return stats_; }
  const std::string& token() const override { return token_; }
  Logger& log() override { return log_; }
  void LogLimited(LogSeverity severity, const std::string& key,
                  const std::string& message) override;
  void AdjustQueuedBytes(std::size_t bytes, bool add) override;
  TagFilterCache& filter_cache() override { return filter_cache_; }
  bool AdmitFilterCompile(const std::string& key, MonoTime now) override;
  void OnWelcomed(Session& session) override;
  void Remove(Session& session, const std::string& reason) override;

  struct Listener;
  struct Peer {
    std::string description;  // "uid 1000 pid 4242", "127.0.0.1:51234"
    std::string key;          // "uid 1000", "tcp 127.0.0.1"; empty: not limited
  };
  void Accept(Listener& listener);
  std::unique_ptr<ByteStream> Wrap(const Listener& listener, GenericSocket socket);
  void OnAccepted(Listener& listener, GenericSocket socket);
  void OnAcceptError(Listener& listener, const boost::system::error_code& ec);
  Peer PeerOf(GenericSocket& socket, Transport transport);
  void Admit(const std::shared_ptr<Session>& session, Transport transport);
  void MakeRoomForHandshake();
  std::vector<std::shared_ptr<Session>> Sessions() const;
  void MaybeFinishShutdown();

  asio::io_context& io_;
  DaemonCore& core_;
  Logger& log_;
  DaemonStats& stats_;
  ServerLimits limits_;
  std::string token_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::map<std::uint64_t, std::shared_ptr<Session>> sessions_;
  std::set<std::uint64_t> handshaking_;          // ids of sessions not yet welcomed, oldest first
  std::map<std::string, std::size_t> per_peer_;  // sessions per Peer::key
  std::size_t queued_bytes_total_ = 0;
  TagFilterCache filter_cache_;
  struct Bucket {
    double tokens = 0;
    MonoTime refilled;
  };
  std::map<std::string, Bucket> compile_budget_;  // by Peer::key, while it has sessions
  LogRateLimiter log_limiter_{std::chrono::seconds(10)};
  std::uint64_t next_id_ = 1;
  std::string unix_path_;  // removed at shutdown
  bool shutting_down_ = false;
  std::function<void()> shutdown_done_;
  std::unique_ptr<asio::steady_timer> shutdown_timer_;
};

}  // namespace neuronmon::daemon
