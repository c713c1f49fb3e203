#include "daemon/server/byte_stream.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/error.hpp>

#include "daemon/server/tls_context.h"
#include "proto/tls/socket_bio.h"

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
  GenericSocket& socket() override { return socket_; }

 private:
  GenericSocket socket_;
};

// TLS straight on the non-blocking socket: OpenSSL reads and writes the socket itself (through a
// BIO that sends without SIGPIPE) and Asio only waits for readiness (async_wait). Asio's own SSL
// stream goes through a BIO pair instead — every record copied into the pair and out again, and a
// round trip through the io_context per record — which made a thousand TLS subscribers cost
// several times the CPU of plaintext ones (bench/README.md). One read and one write may be in
// flight at once, as with Asio's streams; completions are always posted, never run inline.
class TlsStream final : public ByteStream {
 public:
  TlsStream(GenericSocket socket, std::shared_ptr<const TlsServerContext> context)
      : context_(std::move(context)), socket_(std::move(socket)) {
    ssl_ = SSL_new(context_->native());
    boost::system::error_code ignored;
    socket_.non_blocking(true, ignored);
    if (ssl_ != nullptr) {
      if (BIO* bio = tls::SocketBio(socket_.native_handle())) {
        SSL_set_bio(ssl_, bio, bio);
        SSL_set_accept_state(ssl_);
        SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
      } else {
        SSL_free(ssl_);
        ssl_ = nullptr;
      }
    }
  }
  ~TlsStream() override {
    if (ssl_ != nullptr) SSL_free(ssl_);
  }

  void AsyncHandshake(std::function<void(const boost::system::error_code&)> done) override {
    handshaking_ = true;
    Handshake(std::move(done));
  }
  void AsyncReadSome(asio::mutable_buffer buffer, Handler handler) override {
    Read(buffer, std::move(handler));
  }
  void AsyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) override {
    if (handshaken_) return Write(buffers, 0, 0, std::move(handler));
    if (handshaking_) {
      // Nothing can be written until the handshake in flight ends: the caller closes.
      return Post(std::move(handler), asio::error::try_again, 0);
    }
    // A rejection before the handshake (too many clients): shake hands, then write.
    AsyncHandshake(
        [this, buffers, handler = std::move(handler)](const boost::system::error_code& ec) mutable {
          if (ec) return handler(ec, 0);
          Write(buffers, 0, 0, std::move(handler));
        });
  }
  GenericSocket& socket() override { return socket_; }
  bool peer_authenticated() const override {
    return handshaken_ && context_->PeerAuthenticated(ssl_);
  }
  std::string verify_error() const override {
    const long result = ssl_ == nullptr ? X509_V_OK : SSL_get_verify_result(ssl_);
    return result == X509_V_OK ? std::string() : X509_verify_cert_error_string(result);
  }
  std::string protocol() const override {
    if (!handshaken_) return {};
    return std::string(SSL_get_version(ssl_)) + " " +
           SSL_CIPHER_get_name(SSL_get_current_cipher(ssl_));
  }

 private:
  enum class Step { kDone, kWaitRead, kWaitWrite, kFailed };

  // What an SSL call's result `rc` asks for next; on kFailed, `ec` says why (eof for a clean
  // close).
  Step Classify(int rc, boost::system::error_code& ec) {
    const int error = SSL_get_error(ssl_, rc);
    switch (error) {
      case SSL_ERROR_NONE:
        return Step::kDone;
      case SSL_ERROR_WANT_READ:
        return Step::kWaitRead;
      case SSL_ERROR_WANT_WRITE:
        return Step::kWaitWrite;
      case SSL_ERROR_ZERO_RETURN:
        ec = asio::error::eof;
        return Step::kFailed;
      case SSL_ERROR_SYSCALL:
        ec = errno != 0 ? boost::system::error_code(errno, boost::system::system_category())
                        : boost::system::error_code(asio::error::eof);
        ERR_clear_error();
        return Step::kFailed;
      default: {
        const unsigned long e = ERR_peek_last_error();
        ec = boost::system::error_code(static_cast<int>(e), asio::error::get_ssl_category());
        ERR_clear_error();
        return Step::kFailed;
      }
    }
  }

  template <typename Fn>
  void WaitThen(Step step, Fn&& retry) {
    socket_.async_wait(
        step == Step::kWaitRead ? GenericSocket::wait_read : GenericSocket::wait_write,
        std::forward<Fn>(retry));
  }

  void Post(Handler handler, boost::system::error_code ec, std::size_t n) {
    asio::post(socket_.get_executor(), [handler = std::move(handler), ec, n] { handler(ec, n); });
  }

  void Handshake(std::function<void(const boost::system::error_code&)> done) {
    boost::system::error_code ec;
    if (ssl_ == nullptr) ec = asio::error::no_memory;
    errno = 0;
    const Step step = ssl_ == nullptr ? Step::kFailed : Classify(SSL_do_handshake(ssl_), ec);
    if (step == Step::kWaitRead || step == Step::kWaitWrite) {
      return WaitThen(
          step, [this, done = std::move(done)](const boost::system::error_code& wait_ec) mutable {
            if (wait_ec) return Finish(std::move(done), wait_ec);
            Handshake(std::move(done));
          });
    }
    Finish(std::move(done), ec);
  }
  void Finish(std::function<void(const boost::system::error_code&)> done,
              boost::system::error_code ec) {
    handshaking_ = false;
    handshaken_ = !ec;
    asio::post(socket_.get_executor(), [done = std::move(done), ec] { done(ec); });
  }

  void Read(asio::mutable_buffer buffer, Handler handler) {
    std::size_t n = 0;
    boost::system::error_code ec;
    errno = 0;
    const int rc = SSL_read_ex(ssl_, buffer.data(), buffer.size(), &n);
    const Step step = rc == 1 ? Step::kDone : Classify(rc, ec);
    if (step == Step::kWaitRead || step == Step::kWaitWrite) {
      return WaitThen(step, [this, buffer, handler = std::move(handler)](
                                const boost::system::error_code& wait_ec) mutable {
        if (wait_ec) return handler(wait_ec, 0);
        Read(buffer, std::move(handler));
      });
    }
    Post(std::move(handler), ec, n);
  }

  // Writes buffers[index] from `offset` on, then the rest; `total` bytes so far.
  void Write(std::vector<asio::const_buffer> buffers, std::size_t index, std::size_t total,
             Handler handler) {
    std::size_t offset = 0;
    while (index < buffers.size()) {
      const asio::const_buffer b = buffers[index] + offset;
      if (b.size() == 0) {
        ++index;
        offset = 0;
        continue;
      }
      std::size_t n = 0;
      boost::system::error_code ec;
      errno = 0;
      const int rc = SSL_write_ex(ssl_, b.data(), b.size(), &n);
      const Step step = rc == 1 ? Step::kDone : Classify(rc, ec);
      if (step == Step::kFailed) return Post(std::move(handler), ec, total);
      if (step != Step::kDone) {
        // Resume with what is left of this buffer (OpenSSL wants the same bytes again).
        buffers[index] = b;
        return WaitThen(
            step, [this, buffers = std::move(buffers), index, total,
                   handler = std::move(handler)](const boost::system::error_code& wait_ec) mutable {
              if (wait_ec) return handler(wait_ec, total);
              Write(std::move(buffers), index, total, std::move(handler));
            });
      }
      total += n;
      offset += n;
      if (offset == buffers[index].size()) {
        ++index;
        offset = 0;
      }
    }
    Post(std::move(handler), {}, total);
  }

  std::shared_ptr<const TlsServerContext> context_;
  GenericSocket socket_;
  SSL* ssl_ = nullptr;
  bool handshaking_ = false;
  bool handshaken_ = false;
};

}  // namespace

void ByteStream::Close() {
  boost::system::error_code ignored;
  socket().shutdown(GenericSocket::shutdown_both, ignored);
  socket().close(ignored);
}

std::unique_ptr<ByteStream> MakePlainStream(GenericSocket socket) {
  return std::make_unique<PlainStream>(std::move(socket));
}

std::unique_ptr<ByteStream> MakeTlsStream(GenericSocket socket,
                                          std::shared_ptr<const TlsServerContext> context) {
  return std::make_unique<TlsStream>(std::move(socket), std::move(context));
}

}  // namespace neuronmon::daemon
