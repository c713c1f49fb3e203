// The /metrics HTTP endpoint over real loopback TCP: the daemon serves text and OpenMetrics, HEAD,
// the probes (/healthz, /readyz: text or JSON, without the token, with their own cap) and an index
// page; every bad request gets its status (404, 405, 431, 413, 401, 503 over
// the scrape cap) and a slowloris is cut off without delaying anyone else's scrape. The auth and
// stale-sampling paths run an HttpServer of their own over a DaemonCore the test samples.
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "daemon/core/backend.h"
#include "daemon/server/gzip.h"
#include "daemon/server/http_server.h"
#include "daemon/server/tls_context.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"
#include "tests/temp_dir.h"
#include "tests/tls_pki.h"

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A daemon with /metrics on an ephemeral loopback port; request timeout 300 ms (the fixture's
// handshake timeout).
std::unique_ptr<DaemonFixture> MetricsDaemon(std::function<void(daemon::DaemonConfig&)> tweak = {},
                                             const std::string& device = "sim:trn1.2xlarge") {
  return std::make_unique<DaemonFixture>(
      [tweak](daemon::DaemonConfig& c) {
        c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
        if (tweak) tweak(c);
      },
      device);
}

std::uint16_t PortOf(DaemonFixture& d) {
  const std::optional<std::uint16_t> port = d.metrics_port();
  EXPECT_TRUE(port.has_value());
  return port.value_or(0);
}

// The first scrape whose body contains `needle` (the daemon needs two samples for ratios),
// trying for up to 5 s.
std::optional<HttpResponse> ScrapeWhen(std::uint16_t port, const std::string& needle,
                                       const std::string& headers = "") {
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  std::optional<HttpResponse> r;
  while (std::chrono::steady_clock::now() < deadline) {
    r = Fetch(port, "/metrics", headers);
    if (r && r->body.find(needle) != std::string::npos) return r;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return r;
}

// A well-behaved scrape still succeeds.
void ExpectScrapes(std::uint16_t port) {
  const auto r = Fetch(port, "/metrics");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("neuron_monitord_build_info"), std::string::npos);
}

TEST(MetricsHttp, ServesTextFormatByDefault) {
  auto d = MetricsDaemon();
  const auto r = ScrapeWhen(PortOf(*d), "neuroncore_utilization_ratio{");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r->body.find("# TYPE neuroncore_utilization_ratio gauge\n"), std::string::npos);
  EXPECT_NE(r->body.find("instance_type=\"trn1.2xlarge\""), std::string::npos);
  EXPECT_NE(r->body.find("process_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(r->body.find("neuron_monitord_collector_success{group=\"process\"} 1"),
            std::string::npos);
  EXPECT_EQ(r->body.find("# EOF"), std::string::npos);
}

// memory_info and vcpu_usage come from the configured proc_root, as the process table does (a
// host's /proc mounted in a container), not from this machine's /proc.
TEST(MetricsHttp, HostGroupsReadTheConfiguredProcRoot) {
  test_util::TempDir proc("proc_root");
  std::ofstream(proc.File("meminfo"))
      << "MemTotal:       7340032 kB\nMemFree:         1048576 kB\nMemAvailable:   3145728 kB\n"
         "SwapTotal:       0 kB\nSwapFree:        0 kB\n";
  std::ofstream(proc.File("stat"))
      << "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0 0 0\n";
  auto d = MetricsDaemon([&](daemon::DaemonConfig& c) { c.backend.host.proc_root = proc.path(); });
  const auto r = ScrapeWhen(PortOf(*d), "system_memory_total_bytes{");
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->body.find("system_memory_total_bytes{"), std::string::npos);
  // 7 GiB in the tree's meminfo; 4 GiB used (total less available).
  EXPECT_NE(r->body.find("} 7.516192768e+09\n"), std::string::npos) << r->body.substr(0, 2000);
  EXPECT_NE(r->body.find("} 4.294967296e+09\n"), std::string::npos);
}

TEST(MetricsHttp, NegotiatesOpenMetrics) {
  auto d = MetricsDaemon();
  // What Prometheus 2.42 sends.
  const auto r = Fetch(PortOf(*d), "/metrics",
                       "Accept: application/openmetrics-text;version=1.0.0,application/"
                       "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/"
                       "*;q=0.1\r\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->Header("content-type"),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_TRUE(r->body.ends_with("# EOF\n"));
  EXPECT_NE(r->body.find("# TYPE instance info\n"), std::string::npos);
}

TEST(MetricsHttp, GzipWhenTheScraperAcceptsIt) {
  auto d = MetricsDaemon();
  ASSERT_TRUE(ScrapeWhen(PortOf(*d), "neuroncore_utilization_ratio{").has_value());
  // What Prometheus sends with every scrape.
  const auto gz = Fetch(PortOf(*d), "/metrics", "Accept-Encoding: gzip\r\n");
  ASSERT_TRUE(gz.has_value());
  EXPECT_EQ(gz->status, 200);
  EXPECT_EQ(gz->Header("content-encoding"), "gzip");
  EXPECT_EQ(gz->Header("vary"), "Accept-Encoding");
  Result<std::string> inflated = daemon::Gunzip(gz->body, 16 << 20);
  ASSERT_TRUE(inflated.ok()) << inflated.status().message();
  const std::string& body = *inflated;
  EXPECT_NE(body.find("# TYPE neuroncore_utilization_ratio gauge\n"), std::string::npos);
  EXPECT_LT(gz->body.size() * 5, body.size());
  // Not asked, or refused: plain text.
  for (const char* header :
       {"", "Accept-Encoding: identity\r\n", "Accept-Encoding: gzip;q=0\r\n"}) {
    const auto plain = Fetch(PortOf(*d), "/metrics", header);
    ASSERT_TRUE(plain.has_value());
    EXPECT_EQ(plain->Header("content-encoding"), "") << header;
    EXPECT_NE(plain->body.find("# TYPE neuroncore_utilization_ratio gauge\n"), std::string::npos);
  }
}

TEST(MetricsHttp, HeadHealthIndexAndKeepAlive) {
  auto d = MetricsDaemon();
  const std::uint16_t port = PortOf(*d);
  HttpClient c(port);
  c.Send("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto head = c.Read(seconds(5), /*head=*/true);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  EXPECT_GT(std::stoul(head->Header("content-length")), 1000u);
  EXPECT_EQ(head->body, "");
  c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");  // same connection
  const auto health = c.Read();
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  EXPECT_EQ(health->Header("cache-control"), "no-store");
  c.Send("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n");  // the old name still answers
  const auto old = c.Read();
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->body, "ok\n");
  // Ready once two samples are in (the fixture's daemon has been sampling for a while).
  std::optional<HttpResponse> ready;
  for (int i = 0; i < 100; ++i) {
    ready = Fetch(port, "/readyz", "Accept: text/plain, application/json;q=0.9\r\n");
    if (!ready || ready->status == 200) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200) << ready->body;
  EXPECT_EQ(ready->Header("content-type"), "application/json");
  EXPECT_EQ(ready->body.find(R"({"status":"ok","checks":[{"name":"sampling","ok":true,)"), 0u)
      << ready->body;
  c.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto index = c.Read();
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->Header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("<a href=\"/metrics\">"), std::string::npos);
  EXPECT_NE(index->body.find("<a href=\"/healthz\">"), std::string::npos);
  EXPECT_NE(index->body.find("<a href=\"/readyz\">"), std::string::npos);
}

TEST(MetricsHttp, WrongMethodAndUnknownPath) {
  auto d = MetricsDaemon();
  const std::uint16_t port = PortOf(*d);
  const auto post = Fetch(port, "/metrics", "Content-Length: 0\r\n", "POST");
  ASSERT_TRUE(post.has_value());
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->Header("allow"), "GET, HEAD");
  const auto missing = Fetch(port, "/metrics/../etc/passwd");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);
  ExpectScrapes(port);
}

TEST(MetricsHttp, OversizedHeadersAndBody) {
  auto d = MetricsDaemon();
  const std::uint16_t port = PortOf(*d);
  const auto big = Fetch(port, "/metrics", "X-Padding: " + std::string(16 * 1024, 'a') + "\r\n");
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->status, 431);
  const auto body = Fetch(port, "/metrics", "Content-Length: 1000000\r\n", "POST");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->status, 413);
  const auto garbage = Fetch(port, "/metrics\x01", "");
  ASSERT_TRUE(garbage.has_value());
  EXPECT_EQ(garbage->status, 400);
  ExpectScrapes(port);
}

TEST(MetricsHttp, SlowlorisIsCutOffWithoutBlockingScrapes) {
  auto d = MetricsDaemon();
  const std::uint16_t port = PortOf(*d);
  HttpClient slow(port);
  ASSERT_TRUE(slow.Send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  const auto t0 = std::chrono::steady_clock::now();
  ExpectScrapes(port);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(300)) << "not queued behind it";
  EXPECT_TRUE(slow.ClosedWithin(seconds(3))) << "the 300 ms request timeout closes it";
  ExpectScrapes(port);
}

// An HttpServer of its own over a DaemonCore sampled by the test, on its own io thread.
class Harness {
 public:
  Harness(bool requires_token, MonoTime last_sample, daemon::HttpServerOptions options = {},
          const std::string& device = "sim:trn1.2xlarge",
          std::shared_ptr<const daemon::TlsServerContext> tls = nullptr) {
    auto backend =
        daemon::MakeBackend({device, "healthy-training", 1, 1}, last_sample - seconds(45));
    if (!backend.ok()) throw std::runtime_error(backend.status().message());
    core_ = std::make_unique<daemon::DaemonCore>(
        daemon::CoreOptions{seconds(1), seconds(60), "test"}, std::move(*backend), nullptr);
    core_->Sample(last_sample - seconds(5), std::chrono::system_clock::now());
    core_->Sample(last_sample, std::chrono::system_clock::now());
    options.handler.token = "s3cret";
    server_ = std::make_unique<daemon::HttpServer>(io_, *core_, stats_, log_, options);
    EXPECT_TRUE(server_->Listen("127.0.0.1", 0, requires_token, std::move(tls)).ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Harness() {
    daemon::asio::post(io_, [this] {
      server_->Shutdown();
      io_.stop();
    });
    thread_.join();
  }
  std::uint16_t port() const { return server_->port().value_or(0); }

 private:
  static daemon::LoggerOptions Quiet() {
    daemon::LoggerOptions o;
    o.threshold = daemon::LogSeverity::kError;
    return o;
  }

  daemon::asio::io_context io_;
  daemon::Logger log_{Quiet()};
  daemon::DaemonStats stats_;
  std::unique_ptr<daemon::DaemonCore> core_;
  std::unique_ptr<daemon::HttpServer> server_;
  std::thread thread_;
};

// HTTPS with VerifyClientCertIfGiven on a listener that requires the token: a certificate the CA
// signed authenticates as the token does; without one, the token is still asked for.
TEST(MetricsHttp, AVerifiedClientCertificateStandsInForTheBearerToken) {
  test_util::TempDir dir("metrics_tls");
  test_util::TestPki pki(dir.path());
  ASSERT_TRUE(pki.ok());
  daemon::TlsServerOptions tls;
  tls.cert_file = pki.server_cert();
  tls.key_file = pki.server_key();
  tls.client_auth_type = "VerifyClientCertIfGiven";
  tls.client_ca_file = pki.ca();
  auto context = daemon::TlsServerContext::Create(tls, "listeners.metrics.tls");
  ASSERT_TRUE(context.ok()) << context.status().message();
  Harness h(/*requires_token=*/true, std::chrono::steady_clock::now(), {}, "sim:trn1.2xlarge",
            *context);
  const std::string curl = "curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert " +
                           pki.ca() + " https://localhost:" + std::to_string(h.port()) + "/metrics";
  const auto code = [](const std::string& command) {
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    char buf[64];
    while (pipe != nullptr && std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
    if (pipe != nullptr) ::pclose(pipe);
    return out;
  };
  EXPECT_EQ(code(curl), "401");
  EXPECT_EQ(code(curl + " -H 'Authorization: Bearer s3cret'"), "200");
  EXPECT_EQ(code(curl + " --cert " + pki.client_cert() + " --key " + pki.client_key()), "200");
  // A certificate another CA signed does not get through the handshake.
  EXPECT_EQ(code(curl + " --cert " + pki.wrong_server_cert() + " --key " + pki.wrong_server_key()),
            "000");
}

TEST(MetricsHttp, OffLoopbackListenerRequiresTheBearerToken) {
  Harness h(/*requires_token=*/true, std::chrono::steady_clock::now());
  const auto none = Fetch(h.port(), "/metrics");
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->Header("www-authenticate"), "Bearer realm=\"neuron-monitord\"");
  EXPECT_EQ(none->body.find("neuroncore"), std::string::npos);
  const auto wrong = Fetch(h.port(), "/metrics", "Authorization: Bearer s3cre\r\n");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(wrong->status, 401);
  const auto basic = Fetch(h.port(), "/", "Authorization: Basic czNjcmV0\r\n");
  ASSERT_TRUE(basic.has_value());
  EXPECT_EQ(basic->status, 401);
  // The probes answer without it (kubelet probes carry none), and say nothing of the host.
  for (const char* probe : {"/healthz", "/readyz"}) {
    const auto answer = Fetch(h.port(), probe, "Accept: application/json\r\n");
    ASSERT_TRUE(answer.has_value()) << probe;
    EXPECT_EQ(answer->status, 200) << probe << ": " << answer->body;
    EXPECT_EQ(answer->body.find("trn1"), std::string::npos) << answer->body;
  }
  const auto right = Fetch(h.port(), "/metrics", "Authorization: Bearer s3cret\r\n");
  ASSERT_TRUE(right.has_value());
  EXPECT_EQ(right->status, 200);
  EXPECT_NE(right->body.find("neuroncore_utilization_ratio{"), std::string::npos);
}

TEST(MetricsHttp, HealthIs503WhenSamplingStalled) {
  Harness h(/*requires_token=*/false, std::chrono::steady_clock::now() - seconds(10));
  const auto health = Fetch(h.port(), "/healthz");
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body.find("not ok: sampling: last sample 10"), 0u) << health->body;
  const auto ready = Fetch(h.port(), "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 503);
  const auto metrics = Fetch(h.port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->status, 200) << "the last good snapshot is still served";
}

// Probe replies hold a slot of their own until written: beyond limits.max_probes at once a probe
// gets 503, and a written one gives its slot back; scrapes are not counted against it.
TEST(MetricsHandler, ProbesHaveTheirOwnCap) {
  auto backend = daemon::MakeBackend({"sim:trn1.2xlarge", "healthy-training", 1, 1}, MonoTime{});
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  daemon::DaemonCore core(daemon::CoreOptions{seconds(1), seconds(60), "test"}, std::move(*backend),
                          nullptr);
  const MonoTime t0 = MonoTime{} + seconds(50);
  core.Sample(t0, std::chrono::system_clock::now());
  daemon::DaemonStats stats;
  daemon::MetricsHandlerOptions options;
  options.max_probes = 2;
  daemon::MetricsHandler handler(core, stats, options, t0);
  const daemon::HttpRequestHead probe{.method = "GET", .target = "/healthz"};
  const daemon::HttpReply a = handler.Handle(probe, t0);
  const daemon::HttpReply b = handler.Handle(probe, t0);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.slot, daemon::ReplySlot::kProbe);
  const daemon::HttpReply scrape = handler.Handle({.method = "GET", .target = "/metrics"}, t0);
  EXPECT_EQ(scrape.status, 200) << "scrapes have their own cap";
  const daemon::HttpReply refused = handler.Handle(probe, t0);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.slot, daemon::ReplySlot::kNone);
  handler.Release(a.slot);
  EXPECT_EQ(handler.Handle(probe, t0).status, 200);
  // Stale sampling: /healthz and /readyz 503, /readyz's JSON names the check.
  handler.Release(b.slot);
  handler.Release(daemon::ReplySlot::kProbe);
  const daemon::HttpReply stale =
      handler.Handle({.method = "GET", .target = "/readyz?verbose", .accept = "application/json"},
                     t0 + seconds(4));
  EXPECT_EQ(stale.status, 503);
  EXPECT_NE(stale.body.find(R"({"name":"sampling","ok":false,"detail":"last sample 4.0 s ago)"),
            std::string::npos)
      << stale.body;
  // JSON refused with q=0 is not JSON.
  handler.Release(daemon::ReplySlot::kProbe);
  const daemon::HttpReply plain = handler.Handle(
      {.method = "GET", .target = "/healthz", .accept = "application/json;q=0, text/plain"},
      t0 + seconds(4));
  EXPECT_EQ(plain.content_type, "text/plain; charset=utf-8");
}

TEST(MetricsHttp, ScrapesBeyondTheCapGet503) {
  daemon::HttpServerOptions options;
  options.handler.max_scrapes = 1;
  options.send_buffer_bytes = 4096;  // so the kernel cannot take the whole reply at once
  Harness h(/*requires_token=*/false, std::chrono::steady_clock::now(), options,
            "sim:trn1.32xlarge");
  // A reader too slow to take the ~0.3 MB reply holds the only scrape slot.
  HttpClient stuck(h.port(), /*rcvbuf=*/4096);
  stuck.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(stuck.ReadSome(12, seconds(5)), "HTTP/1.1 200");
  const auto refused = Fetch(h.port(), "/metrics");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->Header("retry-after"), "1");
  const auto health = Fetch(h.port(), "/healthz");
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 200) << "the scrape cap is on scrapes only";
  const auto rest = stuck.Read(seconds(10));  // draining frees the slot
  ASSERT_TRUE(rest.has_value());
  EXPECT_GT(rest->body.size(), 100'000u);
  ExpectScrapes(h.port());
}

// A scraper that asks and never reads holds its slot for at most about a second once another
// scrape needs it, not for the whole write timeout.
TEST(MetricsHttp, AStalledScrapeGivesItsSlotToANewOne) {
  daemon::HttpServerOptions options;
  options.handler.max_scrapes = 1;
  options.send_buffer_bytes = 4096;
  Harness h(/*requires_token=*/false, std::chrono::steady_clock::now(), options,
            "sim:trn1.32xlarge");
  HttpClient stuck(h.port(), /*rcvbuf=*/4096);
  stuck.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(stuck.ReadSome(12, seconds(5)), "HTTP/1.1 200");
  std::this_thread::sleep_for(milliseconds(1200));
  const auto r = Fetch(h.port(), "/metrics");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(stuck.ClosedWithin(seconds(2)));
}

// After an error reply the daemon drains what the client still sends for one second in all — it
// used to re-arm that second with every byte, so a client trickling bytes held the connection.
TEST(MetricsHttp, LingerAfterAnErrorIsBounded) {
  auto d = MetricsDaemon();
  const std::uint16_t port = PortOf(*d);
  HttpClient c(port);
  ASSERT_TRUE(c.Send("GET /metrics\x01 HTTP/1.1\r\nHost: x\r\n\r\n"));
  const auto reply = c.Read(seconds(2));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 400);
  const auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() - t0 < seconds(4)) {
    closed = !c.Send("x");
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(2500));
  ExpectScrapes(port);
}

// Keep-alive is bounded: after max_requests requests, or once the connection is older than its
// lifetime, the reply says `Connection: close` and the connection ends.
TEST(MetricsHttp, KeepAliveIsBoundedByRequestsAndLifetime) {
  daemon::HttpServerOptions options;
  options.max_requests = 2;
  Harness h(/*requires_token=*/false, std::chrono::steady_clock::now(), options);
  HttpClient c(h.port());
  for (int i = 1; i <= 2; ++i) {
    ASSERT_TRUE(c.Send("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"));
    const auto r = c.Read(seconds(2));
    ASSERT_TRUE(r.has_value()) << i;
    EXPECT_EQ(r->Header("connection"), i == 2 ? "close" : "") << i;
  }
  EXPECT_TRUE(c.ClosedWithin(seconds(3)));

  daemon::HttpServerOptions short_lived;
  short_lived.connection_lifetime = milliseconds(300);
  Harness h2(/*requires_token=*/false, std::chrono::steady_clock::now(), short_lived);
  HttpClient old(h2.port());
  ASSERT_TRUE(old.Send("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(old.Read(seconds(2)).has_value());
  std::this_thread::sleep_for(milliseconds(400));
  // Idle past its lifetime, or asked once more: either way it ends.
  const bool sent = old.Send("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n");
  if (sent) {
    const auto last = old.Read(seconds(2));
    if (last.has_value()) {
      EXPECT_EQ(last->Header("connection"), "close");
    }
  }
  EXPECT_TRUE(old.ClosedWithin(seconds(3)));
}

// Connections that never send a valid request — or ask and never read — cannot hold the slots:
// past metrics_max_pending, the oldest of them is closed for a newcomer.
TEST(MetricsHttp, PendingConnectionsMakeRoomForScrapers) {
  daemon::HttpServerOptions options;
  options.max_pending = 3;
  options.max_connections = 8;
  options.handler.max_scrapes = 1;
  options.send_buffer_bytes = 4096;
  options.request_timeout = seconds(30);
  Harness h(/*requires_token=*/false, std::chrono::steady_clock::now(), options,
            "sim:trn1.32xlarge");
  // One asks for a scrape and never reads it, holding the only scrape slot.
  HttpClient hog(h.port(), /*rcvbuf=*/4096);
  ASSERT_TRUE(hog.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_EQ(hog.ReadSome(12, seconds(5)), "HTTP/1.1 200");
  // Others connect and say nothing.
  std::vector<std::unique_ptr<HttpClient>> idle;
  for (int i = 0; i < 2; ++i) idle.push_back(std::make_unique<HttpClient>(h.port()));
  std::this_thread::sleep_for(milliseconds(100));
  // A scraper arrives: the oldest pending connection, the hog, makes room, freeing the slot.
  const auto r = Fetch(h.port(), "/metrics");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(hog.ClosedWithin(seconds(2)));
  EXPECT_FALSE(idle[1]->ClosedWithin(milliseconds(100)));
}

}  // namespace
}  // namespace neuronmon::testing
