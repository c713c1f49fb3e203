#include "tests/integration/raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace neuronmon::testing {

RawClient::RawClient(const std::string& path, int rcvbuf) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawClient::RawClient(int connected_fd) : fd_(connected_fd) {}

RawClient::RawClient(Tcp tcp) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(tcp.port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawClient::~RawClient() {
  if (fd_ >= 0) ::close(fd_);
}

void RawClient::SendBytes(std::string_view bytes) {
  while (!bytes.empty() && fd_ >= 0) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void RawClient::Send(const v1::Envelope& e) { SendBytes(*wire::EncodeFrame(e)); }

void RawClient::Hello(std::uint32_t version, const std::string& token) {
  v1::Envelope e;
  e.mutable_hello()->set_protocol_version(version);
  e.mutable_hello()->set_client_name("raw-test-client");
  e.mutable_hello()->set_token(token);
  Send(e);
}

void RawClient::Subscribe(const v1::Subscribe& s) {
  v1::Envelope e;
  *e.mutable_subscribe() = s;
  Send(e);
}

std::optional<v1::Envelope> RawClient::Read(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!pending_.empty()) {
      std::string_view in(pending_);
      v1::Envelope e;
      const auto o = decoder_.Decode(in, e);
      pending_.erase(0, pending_.size() - in.size());
      if (o == wire::FrameDecoder::Outcome::kFrame) return e;
      if (o == wire::FrameDecoder::Outcome::kError) return std::nullopt;
    }
    if (eof_ || fd_ < 0) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return std::nullopt;
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<v1::Envelope> RawClient::ReadUntil(v1::Envelope::BodyCase body,
                                                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    std::optional<v1::Envelope> e = Read(left);
    if (!e) return std::nullopt;
    if (e->body_case() == body) return e;
  }
}

bool RawClient::ClosedWithin(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Read(std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now()))) {
      return eof_;
    }
  }
  return false;
}

}  // namespace neuronmon::testing
