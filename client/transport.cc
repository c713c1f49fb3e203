#include "client/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "client/daemon_socket.h"
#include "proto/common/duration.h"
#include "proto/tls/socket_bio.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::client {
namespace {

using daemon_socket::Millis;
using SteadyTime = std::chrono::steady_clock::time_point;

bool IsIpLiteral(const std::string& name) {
  unsigned char addr[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, name.c_str(), addr) == 1 ||
         ::inet_pton(AF_INET6, name.c_str(), addr) == 1;
}

// What to change when the daemon's certificate does not verify, by OpenSSL's verify result.
std::string VerifyHint(long result, const std::string& name) {
  switch (result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return " (the daemon's certificate is not for " + name +
             "; --tls-server-name names the one it holds)";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return " (renew the daemon's certificate, or check this host's clock)";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return " (--tls-ca names the CA that signed the daemon's certificate)";
    default:
      return "";
  }
}

bool NotTls(int reason) {
  return reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_UNKNOWN_PROTOCOL ||
         reason == SSL_R_PACKET_LENGTH_TOO_LONG || reason == SSL_R_ENCRYPTED_LENGTH_TOO_LONG ||
         reason == SSL_R_UNEXPECTED_EOF_WHILE_READING || reason == SSL_R_UNEXPECTED_RECORD ||
         reason == SSL_R_RECORD_LENGTH_MISMATCH;
}

// Alerts by which a daemon turns down our client certificate, or its absence.
bool ClientCertificateAlert(int reason) {
  return reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
         reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE || reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
         reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE ||
         reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN ||
         reason == SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED ||
         reason == SSL_R_TLSV1_ALERT_ACCESS_DENIED;
}

// Why a TLS operation on `ssl` failed with `ssl_error` (SSL_get_error), for the user: which
// check failed and what to change; `peer` is who it says did it. Takes OpenSSL's error queue.
std::string Describe(SSL* ssl, int ssl_error, const std::string& peer, bool handshake,
                     bool client_certificate, const std::string& name) {
  const unsigned long e = ERR_peek_error();
  const int reason = ERR_GET_LIB(e) == ERR_LIB_SSL ? ERR_GET_REASON(e) : 0;
  const std::string detail = ssl_error == SSL_ERROR_SYSCALL && e == 0
                                 ? (errno == 0 ? std::string("unexpected end of stream")
                                               : std::string(std::strerror(errno)))
                                 : TakeOpenSslError();
  ERR_clear_error();
  const long verify = SSL_get_verify_result(ssl);
  if (handshake && reason == SSL_R_CERTIFICATE_VERIFY_FAILED && verify != X509_V_OK) {
    return "cannot verify the daemon at " + peer +
           ": certificate verify failed: " + X509_verify_cert_error_string(verify) +
           VerifyHint(verify, name);
  }
  if (ClientCertificateAlert(reason)) {
    return client_certificate
               ? peer + " refused our client certificate (--tls-cert): " + detail
               : peer + " requires a client certificate: pass --tls-cert and --tls-key (" + detail +
                     ")";
  }
  if (handshake &&
      (NotTls(reason) || ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_ZERO_RETURN)) {
    return peer + " does not speak TLS (is listeners.tcp.tls set on the daemon?): " + detail;
  }
  return handshake ? "TLS handshake with " + peer + " failed: " + detail : "TLS: " + detail;
}

// Waits until `fd` is ready for what `ssl_error` (WANT_READ or WANT_WRITE) asks; false at
// `deadline`.
bool WaitFor(int fd, int ssl_error, SteadyTime deadline) {
  pollfd p{fd, static_cast<short>(ssl_error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
  for (;;) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= Nanos(0)) return false;
    const int ready = ::poll(&p, 1, Millis(left) + 1);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // let the next call report the error
  }
}

// Checks `name` (DNS, or an IP literal) against the daemon's certificate, and sends it as SNI.
bool SetPeerName(SSL* ssl, const std::string& name, bool verify) {
  if (!IsIpLiteral(name) && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) return false;
  if (!verify) return true;
  if (IsIpLiteral(name)) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(ssl, name.c_str()) == 1;
}

}  // namespace

Transport::Transport(int fd, SSL* ssl, bool client_certificate)
    : fd_(fd), ssl_(ssl), client_certificate_(client_certificate) {}

Transport::~Transport() {
  if (ssl_ != nullptr) {
    (void)SSL_shutdown(ssl_);  // one non-blocking try at close_notify
    ERR_clear_error();
    SSL_free(ssl_);
  }
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<Transport> Transport::Plain(int fd) {
  return std::unique_ptr<Transport>(new Transport(fd, nullptr, false));
}

Result<std::unique_ptr<Transport>> Transport::Tls(int fd, const TlsContext& context,
                                                  const std::string& name, const std::string& peer,
                                                  Nanos timeout) {
  ERR_clear_error();
  SSL* ssl = SSL_new(context.native());
  BIO* bio = ssl == nullptr ? nullptr : tls::SocketBio(fd);
  // Owns fd and ssl from here: every return below closes them.
  std::unique_ptr<Transport> t(new Transport(fd, ssl, context.has_client_certificate()));
  if (bio == nullptr) return Status::Internal("TLS: " + TakeOpenSslError());
  SSL_set_bio(ssl, bio, bio);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (!SetPeerName(ssl, name, !context.options().insecure)) {
    return Status::InvalidArgument("TLS: cannot check the name \"" + name +
                                   "\": " + TakeOpenSslError());
  }
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    errno = 0;  // Describe tells a hang-up (0) from a socket error
    const int rc = SSL_connect(ssl);
    if (rc == 1) return t;
    const int err = SSL_get_error(ssl, rc);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      return Status::Unavailable(
          Describe(ssl, err, peer, true, context.has_client_certificate(), name));
    }
    if (!WaitFor(fd, err, deadline)) {
      return Status::Unavailable("no TLS handshake from " + peer + " within " +
                                 FormatElapsed(timeout) +
                                 " (does it speak TLS? is listeners.tcp.tls set on the daemon?)");
    }
  }
}

Transport::ReadResult Transport::Read(char* buf, std::size_t size) {
  ReadResult r;
  if (ssl_ == nullptr) {
    const ssize_t n = ::recv(fd_, buf, size, MSG_DONTWAIT);
    if (n > 0) {
      r.kind = ReadResult::Kind::kData;
      r.bytes = static_cast<std::size_t>(n);
    } else if (n == 0) {
      r.kind = ReadResult::Kind::kClosed;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      r.kind = ReadResult::Kind::kError;
      r.error = std::strerror(errno);
    }
    return r;
  }
  ERR_clear_error();
  errno = 0;
  const int n = SSL_read(ssl_, buf, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (n > 0) {
    r.kind = ReadResult::Kind::kData;
    r.bytes = static_cast<std::size_t>(n);
    return r;
  }
  const int err = SSL_get_error(ssl_, n);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return r;  // half a record
  const unsigned long e = ERR_peek_error();
  if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && e == 0 && errno == 0) ||
      (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
    ERR_clear_error();
    r.kind = ReadResult::Kind::kClosed;
    return r;
  }
  r.kind = ReadResult::Kind::kError;
  r.error = Describe(ssl_, err, "the daemon", false, client_certificate_, "");
  return r;
}

bool Transport::Pending() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }

Status Transport::Write(std::string_view bytes, Nanos timeout) {
  if (ssl_ == nullptr) return daemon_socket::WriteAll(fd_, bytes, timeout);
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  while (!bytes.empty()) {
    ERR_clear_error();
    errno = 0;
    // After WANT_*, the same bytes again (a partial write returned a count instead).
    const int n = SSL_write(ssl_, bytes.data(),
                            static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)));
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      return Status::Unavailable("write: " +
                                 Describe(ssl_, err, "the daemon", false, client_certificate_, ""));
    }
    if (!WaitFor(fd_, err, deadline)) return Status::Unavailable("write timed out");
  }
  return Status::Ok();
}

Status Transport::Send(const v1::Envelope& e) {
  Result<std::string> frame = wire::EncodeFrame(e, wire::kDefaultInboundMaxFrame);
  if (!frame.ok()) return frame.status();
  return Write(*frame, std::chrono::seconds(5));
}

}  // namespace neuronmon::client
