// Fuzzes the daemon's /metrics HTTP request path end to end: two HttpServers (one open, one
// requiring the bearer token, as a listener off loopback does) on 127.0.0.1, built once over a
// DaemonCore sampled twice (as tests/integration/metrics_test.cc's Harness does), on an io_context
// this target drives. Per input the first byte picks the server and its limits (SetLimits, as a
// reload applies them: small header/body caps, one scrape slot, few requests per connection);
// the rest goes over a fresh loopback connection, then the client half-closes and reads until the
// server closes. With bit 7 set the bytes instead build one HttpRequestHead (method, target,
// Accept, Authorization) handed to a MetricsHandler directly, reaching what Beast's parser would
// refuse before it.
// Invariants: every reply starts with "HTTP/1.", the server closes the connection within a
// bounded time once the client is done (no connection kept past its bounds), and
// connection_count() returns to 0.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/core/backend.h"
#include "daemon/core/daemon_core.h"
#include "daemon/server/asio.h"
#include "daemon/server/http_server.h"
#include "daemon/server/log.h"
#include "daemon/server/metrics_handler.h"
#include "tests/fuzz/fuzz_input.h"

namespace neuronmon::fuzz {
namespace {

namespace asio = daemon::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;
using RealClock = std::chrono::steady_clock;

constexpr std::string_view kToken = "s3cret-fuzz-token";
constexpr auto kCloseBound = seconds(3);  // real time for the server to finish with a client

void Die(const std::string& why) {
  std::fprintf(stderr, "http_fuzz: %s\n", why.c_str());
  std::abort();
}

daemon::LoggerOptions Quiet() {
  daemon::LoggerOptions o;
  o.fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  o.threshold = daemon::LogSeverity::kDebug;  // every message is built
  return o;
}

struct World {
  World() {
    const MonoTime now = RealClock::now();
    auto backend =
        daemon::MakeBackend({"sim:trn1.2xlarge", "healthy-training", 1, 1}, now - seconds(45));
    if (!backend.ok()) Die(backend.status().message());
    core = std::make_unique<daemon::DaemonCore>(
        daemon::CoreOptions{seconds(1), seconds(60), "fuzz"}, std::move(*backend), nullptr);
    core->Sample(now - seconds(1), std::chrono::system_clock::now());
    core->Sample(now, std::chrono::system_clock::now());
    for (bool token : {false, true}) {
      auto& server = token ? secured : open;
      server = std::make_unique<daemon::HttpServer>(io, *core, stats, log, Options(0));
      if (Status s = server->Listen("127.0.0.1", 0, token); !s.ok()) Die(s.message());
    }
    handler = std::make_unique<daemon::MetricsHandler>(*core, stats, Options(0).handler);
  }

  // Limits as a config may set them (see config.h's ranges); `b` picks tighter ones.
  static daemon::HttpServerOptions Options(std::uint8_t b) {
    daemon::HttpServerOptions o;
    o.handler.token = std::string(kToken);
    o.handler.version = "fuzz";
    o.handler.max_scrapes = (b & 4) ? 1 : 16;
    o.max_header_bytes = (b & 8) ? 256 : 8 * 1024;
    o.max_body_bytes = (b & 16) ? 16 : 8 * 1024;
    o.max_requests = (b & 32) ? 1 : 8;  // a scrape costs milliseconds: few per input
    o.request_timeout = milliseconds(500);
    o.write_timeout = seconds(1);
    return o;
  }

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  daemon::Logger log{Quiet()};
  daemon::DaemonStats stats;
  std::unique_ptr<daemon::DaemonCore> core;
  std::unique_ptr<daemon::HttpServer> open, secured;
  std::unique_ptr<daemon::MetricsHandler> handler;
};

World& TheWorld() {
  static World world;
  return world;
}

int Connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;  // out of ports or descriptors: skip this input
  }
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  return fd;
}

// Sends `request`, half-closes, and reads until the server closes; returns what it answered.
std::string Exchange(World& w, int fd, std::string_view request) {
  std::string response;
  bool write_done = false;
  const auto deadline = RealClock::now() + kCloseBound;
  while (RealClock::now() < deadline) {
    bool moved = w.io.poll() > 0;
    if (!request.empty()) {
      const ssize_t n = ::send(fd, request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        request.remove_prefix(static_cast<std::size_t>(n));
        moved = true;
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        request = {};  // the server closed (after a 4xx, say)
      }
    }
    if (request.empty() && !write_done) {
      ::shutdown(fd, SHUT_WR);
      write_done = true;
    }
    char buffer[64 * 1024];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return response;
    if (n > 0) {
      if (response.size() < 64) response.append(buffer, static_cast<std::size_t>(n));
      moved = true;
    }
    if (!moved) w.io.run_one_for(milliseconds(1));
  }
  Die("the server kept a finished client's connection open for over 3 s");
  return response;
}

void ExpectNoConnections(World& w, const daemon::HttpServer& server) {
  const auto deadline = RealClock::now() + kCloseBound;
  while (server.connection_count() > 0 && RealClock::now() < deadline) {
    if (w.io.poll() == 0) w.io.run_one_for(milliseconds(1));
  }
  if (server.connection_count() != 0) {
    Die("leak: " + std::to_string(server.connection_count()) +
        " connection(s) after the client left");
  }
}

void HandleDirectly(World& w, FuzzInput& in) {
  const std::string method = in.String(16), target = in.String(200), accept = in.String(200),
                    accept_encoding = in.String(200), authorization = in.String(64),
                    last_event_id = in.String(24);
  daemon::HttpRequestHead head{.method = method,
                               .target = target,
                               .accept = accept,
                               .accept_encoding = accept_encoding,
                               .authorization = authorization,
                               .last_event_id = last_event_id,
                               .requires_token = in.Bool()};
  const auto now = RealClock::now() + seconds(in.U8() % 16);  // sometimes stale sampling
  daemon::HttpReply reply = w.handler->Handle(head, now);
  w.handler->Release(reply.slot);
  if (reply.status < 200 || reply.status > 599) Die("status " + std::to_string(reply.status));
}

}  // namespace
}  // namespace neuronmon::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::fuzz;
  World& w = TheWorld();
  FuzzInput in(data, size);
  const std::uint8_t setup = in.U8();
  if (setup & 0x80) {
    HandleDirectly(w, in);
    return 0;
  }
  neuronmon::daemon::HttpServer& server = (setup & 1) ? *w.secured : *w.open;
  server.SetLimits(World::Options(setup));
  const int fd = Connect(*server.port());
  if (fd < 0) return 0;
  const std::string response = Exchange(w, fd, in.Rest());
  ::close(fd);
  if (!response.empty() && !response.starts_with("HTTP/1.")) Die("a reply that is not HTTP/1.x");
  ExpectNoConnections(w, server);
  return 0;
}
