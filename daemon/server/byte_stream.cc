#include "daemon/server/byte_stream.h"

// Asio's SSL after asio.h, which includes <utility> first (see asio.h).
#include <boost/asio/ssl.hpp>

#include "daemon/server/tls_context.h"

namespace neuronmon::daemon {
namespace {

class PlainStream final : public ByteStream {
 public:
  explicit PlainStream(GenericSocket socket) : socket_(std::move(socket)) {}

  void AsyncHandshake(std::function<void(const boost::system::error_code&)> done) override {
    asio::post(socket_.get_executor(),
               [done = std::move(done)] { done(boost::system::error_code()); });
  }
  void AsyncReadSome(asio::mutable_buffer buffer, Handler handler) override {
    socket_.async_read_some(buffer, std::move(handler));
  }
  void AsyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) override {
    asio::async_write(socket_, buffers, std::move(handler));
  }
  void Close() override {
    boost::system::error_code ignored;
    socket_.shutdown(GenericSocket::shutdown_both, ignored);
    socket_.close(ignored);
  }
  GenericSocket& socket() override { return socket_; }

 private:
  GenericSocket socket_;
};

// asio::ssl::stream needs an asio::ssl::context only while it creates its SSL object (which
// holds its own reference to the SSL_CTX): one is made around the listener's context for that.
asio::ssl::stream<GenericSocket> MakeSslStream(GenericSocket socket,
                                               const TlsServerContext& context) {
  SSL_CTX_up_ref(context.native());
  asio::ssl::context wrapper(context.native());
  asio::ssl::stream<GenericSocket> stream(std::move(socket), wrapper);
  KeepRecordBuffers(stream.native_handle());
  return stream;
}

class TlsStream final : public ByteStream {
 public:
  TlsStream(GenericSocket socket, std::shared_ptr<const TlsServerContext> context)
      : context_(std::move(context)), stream_(MakeSslStream(std::move(socket), *context_)) {}

  void AsyncHandshake(std::function<void(const boost::system::error_code&)> done) override {
    handshaking_ = true;
    stream_.async_handshake(asio::ssl::stream_base::server,
                            [this, done = std::move(done)](const boost::system::error_code& ec) {
                              handshaking_ = false;
                              handshaken_ = !ec;
                              done(ec);
                            });
  }
  void AsyncReadSome(asio::mutable_buffer buffer, Handler handler) override {
    stream_.async_read_some(buffer, std::move(handler));
  }
  void AsyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) override {
    if (handshaken_) return asio::async_write(stream_, buffers, std::move(handler));
    if (handshaking_) {
      // Nothing can be written until the handshake in flight ends: the caller closes.
      return asio::post(socket().get_executor(),
                        [handler = std::move(handler)] { handler(asio::error::try_again, 0); });
    }
    // A rejection before the handshake (too many clients): shake hands, then write.
    AsyncHandshake(
        [this, buffers, handler = std::move(handler)](const boost::system::error_code& ec) mutable {
          if (ec) return handler(ec, 0);
          asio::async_write(stream_, buffers, std::move(handler));
        });
  }
  void Close() override {
    boost::system::error_code ignored;
    socket().shutdown(GenericSocket::shutdown_both, ignored);
    socket().close(ignored);
  }
  GenericSocket& socket() override { return stream_.next_layer(); }
  bool peer_authenticated() const override {
    return handshaken_ &&
           context_->PeerAuthenticated(
               const_cast<asio::ssl::stream<GenericSocket>&>(stream_).native_handle());
  }
  std::string verify_error() const override {
    SSL* ssl = const_cast<asio::ssl::stream<GenericSocket>&>(stream_).native_handle();
    const long result = SSL_get_verify_result(ssl);
    return result == X509_V_OK ? std::string() : X509_verify_cert_error_string(result);
  }
  std::string protocol() const override {
    SSL* ssl = const_cast<asio::ssl::stream<GenericSocket>&>(stream_).native_handle();
    if (!handshaken_) return {};
    return std::string(SSL_get_version(ssl)) + " " +
           SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
  }

 private:
  std::shared_ptr<const TlsServerContext> context_;
  asio::ssl::stream<GenericSocket> stream_;
  bool handshaking_ = false;
  bool handshaken_ = false;
};

}  // namespace

std::unique_ptr<ByteStream> MakePlainStream(GenericSocket socket) {
  return std::make_unique<PlainStream>(std::move(socket));
}

std::unique_ptr<ByteStream> MakeTlsStream(GenericSocket socket,
                                          std::shared_ptr<const TlsServerContext> context) {
  return std::make_unique<TlsStream>(std::move(socket), std::move(context));
}

}  // namespace neuronmon::daemon
