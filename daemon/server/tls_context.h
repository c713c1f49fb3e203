// TlsServerContext: one listener's OpenSSL server context, built from its TlsServerOptions
// (daemon/core/config/tls_options.h): certificate chain and key (the key file must not be
// readable by other users), versions, TLS 1.2 cipher suites, curves, and client-certificate
// checking — verification against client_ca_file and, when client_allowed_sans is set, a
// certificate without one of those names fails the handshake. Renegotiation and compression are
// off. Built at start-up, by --check-config and again on SIGHUP (a new context for new
// connections; connected clients keep theirs: each SSL holds a reference to its SSL_CTX). Plain
// OpenSSL, no Asio: daemon/server/byte_stream.cc runs the stream's SSLs on their sockets, and
// http_server.cc wraps it in Beast's ssl_stream. Immutable once built; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "daemon/core/config/tls_options.h"
#include "proto/common/status.h"

struct ssl_ctx_st;
struct ssl_st;

namespace neuronmon::daemon {

struct DaemonConfig;

class TlsServerContext {
 public:
  // Errors (kInvalidArgument) name the key: "listeners.tcp.tls.key_file: /etc/x.key: does not
  // match cert_file", "...cert_file: cannot load /etc/x.pem: no start line".
  static Result<std::shared_ptr<const TlsServerContext>> Create(const TlsServerOptions& options,
                                                                std::string_view prefix);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  ssl_ctx_st* native() const { return ctx_; }
  // "TLS, certificate CN=host, valid until 2027-01-05".
  const std::string& description() const { return description_; }
  // Whether a handshake on `ssl` ended with a client certificate this listener verified (and
  // whose names it allows): that client needs no token.
  bool PeerAuthenticated(ssl_st* ssl) const;

 private:
  TlsServerContext() = default;
  ssl_ctx_st* ctx_ = nullptr;
  bool verifies_clients_ = false;
  std::string description_;
};

// The TLS contexts of a config's listeners: the stream's whenever listeners.tcp.tls is set (a TCP
// socket systemd passes uses it too), /metrics' when that listener is on and has TLS; null
// otherwise. At start-up, --check-config and
// SIGHUP; the first error stops them.
struct ListenerTls {
  std::shared_ptr<const TlsServerContext> tcp;
  std::shared_ptr<const TlsServerContext> metrics;
};
Result<ListenerTls> MakeListenerTls(const DaemonConfig& config);

// Asio's SSL engine (Beast's ssl_stream for /metrics) sets SSL_MODE_RELEASE_BUFFERS on every SSL
// it makes: OpenSSL then frees and allocates its record buffer around every record, and each new
// buffer's pages fault in again — measured on the stream, it doubled the CPU of a thousand TLS
// subscribers. This clears it (about 34 KB held per connection instead).
void KeepRecordBuffers(ssl_st* ssl);

// OpenSSL's error queue as one line ("error:0A00010B:SSL routines::wrong version number"),
// emptied; `fallback` when it is empty.
std::string TakeOpenSslErrors(std::string_view fallback);

}  // namespace neuronmon::daemon
