#include "daemon/server/metrics_handler.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "daemon/core/metrics/exposition_format.h"
#include "daemon/core/probes.h"
#include "daemon/server/gzip.h"
#include "proto/common/http_lists.h"
#include "proto/common/secret.h"
#include "proto/common/text.h"
#include "proto/names/event_json.h"
#include "proto/names/names.h"

namespace neuronmon::daemon {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

constexpr std::string_view kAllow = "GET, HEAD";
// Smaller replies are sent as they are: gzip's header and trailer would outweigh the saving.
constexpr std::size_t kGzipFrom = 1024;

// The events one /events reply carries at most; a client asks again after the last.
constexpr std::size_t kMaxEventsPerReply = 1000;

// Whether an Accept header lists `wanted` with a weight above 0 (parameters aside), read as the
// /metrics negotiation reads Accept (proto/common/http_lists.h).
bool AcceptsType(std::string_view accept, std::string_view wanted) {
  for (const WeightedMember& m : ParseWeightedList(accept, WeightSyntax::kLenient, 64)) {
    if (m.weight > 0 && EqualsIgnoringCase(m.value, wanted)) return true;
  }
  return false;
}

HttpReply Text(int status, std::string body) {
  HttpReply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

bool Authorized(const HttpRequestHead& request, const std::string& token) {
  if (!request.requires_token) return true;
  constexpr std::string_view kScheme = "Bearer ";
  const std::string_view value = request.authorization;
  if (token.empty() || value.size() <= kScheme.size()) return false;
  // The scheme is case-insensitive; the comparison of the token is constant-time, so the reply's
  // timing does not tell how much of a guess was right.
  if (!EqualsIgnoringCase(value.substr(0, kScheme.size()), kScheme)) return false;
  return SecretsEqual(Trim(value.substr(kScheme.size()), " "), token);
}

std::string HtmlEscaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// This process's open descriptors without listing /proc/self/fd, where the kernel builds an entry
// per descriptor (about a microsecond each, and a real host's daemon keeps thousands open to
// sample the driver's files): one poll() over every slot of the descriptor table — FDSize in
// /proc/self/status — with no events asked marks exactly the closed slots POLLNVAL. nullopt when
// that cannot be done; the caller lists the directory then.
std::optional<std::uint64_t> CountOpenFdsByPoll() {
  Result<std::string> status = ReadSmallFile("/proc/self/status");
  if (!status.ok()) return std::nullopt;
  const std::optional<std::uint64_t> slots = StatusNumber(*status, "FDSize");
  if (!slots || *slots == 0 || *slots > (1u << 24)) return std::nullopt;
  std::vector<pollfd> fds(*slots);
  for (std::size_t i = 0; i < fds.size(); ++i) fds[i] = {static_cast<int>(i), 0, 0};
  if (::poll(fds.data(), fds.size(), 0) < 0) return std::nullopt;  // EINVAL: over RLIMIT_NOFILE
  std::uint64_t open = 0;
  for (const pollfd& p : fds) open += (p.revents & POLLNVAL) == 0 ? 1 : 0;
  return open;
}

std::uint64_t CountOpenFds(const std::string& proc_root) {
  if (proc_root == "/proc") {
    // Linux 6.2 and later give the count as the size of /proc/self/fd, from the descriptor
    // table's bitmap: no file is touched (poll() asks every socket for its state, which with a
    // thousand /events streams was a tenth of a scrape). Older kernels say 0.
    struct stat fd_dir {};
    if (::stat("/proc/self/fd", &fd_dir) == 0 && fd_dir.st_size > 0) {
      return static_cast<std::uint64_t>(fd_dir.st_size);
    }
    if (std::optional<std::uint64_t> n = CountOpenFdsByPoll()) return *n;
  }
  std::error_code ec;
  std::uint64_t n = 0;
  for (std::filesystem::directory_iterator it(proc_root + "/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

Result<HostConstants> ReadHostConstants(const std::string& proc_root) {
  Result<std::string> text = ReadSmallFile(proc_root + "/stat");
  if (!text.ok()) return text.status();
  Result<ProcStat> stat = ParseProcStat(*text);
  if (!stat.ok()) return stat.status();
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (ticks <= 0 || page <= 0) return Status::IoError("sysconf: no tick rate or page size");
  return HostConstants{stat->boot_time_seconds, static_cast<std::uint64_t>(ticks),
                       static_cast<std::uint64_t>(page)};
}

Result<ProcessMetrics> ReadProcessMetrics(const HostConstants& host, const std::string& proc_root) {
  const std::string path = proc_root + "/self/stat";
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  Result<ProcessStat> stat = ParseProcessStat(*text, path);
  if (!stat.ok()) return stat.status();
  Result<ProcessMetrics> m = ComputeProcessMetrics(*stat, host, CountOpenFds(proc_root));
  rlimit files{};
  if (m.ok() && ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    m->max_fds = static_cast<std::uint64_t>(files.rlim_cur);
  }
  return m;
}

MetricsHandler::MetricsHandler(const DaemonCore& core, const DaemonStats& stats,
                               MetricsHandlerOptions options, MonoTime started)
    : core_(core), stats_(stats), options_(std::move(options)), started_(started) {
  Result<HostConstants> host = ReadHostConstants();
  if (host.ok()) {
    host_ = *host;
  } else {
    host_error_ = host.status().message();
  }
}

HttpReply MetricsHandler::Handle(const HttpRequestHead& request, MonoTime now) {
  const std::string_view path = request.target.substr(0, request.target.find('?'));
  const bool probe = path == "/healthz" || path == "/readyz" || path == "/-/healthy";
  if (!probe && !Authorized(request, options_.token)) {
    HttpReply r = Text(401, "401 Unauthorized: send Authorization: Bearer <token>\n");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"neuron-monitord\"");
    return r;
  }
  if (!probe && path != "/metrics" && path != "/events" && path != "/") {
    return Text(404, "404 Not Found: try /metrics, /events, /healthz or /readyz\n");
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpReply r = Text(405, "405 Method Not Allowed: use GET or HEAD\n");
    r.headers.emplace_back("Allow", kAllow);
    return r;
  }
  if (path == "/metrics") return Metrics(request);
  if (path == "/events") return Events(request);
  if (probe) return Probe(request, path, now);
  return Index();
}

HttpReply MetricsHandler::Metrics(const HttpRequestHead& request) {
  if (std::optional<HttpReply> full = Full(ReplySlot::kScrape)) return *full;
  const MetricsWindow window = SelectWindow(core_.history(), options_.rate_window, core_.period());
  const Result<ProcessMetrics> process =
      host_ ? ReadProcessMetrics(*host_) : Result<ProcessMetrics>(Status::IoError(host_error_));
  const Analysis* analysis = core_.latest_analysis();
  MetricsInput in;
  in.inventory = &core_.inventory();
  in.end = window.end;
  in.start = window.start;
  in.stats = &stats_;
  in.scrapes = &scrapes_;
  in.process = &process;
  in.findings = analysis != nullptr ? &analysis->runtimes : nullptr;
  in.jobs = &core_.jobs();
  in.version = options_.version;
  in.period = core_.period();
  const ExpositionFormat format = ChooseFormat(request.accept);
  HttpReply r;
  r.content_type = std::string(ContentType(format));
  r.body = Render(BuildMetrics(in), format);
  r.headers.emplace_back("Vary", "Accept-Encoding");
  if (r.body.size() >= kGzipFrom && AcceptsGzip(request.accept_encoding)) {
    // On a failure (memory) the reply goes out uncompressed, which every client accepts.
    if (Result<std::string> gz = Gzip(r.body); gz.ok()) {
      r.body = std::move(*gz);
      r.headers.emplace_back("Content-Encoding", "gzip");
    }
  }
  return Hold(std::move(r), ReplySlot::kScrape);
}

HttpReply MetricsHandler::Events(const HttpRequestHead& request) {
  // The resume point: ?after=SEQ, else an SSE client's Last-Event-ID, else from the oldest kept.
  std::string_view after_text = request.last_event_id;
  const bool sse = AcceptsType(request.accept, "text/event-stream");
  std::optional<std::string_view> follow_text;
  const std::size_t q = request.target.find('?');
  if (q != std::string_view::npos) {
    std::string_view query = request.target.substr(q + 1);
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      if (pair.starts_with("after=")) after_text = pair.substr(6);
      if (pair == "follow" || pair.starts_with("follow=")) {
        follow_text = pair.size() > 7 ? pair.substr(7) : std::string_view("1");
      }
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
  }
  // An SSE id is INSTANCE-SEQ: one of another daemon instance (a restart) resumes from this
  // daemon's first event, as does a seq beyond its newest.
  bool other_instance = false;
  const bool from_id = after_text.data() == request.last_event_id.data();  // not ?after=
  if (const std::size_t dash = after_text.find('-'); from_id && dash != std::string_view::npos) {
    other_instance = after_text.substr(0, dash) != InstanceHex();
    after_text.remove_prefix(dash + 1);
  }
  std::uint64_t after = 0;
  if (!after_text.empty()) {
    if (after_text.size() > 19 || after_text.find_first_not_of("0123456789") != std::string::npos) {
      return Text(400, "400 Bad Request: after must be an event's seq (digits)\n");
    }
    after = std::stoull(std::string(after_text));
  }
  if (other_instance || after > core_.events().newest_seq()) after = 0;
  // Server-Sent Events are a stream unless told otherwise; NDJSON ends unless told to follow.
  bool follow = sse;
  if (follow_text) {
    if (*follow_text == "1" || *follow_text == "true") {
      follow = true;
    } else if (*follow_text == "0" || *follow_text == "false") {
      follow = false;
    } else {
      return Text(400, "400 Bad Request: follow must be 1, true, 0 or false\n");
    }
  }
  HttpReply r;
  r.content_type = sse ? "text/event-stream; charset=utf-8" : "application/x-ndjson";
  r.headers.emplace_back("Cache-Control", "no-store");
  if (follow && request.method != "HEAD") {
    if (std::optional<HttpReply> full = Full(ReplySlot::kStream)) return *full;
    r.headers.emplace_back("X-Accel-Buffering", "no");  // proxies: pass each event on at once
    if (sse) r.body = "retry: 1000\n\n";  // a lost stream reconnects with Last-Event-ID
    r.stream = EventStreamStart{after, sse};
    return Hold(std::move(r), ReplySlot::kStream);
  }
  if (std::optional<HttpReply> full = Full(ReplySlot::kScrape)) return *full;
  if (sse) r.body = "retry: 1000\n\n";  // the reply ends: reconnect with Last-Event-ID
  r.body += EventsAfter(&after, sse, kMaxEventsPerReply, std::numeric_limits<std::size_t>::max());
  return Hold(std::move(r), ReplySlot::kScrape);
}

std::uint64_t MetricsHandler::newest_event_seq() const { return core_.events().newest_seq(); }

std::string MetricsHandler::EventsAfter(std::uint64_t* after, bool sse, std::size_t max_events,
                                        std::size_t max_bytes) {
  const EventLog& log = core_.events();
  std::string body;
  // Events after `after` that are no longer kept are said to be missing, not skipped silently.
  if (*after + 1 < log.oldest_seq() && *after < log.newest_seq()) {
    const std::string gap = R"({"kind":"gap","first_seq":)" + std::to_string(*after + 1) +
                            R"(,"last_seq":)" + std::to_string(log.oldest_seq() - 1) +
                            R"(,"summary":"events no longer retained"})";
    body += sse ? "event: gap\ndata: " + gap + "\n\n" : gap + "\n";
    *after = log.oldest_seq() - 1;
  }
  for (const v1::Event* e : log.After(*after, max_events)) {
    auto [it, fresh] = rendered_.try_emplace(e->seq());
    Rendered& r = it->second;
    if (fresh) r.json = EventJson(*e) + "\n";
    if (sse && r.sse.empty()) {
      if (instance_hex_.empty()) instance_hex_ = InstanceHex();
      r.sse = "id: " + instance_hex_ + "-" + std::to_string(e->seq()) +
              "\nevent: " + EventKindName(e->kind()) + "\ndata: " + r.json + "\n";
    }
    const std::size_t before = body.size();
    body += sse ? r.sse : r.json;
    if (body.size() > max_bytes && before > 0) {
      body.resize(before);  // the next batch starts with it
      break;
    }
    *after = e->seq();
  }
  // Streams send the newest events; older ones are rendered again if one ever asks.
  while (rendered_.size() > 2 * kMaxEventsPerReply) rendered_.erase(rendered_.begin());
  return body;
}

std::string MetricsHandler::InstanceHex() const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(core_.instance_id()));
  return hex;
}

std::size_t* MetricsHandler::InFlight(ReplySlot slot) {
  switch (slot) {
    case ReplySlot::kScrape:
      return &scrapes_in_flight_;
    case ReplySlot::kProbe:
      return &probes_in_flight_;
    case ReplySlot::kStream:
      return &streams_in_flight_;
    case ReplySlot::kNone:
      break;
  }
  return nullptr;
}

std::optional<HttpReply> MetricsHandler::Full(ReplySlot slot) {
  const std::size_t max = slot == ReplySlot::kScrape  ? options_.max_scrapes
                          : slot == ReplySlot::kProbe ? options_.max_probes
                                                      : options_.max_event_streams;
  if (*InFlight(slot) < max) return std::nullopt;
  const char* what = slot == ReplySlot::kScrape  ? "scrapes"
                     : slot == ReplySlot::kProbe ? "probes"
                                                 : "event streams";
  HttpReply r = Text(503, std::string("503 Service Unavailable: too many ") + what + " at once\n");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpReply MetricsHandler::Hold(HttpReply r, ReplySlot slot) {
  r.slot = slot;
  ++*InFlight(slot);
  return r;
}

void MetricsHandler::Release(ReplySlot slot) {
  std::size_t* in_flight = InFlight(slot);
  if (in_flight != nullptr && *in_flight > 0) --*in_flight;
}

HttpReply MetricsHandler::Probe(const HttpRequestHead& request, std::string_view path,
                                MonoTime now) {
  if (std::optional<HttpReply> full = Full(ReplySlot::kProbe)) return *full;
  const ProbeInput in{
      .history = &core_.history(), .period = core_.period(), .now = now, .started = started_};
  const ProbeResult result = path == "/readyz" ? Readiness(in) : Liveness(in);
  HttpReply r;
  r.status = result.ok ? 200 : 503;
  if (AcceptsType(request.accept, "application/json")) {
    r.content_type = "application/json";
    r.body = ProbeJson(result);
  } else {
    r.body = ProbeText(result);
  }
  r.headers.emplace_back("Cache-Control", "no-store");
  return Hold(std::move(r), ReplySlot::kProbe);
}

HttpReply MetricsHandler::Index() const {
  HttpReply r;
  r.content_type = "text/html; charset=utf-8";
  r.body =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>neuron-monitord</title></head>\n"
      "<body><h1>neuron-monitord " +
      HtmlEscaped(options_.version) + "</h1>\n<p>Sampling " + HtmlEscaped(core_.Describe()) +
      ".</p>\n<ul><li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n"
      "<li><a href=\"/events\">/events</a> (what changed)</li>\n"
      "<li><a href=\"/healthz\">/healthz</a> (alive)</li>\n"
      "<li><a href=\"/readyz\">/readyz</a> (ready)</li></ul></body></html>\n";
  return r;
}

}  // namespace neuronmon::daemon
