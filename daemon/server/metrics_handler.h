// MetricsHandler: what the metrics endpoint answers, apart from the HTTP transport (HttpServer
// parses requests, enforces size and time limits and writes the replies). Routes: GET/HEAD
// /metrics (BuildMetrics over the newest retained window, rendered as the Accept header asks),
// /-/healthy (200 "ok", or 503 when sampling stalled) and / (a page linking both); anything else
// is 404, other methods 405 with Allow. A listener that requires a token gets 401 for any
// request without `Authorization: Bearer <token>`. It builds the exposition from what DaemonCore
// already holds (the snapshots and the analyzer's latest findings) and never samples. It also
// counts concurrent scrapes against the cap (503 beyond it) and the responses by status code, which
// /metrics shows. Borrows `core` and `stats`, which must outlive it. Not thread-safe: the
// io_context thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/core/config/server_options.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/metrics/prometheus.h"
#include "daemon/core/stats.h"

namespace neuronmon::daemon {

// The parts of a request the handler reads. Views into the transport's request.
struct HttpRequestHead {
  std::string_view method;  // "GET", "HEAD", ...
  std::string_view target;  // "/metrics", "/metrics?x=1"
  std::string_view accept;
  std::string_view accept_encoding;
  std::string_view authorization;
  bool requires_token = false;  // the listener is off loopback
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;  // for HEAD, the body a GET would get (the transport sends only its length)
  std::vector<std::pair<std::string, std::string>> headers;  // extra: Allow, WWW-Authenticate
  bool holds_scrape = false;  // the caller must call ScrapeDone() once the reply is written
};

class MetricsHandler {
 public:
  MetricsHandler(const DaemonCore& core, const DaemonStats& stats, MetricsHandlerOptions options);

  // The reply to `request` at daemon time `now`.
  HttpReply Handle(const HttpRequestHead& request, MonoTime now);
  // A reply with `holds_scrape` has been written (or its connection closed).
  void ScrapeDone();
  // Counts a response by status, for neuron_monitord_http_responses_total.
  void CountResponse(int status) { ++scrapes_.responses[status]; }

  std::size_t scrapes_in_flight() const { return scrapes_in_flight_; }
  void set_max_scrapes(std::size_t max) { options_.max_scrapes = max; }

 private:
  HttpReply Metrics(const HttpRequestHead& request);
  HttpReply Health(MonoTime now) const;
  HttpReply Index() const;

  const DaemonCore& core_;
  const DaemonStats& stats_;
  MetricsHandlerOptions options_;
  std::optional<procfs::HostConstants> host_;  // nullopt: /proc/stat unreadable, process_* fail
  std::string host_error_;
  ScrapeStats scrapes_;
  std::size_t scrapes_in_flight_ = 0;
};

// Reads the process_* values of the calling process from `proc_root`/self. Errors name the file.
Result<procfs::ProcessMetrics> ReadProcessMetrics(const procfs::HostConstants& host,
                                                  const std::string& proc_root = "/proc");
// Reads the boot time from `proc_root`/stat and the tick rate and page size from sysconf.
Result<procfs::HostConstants> ReadHostConstants(const std::string& proc_root = "/proc");

}  // namespace neuronmon::daemon
