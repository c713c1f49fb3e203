#include "proto/tls/socket_bio.h"

#include <openssl/bio.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

namespace neuronmon::tls {
namespace {

int Fd(BIO* b) { return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(b))); }

int BioWrite(BIO* b, const char* data, int size) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(Fd(b), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

int BioRead(BIO* b, char* data, int size) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(Fd(b), data, static_cast<std::size_t>(size), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(b);
  return static_cast<int>(n);
}

long BioCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

// Made once, never changed: OpenSSL's BIO methods are process-wide tables.
const BIO_METHOD* SocketBioMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "neuronmon socket");
    BIO_meth_set_write(m, BioWrite);
    BIO_meth_set_read(m, BioRead);
    BIO_meth_set_ctrl(m, BioCtrl);
    return m;
  }();
  return method;
}

}  // namespace

bio_st* SocketBio(int fd) {
  BIO* b = BIO_new(SocketBioMethod());
  if (b == nullptr) return nullptr;
  BIO_set_data(b, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  BIO_set_init(b, 1);
  return b;
}

}  // namespace neuronmon::tls
