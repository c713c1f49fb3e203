// ByteStream: a stream client's connection as Session sees it — a plain socket (unix, TCP, the
// in-process socketpair) or TLS over TCP (OpenSSL on the non-blocking socket, Asio waiting for
// readiness; byte_stream.cc says why not Asio's ssl::stream) — behind one narrow interface.
// Operations follow Asio's rules: at most one read and one write in flight, handlers run on the
// io_context thread, never inline. A TLS stream's server handshake is bounded by the caller
// (Session's handshake deadline closes the socket); a write before the handshake (a rejection)
// runs the handshake first. Not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon/server/asio.h"

namespace neuronmon::daemon {

class TlsServerContext;

class ByteStream {
 public:
  using Handler = std::function<void(const boost::system::error_code&, std::size_t)>;
  virtual ~ByteStream() = default;

  // TLS: the server side of the handshake; plain: `done` runs at once (posted) with no error.
  virtual void AsyncHandshake(std::function<void(const boost::system::error_code&)> done) = 0;
  virtual void AsyncReadSome(asio::mutable_buffer buffer, Handler handler) = 0;
  // Writes every byte of `buffers` (which must stay alive until `handler` runs).
  virtual void AsyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) = 0;
  // Shuts the socket down and closes it; pending operations complete with operation_aborted.
  void Close();
  // The socket underneath (peer credentials and addresses).
  virtual GenericSocket& socket() = 0;
  // After the handshake: whether the client's certificate authenticates it (TLS with
  // client_auth_type RequireAndVerifyClientCert or VerifyClientCertIfGiven, verified).
  virtual bool peer_authenticated() const { return false; }
  // TLS: why the client's certificate was refused ("certificate has expired"); "" otherwise.
  virtual std::string verify_error() const { return {}; }
  // "TLSv1.3 TLS_AES_256_GCM_SHA384" after a TLS handshake; "" for plain streams.
  virtual std::string protocol() const { return {}; }
};

std::unique_ptr<ByteStream> MakePlainStream(GenericSocket socket);
// TLS over `socket` with `context` (shared: a reload replaces the listener's, not this one's).
std::unique_ptr<ByteStream> MakeTlsStream(GenericSocket socket,
                                          std::shared_ptr<const TlsServerContext> context);

}  // namespace neuronmon::daemon
