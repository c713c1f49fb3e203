// HttpServer: the daemon's Prometheus endpoint, HTTP/1.1 over TCP (Boost.Beast, kept inside
// http_server.cc so only that file pays for it). It parses requests with bounded sizes and times
// — headers over max_header_bytes get 431, bodies over max_body_bytes 413, a request whose bytes
// do not all arrive within request_timeout (one absolute deadline) is dropped, a keep-alive
// connection idle past idle_timeout is closed, a reply not written within write_timeout is
// abandoned, a connection past connection_lifetime or max_requests is closed after its current
// reply, and a closing connection drains the client's input for at most one second in all —
// and keeps long-lived /events replies (max_event_streams of them, not counted in
// max_connections) sending each event as it is logged, within their byte budgets, for at most
// event_stream_lifetime —
// and hands each request to a MetricsHandler for the answer (routes, auth, the scrape cap). HEAD
// gets GET's headers without the body; keep-alive is supported.
// Slots: at most max_connections, of which at most max_pending have not yet read a 2xx reply in
// full (so are not yet known to be an authorized client that reads); when those are full the
// oldest of them is closed for the newcomer, so a flood of connections that never send a valid
// request, or ask and never read (holding a scrape slot), cannot lock Prometheus out. Connections
// beyond max_connections are closed at once. Runs on the daemon's io_context thread and builds
// every exposition from DaemonCore on the spot; it never samples. Borrows `core`, `stats` and
// `log`, which must outlive it. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "daemon/core/config/server_options.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/stats.h"
#include "daemon/server/asio.h"
#include "daemon/server/log.h"
#include "daemon/server/metrics_handler.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

class TlsServerContext;

class HttpServer {
 public:
  HttpServer(asio::io_context& io, const DaemonCore& core, const DaemonStats& stats, Logger& log,
             HttpServerOptions options);
  ~HttpServer();  // closes every connection
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds `host`:`port` (port 0: an ephemeral one) and starts accepting. `requires_token`: every
  // request must carry `Authorization: Bearer <options.handler.token>` (unless `tls` verified
  // the client's certificate). `tls` non-null: HTTPS, the handshake within request_timeout.
  // Errors: kInvalidArgument when `host` does not resolve, kIoError when it cannot be bound.
  // Call at most once.
  Status Listen(const std::string& host, std::uint16_t port, bool requires_token,
                std::shared_ptr<const TlsServerContext> tls = nullptr);
  // HTTPS: new connections use `tls` (reloaded certificates); connected ones keep theirs. No
  // effect on a plain HTTP listener.
  void SetTls(std::shared_ptr<const TlsServerContext> tls);
  // The bound port; nullopt before a successful Listen.
  std::optional<std::uint16_t> port() const;
  // "http://127.0.0.1:9413" ("https://..." with TLS, "http://[::1]:9413" for IPv6); empty
  // before Listen.
  std::string url() const;
  // Stops accepting and closes every connection; later requests are refused.
  void Shutdown();

  std::size_t connection_count() const;
  // Sends each long-lived /events reply the events logged since the last call; applies their
  // write timeout, heartbeat and lifetime. The daemon calls it after each sample, after each of
  // its own events, and on each sampling tick. The streams are served 64 to a turn of the loop,
  // so requests are answered between batches; a call during a pass makes another pass after it.
  void PumpEvents();
  std::size_t event_stream_count() const;
  // New limits after a reload: every field but `handler.token` and `handler.version` applies to
  // requests and connections from now on.
  void SetLimits(const HttpServerOptions& options);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;  // shared with the sessions, which may outlive the server briefly
};

}  // namespace neuronmon::daemon
