// MetricsHandler: what the metrics endpoint answers, apart from the HTTP transport (HttpServer
// parses requests, enforces size and time limits and writes the replies). Routes: GET/HEAD
// /metrics (BuildMetrics over the newest retained window, rendered as the Accept header asks),
// /healthz and /readyz (daemon/core/probes.h: 200 or 503, plain text, or JSON with every check
// when the Accept header asks for application/json; /-/healthy is /healthz's old name), /events
// (the retained events after `?after=SEQ` or Last-Event-ID, as NDJSON or, for Accept:
// text/event-stream, Server-Sent Events; with `follow` — Server-Sent Events' default — a long-lived
// reply the transport keeps sending new events on, within max_event_streams; docs/events.md) and
// / (a page linking them); anything else
// is 404, other methods 405 with Allow. A listener that requires a token gets 401 for any request
// without `Authorization: Bearer <token>` — except the probes, which reveal nothing and which
// kubelet probes send without one. It builds the exposition from what DaemonCore already holds (the
// snapshots and the analyzer's latest findings) and never samples. It also counts concurrent
// scrapes and probe replies against their caps (503 beyond them) and the responses by status code,
// which /metrics shows. Borrows `core` and `stats`, which must outlive it. Not thread-safe: the
// io_context thread.
#pragma once

#include <cstdint>
#include <map>
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
  std::string_view method = {};  // "GET", "HEAD", ...
  std::string_view target = {};  // "/metrics", "/metrics?x=1"
  std::string_view accept = {};
  std::string_view accept_encoding = {};
  std::string_view authorization = {};
  std::string_view last_event_id = {};  // an SSE client's resume point
  bool requires_token = false;          // the listener is off loopback
};

// The handler's bounded slot a reply holds until it is written (kStream: until its connection
// closes): its caller must Release() it.
enum class ReplySlot : std::uint8_t { kNone, kScrape, kProbe, kStream };

// A long-lived /events reply: the transport sends `body` and then, as they are logged, the events
// after `after` (MetricsHandler::EventsAfter), until the stream's lifetime ends.
struct EventStreamStart {
  std::uint64_t after = 0;
  bool sse = false;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;  // for HEAD, the body a GET would get (the transport sends only its length)
  std::vector<std::pair<std::string, std::string>> headers;  // extra: Allow, WWW-Authenticate
  ReplySlot slot = ReplySlot::kNone;
  std::optional<EventStreamStart> stream;  // set: a long-lived /events reply (slot kStream)
};

class MetricsHandler {
 public:
  // `started`: when the daemon began sampling (the probes' start-up grace counts from it).
  MetricsHandler(const DaemonCore& core, const DaemonStats& stats, MetricsHandlerOptions options,
                 MonoTime started = std::chrono::steady_clock::now());

  // The reply to `request` at daemon time `now`.
  HttpReply Handle(const HttpRequestHead& request, MonoTime now);
  // A reply holding `slot` has been written (or its connection closed); kNone is a no-op.
  void Release(ReplySlot slot);
  // Counts a response by status, for neuron_monitord_http_responses_total.
  void CountResponse(int status) { ++scrapes_.responses[status]; }
  // The events after `*after` as an /events body — Server-Sent Events or NDJSON lines, a gap line
  // first when some after `*after` are no longer kept — at most `max_events`, and no more than
  // `max_bytes` but for the first; advances `*after` past what it holds. Each event is rendered
  // once for every stream that sends it.
  // The newest event's seq (0: none yet): a stream that has it has nothing to send.
  std::uint64_t newest_event_seq() const;
  std::string EventsAfter(std::uint64_t* after, bool sse, std::size_t max_events,
                          std::size_t max_bytes);

  std::size_t scrapes_in_flight() const { return scrapes_in_flight_; }
  std::size_t probes_in_flight() const { return probes_in_flight_; }
  std::size_t streams_in_flight() const { return streams_in_flight_; }
  void set_max_scrapes(std::size_t max) { options_.max_scrapes = max; }
  void set_max_probes(std::size_t max) { options_.max_probes = max; }
  void set_max_event_streams(std::size_t max) { options_.max_event_streams = max; }

 private:
  HttpReply Metrics(const HttpRequestHead& request);
  HttpReply Probe(const HttpRequestHead& request, std::string_view path, MonoTime now);
  HttpReply Events(const HttpRequestHead& request);
  // The count of replies holding `slot` (null for kNone); a 503 with Retry-After when `slot`
  // (kScrape or kProbe) is at its cap, nullopt when there is room; `r` holding `slot` until
  // Release.
  std::size_t* InFlight(ReplySlot slot);
  std::optional<HttpReply> Full(ReplySlot slot);
  HttpReply Hold(HttpReply r, ReplySlot slot);
  HttpReply Index() const;
  // This daemon instance's id in hex: the first part of each Server-Sent Event's id.
  std::string InstanceHex() const;

  const DaemonCore& core_;
  const DaemonStats& stats_;
  MetricsHandlerOptions options_;
  std::optional<procfs::HostConstants> host_;  // nullopt: /proc/stat unreadable, process_* fail
  std::string host_error_;
  ScrapeStats scrapes_;
  std::size_t scrapes_in_flight_ = 0;
  std::size_t probes_in_flight_ = 0;
  std::size_t streams_in_flight_ = 0;
  // Each event's JSON line and Server-Sent Event block, rendered once for every stream, by seq;
  // the newest kept.
  struct Rendered {
    std::string json;
    std::string sse;  // "" until a stream asks for it
  };
  std::map<std::uint64_t, Rendered> rendered_;
  std::string instance_hex_;  // InstanceHex(), once known
  MonoTime started_;
};

// Reads the process_* values of the calling process from `proc_root`/self. Errors name the file.
Result<procfs::ProcessMetrics> ReadProcessMetrics(const procfs::HostConstants& host,
                                                  const std::string& proc_root = "/proc");
// Reads the boot time from `proc_root`/stat and the tick rate and page size from sysconf.
Result<procfs::HostConstants> ReadHostConstants(const std::string& proc_root = "/proc");

}  // namespace neuronmon::daemon
