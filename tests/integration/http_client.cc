#include "tests/integration/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace neuronmon::testing {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in Loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses the status line and headers of `head` (without the blank line).
HttpResponse ParseHead(const std::string& head) {
  HttpResponse r;
  std::size_t start = 0;
  for (bool first = true; start < head.size(); first = false) {
    std::size_t end = head.find("\r\n", start);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(start, end - start);
    start = end + 2;
    if (first) {
      const std::size_t sp = line.find(' ');
      r.status = sp == std::string::npos ? 0 : std::atoi(line.c_str() + sp + 1);
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers[Lower(line.substr(0, colon))] = value;
  }
  return r;
}

}  // namespace

HttpClient::HttpClient(std::uint16_t port, int rcvbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  const sockaddr_in addr = Loopback(port);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

HttpClient::~HttpClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool HttpClient::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool HttpClient::Fill(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  pollfd p{fd_, POLLIN, 0};
  if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buf[65536];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) return false;
  pending_.append(buf, static_cast<std::size_t>(n));
  return true;
}

std::optional<HttpResponse> HttpClient::Read(std::chrono::milliseconds timeout, bool head) {
  const auto deadline = Clock::now() + timeout;
  std::size_t end;
  while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill(deadline)) return std::nullopt;
  }
  HttpResponse r = ParseHead(pending_.substr(0, end));
  pending_.erase(0, end + 4);
  if (!head && r.Header("transfer-encoding") == "chunked") {
    if (!ReadChunked(deadline, &r.body)) return std::nullopt;
    return r;
  }
  const auto length = r.headers.find("content-length");
  const std::size_t want = head || length == r.headers.end() ? 0 : std::stoul(length->second);
  while (pending_.size() < want) {
    if (!Fill(deadline)) return std::nullopt;
  }
  r.body = pending_.substr(0, want);
  pending_.erase(0, want);
  return r;
}

bool HttpClient::ReadChunked(Clock::time_point deadline, std::string* body) {
  for (;;) {
    std::size_t eol;
    while ((eol = pending_.find("\r\n")) == std::string::npos) {
      if (!Fill(deadline)) return false;
    }
    const std::size_t size = std::stoul(pending_.substr(0, eol), nullptr, 16);
    while (pending_.size() < eol + 2 + size + 2) {
      if (!Fill(deadline)) return false;
    }
    body->append(pending_, eol + 2, size);
    pending_.erase(0, eol + 2 + size + 2);  // a last chunk has no trailers from our servers
    if (size == 0) return true;
  }
}

std::string HttpClient::ReadSome(std::size_t n, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (pending_.size() < n && Fill(deadline)) {
  }
  std::string out = pending_.substr(0, std::min(n, pending_.size()));
  pending_.erase(0, out.size());
  return out;
}

bool HttpClient::ClosedWithin(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(1, left.count()))) <= 0) continue;
    char buf[65536];
    if (::recv(fd_, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

std::optional<HttpResponse> Fetch(std::uint16_t port, const std::string& target,
                                  const std::string& extra_headers, const std::string& method) {
  HttpClient c(port);
  if (!c.connected()) return std::nullopt;
  c.Send(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n");
  return c.Read(std::chrono::seconds(10), method == "HEAD");
}

std::uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace neuronmon::testing
