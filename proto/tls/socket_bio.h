// A BIO over a socket for OpenSSL that sends with MSG_NOSIGNAL: OpenSSL's own socket BIO writes
// with write(2), which raises SIGPIPE on a connection the peer closed — a library (the client) must
// not change signal dispositions, and the daemon's TLS runs inside test and embedding processes
// too. Non-blocking sockets get OpenSSL's retry flags on EAGAIN/EINTR. Thread-safe (the method
// table is made once).
#pragma once

struct bio_st;

namespace neuronmon::tls {

// A new BIO reading and writing `fd` (not owned: closing the socket is the caller's); null when
// OpenSSL cannot allocate one. Hand it to SSL_set_bio.
bio_st* SocketBio(int fd);

}  // namespace neuronmon::tls
