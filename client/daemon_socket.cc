#include "client/daemon_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "proto/common/socket_path.h"

namespace neuronmon::client::daemon_socket {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// Waits for a non-blocking connect on `fd` to finish; the error text when it does not.
std::optional<std::string> FinishConnect(int fd, SteadyTime deadline) {
  pollfd p{fd, POLLOUT, 0};
  const auto left = deadline - std::chrono::steady_clock::now();
  if (left <= Nanos(0) || ::poll(&p, 1, Millis(left)) <= 0) return "timed out";
  int error = 0;
  socklen_t len = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) return Errno();
  if (error != 0) return std::string(std::strerror(error));
  return std::nullopt;
}

// The socket back in blocking mode: the reader polls, then reads what is there.
void MakeBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK); }

}  // namespace

std::string Errno() { return std::strerror(errno); }

int Millis(Nanos d) {
  return static_cast<int>(std::clamp<std::int64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(d).count(), 0, 1 << 30));
}

Result<int> ConnectUnix(const std::string& path, Nanos timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Status::InvalidArgument(path + ": path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return Status::IoError("socket: " + Errno());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      MakeBlocking(fd);
      return fd;
    }
    const int error = errno;
    ::close(fd);
    // A full listen backlog answers EAGAIN at once: try again until the deadline.
    if (error != EAGAIN || std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("cannot connect to " + path + ": " +
                                 (error == EAGAIN ? "timed out" : std::strerror(error)));
    }
    ::poll(nullptr, 0, 10);
  }
}

Result<int> ConnectTcp(const std::string& host, std::uint16_t port, Nanos timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) return Status::Unavailable("cannot resolve " + host + ": " + gai_strerror(rc));
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    std::optional<std::string> failed;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      failed = errno == EINPROGRESS ? FinishConnect(fd, deadline) : Errno();
    }
    if (!failed) {
      ::freeaddrinfo(found);
      MakeBlocking(fd);
      return fd;
    }
    why = *failed;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return Status::Unavailable("cannot connect to " + host + ":" + std::to_string(port) + ": " + why);
}

// A daemon may be trusted with the token and believed only when it runs as root, as this user or
// as the neuron-monitor service user: anyone else could have put a socket where we looked.
Status CheckDaemonUser(int fd, const std::string& path) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Status::Unavailable("cannot tell who serves " + path + ": " + Errno());
  }
  if (TrustedDaemonUid(cred.uid, static_cast<unsigned>(::geteuid()), ServiceUid())) {
    return Status::Ok();
  }
  return Status::FailedPrecondition("refusing the daemon at " + path + ": it runs as uid " +
                                    std::to_string(cred.uid) +
                                    ", not root, you or the neuron-monitor user");
}

// A socket in the per-user fallback directory under /tmp is used only when that directory is
// really ours (CheckPrivateDirectory); elsewhere, nothing to check.
Status CheckSocketDirectory(const std::string& path) {
  const auto uid = static_cast<unsigned>(::geteuid());
  if (!InFallbackSocketDirectory(path, uid)) return Status::Ok();
  return CheckPrivateDirectory(FallbackSocketDirectory(uid), uid);
}

// Writes all of `bytes`, waiting for the socket when it is full (bounded by `timeout`).
Status WriteAll(int fd, std::string_view bytes, Nanos timeout) {
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return Status::Unavailable("write: " + Errno());
    pollfd p{fd, POLLOUT, 0};
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= Nanos(0) || ::poll(&p, 1, Millis(left)) == 0)
      return Status::Unavailable("write timed out");
  }
  return Status::Ok();
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace neuronmon::client::daemon_socket
