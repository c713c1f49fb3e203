#include "bench/soak/client_io.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "proto/wire/frame_codec.h"

namespace neuronmon::soak {

UniqueFd ConnectUnix(const std::string& path, int rcvbuf) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  if (rcvbuf > 0) ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    fd.Reset();
    errno = saved;
  }
  return fd;
}

UniqueFd ConnectLoopback(std::uint16_t port, int rcvbuf) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  const timeval one_second{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &one_second, sizeof one_second);
  if (rcvbuf > 0) ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    fd.Reset();
    errno = saved;
    return fd;
  }
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
  return fd;
}

std::uint16_t FreeLoopbackPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

std::string SendSome(int fd, std::string bytes) {
  if (bytes.empty()) return bytes;
  const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent > 0) bytes.erase(0, static_cast<std::size_t>(sent));
  return bytes;
}

std::string Frame(const v1::Envelope& envelope) {
  Result<std::string> frame = wire::EncodeFrame(envelope);
  return frame.ok() ? std::move(*frame) : std::string();
}

std::string HelloFrame(std::uint32_t version, const std::string& name) {
  v1::Envelope e;
  e.mutable_hello()->set_protocol_version(version);
  e.mutable_hello()->set_client_name(name);
  return Frame(e);
}

std::string SubscribeFrame(const v1::Subscribe& subscribe) {
  v1::Envelope e;
  *e.mutable_subscribe() = subscribe;
  return Frame(e);
}

std::string Shorten(std::string name, std::string_view prefix) {
  if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  return name;
}

std::string NoticeName(const v1::Notice& n) {
  std::string name = Shorten(v1::NoticeKind_Name(n.kind()), "NOTICE_KIND_");
  if (n.kind() == v1::NOTICE_KIND_GAP) {
    name += "/" + Shorten(v1::GapReason_Name(n.gap_reason()), "GAP_REASON_");
  }
  return name.empty() ? "kind " + std::to_string(n.kind()) : name;
}

std::string ErrorName(const v1::Error& e) {
  const std::string name = Shorten(v1::ErrorCode_Name(e.code()), "ERROR_CODE_");
  return name.empty() ? "code " + std::to_string(e.code()) : name;
}

}  // namespace neuronmon::soak
