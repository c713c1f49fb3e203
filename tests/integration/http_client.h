// Test helper: a blocking HTTP/1.1 client over a plain TCP socket to 127.0.0.1, able to send
// anything (partial requests, oversized headers, any method) and to read one response with a
// deadline. Header names are lowercased.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace neuronmon::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  // The value of header `lowercase_name`, or "".
  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? "" : it->second;
  }
};

class HttpClient {
 public:
  // Connects to 127.0.0.1:`port`; `rcvbuf` > 0 shrinks the receive buffer (a slow reader).
  explicit HttpClient(std::uint16_t port, int rcvbuf = 0);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  // False when the peer closed or reset the connection.
  bool Send(std::string_view bytes);
  // The next response within `timeout`; nullopt on timeout or when the connection closed first.
  // `head`: the response to a HEAD request, whose Content-Length has no body.
  std::optional<HttpResponse> Read(std::chrono::milliseconds timeout = std::chrono::seconds(5),
                                   bool head = false);
  // Reads and returns up to `n` bytes of whatever arrives within `timeout`.
  std::string ReadSome(std::size_t n, std::chrono::milliseconds timeout);
  // True when the server closed the connection within `timeout` (discarding what it sent).
  bool ClosedWithin(std::chrono::milliseconds timeout);

 private:
  // Appends what arrives before `deadline`; false on timeout or EOF.
  bool Fill(std::chrono::steady_clock::time_point deadline);
  // Appends a chunked body (Transfer-Encoding: chunked) to `body`; false on timeout or EOF.
  bool ReadChunked(std::chrono::steady_clock::time_point deadline, std::string* body);

  int fd_ = -1;
  std::string pending_;
};

// GET (or another method) of `target` on a fresh connection, with extra header lines
// ("Accept: ...\r\n").
std::optional<HttpResponse> Fetch(std::uint16_t port, const std::string& target,
                                  const std::string& extra_headers = "",
                                  const std::string& method = "GET");

// A TCP port on 127.0.0.1 that was free a moment ago.
std::uint16_t FreePort();

}  // namespace neuronmon::testing
