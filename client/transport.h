// Transport: one connection to a daemon, as the Client's connection thread uses it — a plain
// stream socket (unix, TCP, or the embedded daemon's socketpair) or TLS over a TCP socket. Reads
// never block: a read that finds nothing complete yet (half a TLS record) says so and the
// caller's poll loop goes on, so its timeouts still hold against a daemon that stalls mid-record.
// Pending() tells the caller that decrypted bytes wait inside TLS, where poll(2) on fd() cannot
// see them. Writes wait for the socket, bounded by a timeout. Owns the socket. Not thread-safe:
// one thread at a time (the Client's handshake, then its connection thread).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "client/tls_context.h"
#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"

struct ssl_st;

namespace neuronmon::client {

class Transport {
 public:
  // Takes `fd`, a connected stream socket, as it is (the daemon_socket functions' blocking one).
  static std::unique_ptr<Transport> Plain(int fd);
  // Takes `fd`, a connected TCP socket to `peer` ("host:port", for messages), and completes a TLS
  // handshake within `timeout` that verifies (unless the context is insecure) the certificate
  // against the context's CAs and its name against `name` (a DNS name or an IP literal; also sent
  // as SNI when a name). Nothing else is sent before it succeeds. Errors say which check failed
  // and what to change: "certificate verify failed: certificate has expired", "hostname
  // mismatch", "does not speak TLS", a client certificate the daemon wants (--tls-cert).
  static Result<std::unique_ptr<Transport>> Tls(int fd, const TlsContext& context,
                                                const std::string& name, const std::string& peer,
                                                Nanos timeout);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  struct ReadResult {
    enum class Kind { kData, kNothingYet, kClosed, kError };
    Kind kind = Kind::kNothingYet;
    std::size_t bytes = 0;  // kData: how many were put in the buffer
    std::string error;      // kError: why (e.g. a TLS alert from the daemon)
  };
  // Reads what is there into `buf` (at most `size` bytes) without blocking.
  ReadResult Read(char* buf, std::size_t size);
  // Whether Read would return data without the socket being readable.
  bool Pending() const;
  // Writes all of `bytes`, waiting for the socket, within `timeout`.
  Status Write(std::string_view bytes, Nanos timeout);
  // `e` as one frame (at most the daemon's default inbound frame size), within 5 s.
  Status Send(const v1::Envelope& e);

  int fd() const { return fd_; }

 private:
  Transport(int fd, ssl_st* ssl, bool client_certificate);
  int fd_;
  ssl_st* ssl_;              // owned; null for a plain socket
  bool client_certificate_;  // for what a daemon's alert about it means
};

}  // namespace neuronmon::client
