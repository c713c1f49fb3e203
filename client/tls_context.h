// TlsContext: the client side's TLS settings loaded once (OpenSSL's SSL_CTX): which CAs may sign
// a daemon's certificate (a PEM file, or the system's store), the client certificate and key for
// mutual TLS, TLS 1.2 at least, and whether certificates are verified at all (not with
// --insecure). Every file is read as a bounded regular file, the key only when other users cannot
// read it. A Client makes one and opens each (re)connection's Transport with it. Immutable once
// made; thread-safe.
#pragma once

#include <memory>
#include <string>

#include "client/client.h"
#include "proto/common/status.h"

struct ssl_ctx_st;

namespace neuronmon::client {

class TlsContext {
 public:
  // Errors name the flag and file: a file that cannot be read or holds no PEM certificate (key);
  // --tls-cert without --tls-key (or the reverse); a key that does not match the certificate, is
  // encrypted, or that other users may read ("FILE: mode 0644 lets every user read the private
  // key; make it 0600 or 0640").
  static Result<std::unique_ptr<TlsContext>> Create(const TlsClientOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* native() const { return ctx_; }
  const TlsClientOptions& options() const { return options_; }
  bool has_client_certificate() const { return !options_.cert_file.empty(); }

 private:
  TlsContext(ssl_ctx_st* ctx, TlsClientOptions options);
  ssl_ctx_st* ctx_;  // owned
  TlsClientOptions options_;
};

// The text of OpenSSL's oldest queued error ("" when none), emptying its (per-thread) queue.
std::string TakeOpenSslError();

}  // namespace neuronmon::client
