// The client's end of a daemon's socket: connecting (unix or TCP, bounded by a timeout), deciding
// whether the daemon behind a unix socket may be believed (who runs it, whose directory holds the
// socket), and writing bytes without blocking forever. Used by client.cc's connection thread and
// by Transport (client/transport.h), which frames what it writes.
// Stateless functions; thread-safe (errno is per thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon::client::daemon_socket {

// strerror(errno).
std::string Errno();
// `d` in milliseconds for poll(2): clamped to [0, 2^30].
int Millis(Nanos d);

// A connected, blocking, close-on-exec socket to the daemon at `path` (a full listen backlog is
// retried until `timeout`), or why not.
Result<int> ConnectUnix(const std::string& path, Nanos timeout);
// The same to `host`:`port`, trying each address the name resolves to within `timeout`.
Result<int> ConnectTcp(const std::string& host, std::uint16_t port, Nanos timeout);

// Ok when the daemon serving `fd` (the unix socket at `path`) runs as root, as this user or as the
// neuron-monitor service user: anyone else could have put a socket where we looked.
Status CheckDaemonUser(int fd, const std::string& path);
// Ok unless `path` lies in the per-user fallback directory under /tmp and that directory is not
// really ours (CheckPrivateDirectory).
Status CheckSocketDirectory(const std::string& path);

// Writes all of `bytes`, waiting for the socket when it is full, for at most `timeout`.
Status WriteAll(int fd, std::string_view bytes, Nanos timeout);

// Whether `path` names a socket.
bool IsSocket(const std::string& path);

}  // namespace neuronmon::client::daemon_socket
