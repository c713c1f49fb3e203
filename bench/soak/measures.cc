#include "bench/soak/measures.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>
#include <utility>

#include "bench/soak/client_io.h"
#include "bench/soak/figures.h"
#include "proto/procfs/proc_parsers.h"
#include "tui/model.h"

namespace neuronmon::soak {
namespace {

using namespace std::chrono_literals;

constexpr auto kScrapeInterval = 5s;
constexpr auto kScrapeTimeout = 10s;  // Prometheus's default scrape_timeout

std::int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct HttpReply {
  int status = 0;
  std::string body;
  std::string failure;  // empty: a complete 200 reply
};

HttpReply Failed(std::string why) {
  HttpReply r;
  r.failure = std::move(why);
  return r;
}

// `raw`, a whole HTTP/1.1 response read to the server's close, checked for a 200 status and a
// body of the length the headers announce.
HttpReply ParseHttpReply(const std::string& raw) {
  HttpReply r;
  const std::size_t headers_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || headers_end == std::string::npos || raw.size() < 12) {
    r.failure = raw.empty() ? "empty reply" : "truncated headers";
    return r;
  }
  r.status = std::atoi(raw.substr(9, 3).c_str());
  r.body = raw.substr(headers_end + 4);
  std::string headers = raw.substr(0, headers_end);
  std::transform(headers.begin(), headers.end(), headers.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const std::size_t length_at = headers.find("\r\ncontent-length:");
  if (r.status != 200) {
    r.failure = "status " + std::to_string(r.status);
  } else if (length_at != std::string::npos &&
             std::strtoull(headers.c_str() + length_at + 17, nullptr, 10) != r.body.size()) {
    r.failure = "truncated body";
  } else if (r.body.empty()) {
    r.failure = "empty body";
  }
  return r;
}

// GET /metrics on 127.0.0.1:`port`, the whole reply within `timeout`.
HttpReply HttpGet(std::uint16_t port, Steady::duration timeout) {
  const auto deadline = Steady::now() + timeout;
  UniqueFd fd = ConnectLoopback(port, 0);
  if (!fd.valid()) return Failed(std::string("connect: ") + std::strerror(errno));
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (!SendSome(fd.get(), request).empty()) return Failed("request not sent");
  std::string raw;
  std::vector<char> buffer(256 * 1024);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    if (left <= 0ms) return Failed("timeout");
    pollfd p{fd.get(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
    const ssize_t got = ::recv(fd.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got == 0) break;
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got < 0) return Failed(std::string("recv: ") + std::strerror(errno));
    raw.append(buffer.data(), static_cast<std::size_t>(got));
  }
  return ParseHttpReply(raw);
}

// The daemon's neuron_monitord_* series worth a line in the summary, keyed "name{labels}".
std::map<std::string, double> DaemonCounters(const std::string& body) {
  constexpr std::array<std::string_view, 11> kKept = {
      "neuron_monitord_client_disconnects_total",
      "neuron_monitord_sampler_missed_ticks_total",
      "neuron_monitord_frames_dropped_total",
      "neuron_monitord_http_responses_total",
      "neuron_monitord_connections_total",
      "neuron_monitord_history_evicted_total",
      "neuron_monitord_kernel_log_refused_total",
      "neuron_monitord_kernel_log_unattributed_total",
      "neuron_monitord_processes_unexamined",
      "neuron_monitord_runtimes_dropped_total",
      "neuron_device_health{"};
  std::map<std::string, double> out;
  std::size_t at = 0;
  while (at < body.size()) {
    std::size_t eol = body.find('\n', at);
    if (eol == std::string::npos) eol = body.size();
    const std::string_view line(body.data() + at, eol - at);
    at = eol + 1;
    const std::size_t space = line.rfind(' ');
    if (space == std::string_view::npos) continue;
    for (std::string_view family : kKept) {
      if (line.rfind(family, 0) != 0) continue;
      out[std::string(line.substr(0, space))] =
          std::atof(std::string(line.substr(space + 1)).c_str());
    }
  }
  return out;
}

ProcSample SampleProc(pid_t pid) {
  ProcSample s;
  const std::string proc = "/proc/" + std::to_string(pid);
  if (Result<std::string> status = procfs::ReadSmallFile(proc + "/status"); status.ok()) {
    const std::optional<std::uint64_t> kib = procfs::StatusNumber(*status, "VmRSS");
    if (kib) s.rss_mib = static_cast<double>(*kib) / 1024;
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(proc + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++s.fds;
  }
  return s;
}

// Each field's median, so that one sample taken while clients churn does not decide.
ProcSample Median(const std::vector<ProcSample>& samples) {
  std::vector<double> rss, fds, ours;
  for (const ProcSample& s : samples) {
    rss.push_back(s.rss_mib);
    fds.push_back(s.fds);
    ours.push_back(s.soak_connections);
  }
  return {Percentile(rss, 0.5), Percentile(fds, 0.5), Percentile(ours, 0.5)};
}

using TimedSample = std::pair<Steady::duration, ProcSample>;  // since the load started

// The median of the samples taken in [from, to).
ProcSample MedianBetween(const std::vector<TimedSample>& samples, Steady::duration from,
                         Steady::duration to) {
  std::vector<ProcSample> in;
  for (const auto& [at, sample] : samples) {
    if (at >= from && at < to) in.push_back(sample);
  }
  return Median(in);
}

}  // namespace

void Scraper::Run(const std::atomic<Phase>& phase) {
  auto next = Steady::now();
  while (phase.load() == Phase::kRunning) {
    if (Steady::now() >= next) {
      ScrapeOnce();
      next += kScrapeInterval;
    }
    std::this_thread::sleep_for(100ms);
  }
}

void Scraper::ScrapeOnce() {
  const auto start = Steady::now();
  HttpReply reply = HttpGet(port_, kScrapeTimeout);
  const double ms = Seconds(Steady::now() - start) * 1e3;
  std::lock_guard lock(mu_);
  if (!reply.failure.empty()) {
    ++tally_.failures[reply.failure];
    return;
  }
  ++tally_.ok;
  tally_.ms.push_back(ms);
  tally_.daemon_counters = DaemonCounters(reply.body);
}

void TopClient::Run(const std::atomic<Phase>& phase) {
  while (phase.load() != Phase::kStopped) {
    Converse(phase);
    if (phase.load() == Phase::kRunning) std::this_thread::sleep_for(1s);
  }
}

// One connection, until the daemon closes it or `phase` is kStopped.
void TopClient::Converse(const std::atomic<Phase>& phase) {
  UniqueFd fd = ConnectUnix(socket_path_, 0);
  if (!fd.valid()) return;
  {
    std::lock_guard lock(mu_);
    ++tally_.connections;
  }
  v1::Subscribe subscribe = tui::TopSubscription(std::chrono::duration<double>(period_).count());
  if (last_seq_ != 0) subscribe.set_resume_after_seq(last_seq_);
  first_live_ = last_seq_ == 0;
  if (!SendSome(fd.get(), HelloFrame(1, "soak-top") + SubscribeFrame(subscribe)).empty()) return;
  wire::FrameDecoder decoder(wire::kDefaultOutboundMaxFrame);
  v1::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  auto next_heartbeat = Steady::now() + 5s;
  while (phase.load() != Phase::kStopped) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) > 0 && !ReadOnce(fd.get(), decoder)) return;
    if (Steady::now() >= next_heartbeat) {
      (void)SendSome(fd.get(), Frame(heartbeat));
      next_heartbeat += 5s;
    }
  }
}

// Reads what is there and handles each frame; false when the connection is over.
bool TopClient::ReadOnce(int fd, wire::FrameDecoder& decoder) {
  const ssize_t got = ::recv(fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
  const std::int64_t received_ns = WallNowNs();
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  if (got <= 0) return false;
  std::string_view input(buffer_.data(), static_cast<std::size_t>(got));
  v1::Envelope e;
  while (!input.empty()) {
    const auto outcome = decoder.Decode(input, e);
    if (outcome == wire::FrameDecoder::Outcome::kNeedMore) break;
    if (outcome == wire::FrameDecoder::Outcome::kError) {
      std::lock_guard lock(mu_);
      ++tally_.errors;
      tally_.last_error = std::string("undecodable frame: ") + decoder.error_message();
      return false;
    }
    OnEnvelope(e, received_ns);
  }
  return true;
}

void TopClient::OnEnvelope(const v1::Envelope& e, std::int64_t received_ns) {
  std::lock_guard lock(mu_);
  if (e.has_error()) {
    ++tally_.errors;
    tally_.last_error = ErrorName(e.error()) + ": " + e.error().message();
    return;
  }
  if (e.has_notice()) {
    if (e.notice().kind() == v1::NOTICE_KIND_SHUTDOWN) tally_.shutdown_notice = true;
    if (e.notice().kind() != v1::NOTICE_KIND_GAP) return;
    ++tally_.gaps;
    last_seq_ = std::max(last_seq_, e.notice().last_seq());
    return;
  }
  if (!e.has_report()) return;
  const v1::Report& r = e.report();
  if (last_seq_ != 0 && r.seq() > last_seq_ + 1) tally_.missing += r.seq() - last_seq_ - 1;
  if (r.seq() <= last_seq_) ++tally_.out_of_order;
  last_seq_ = std::max(last_seq_, r.seq());
  if (r.replay()) {
    ++tally_.replayed;
    return;
  }
  ++tally_.reports;
  tally_.walls_ns.push_back(r.wall_time_unix_ns());
  if (std::exchange(first_live_, false)) {
    ++tally_.firsts;
    return;
  }
  tally_.lags_ms.push_back(static_cast<double>(received_ns - r.wall_time_unix_ns()) / 1e6);
}

Watched Watch(DaemonProcess& daemon, const SoakOptions& o, const sigset_t& stop_signals,
              LoadProbes probes) {
  Watched w;
  std::vector<TimedSample> samples;
  const auto start = Steady::now();
  auto next_progress = start + 30s;
  for (;;) {
    const timespec one_second{1, 0};
    if (::sigtimedwait(&stop_signals, nullptr, &one_second) > 0) w.interrupted = true;
    if (w.interrupted || (w.died = daemon.Exited())) break;
    const auto now = Steady::now();
    ProcSample s = SampleProc(daemon.pid());
    s.soak_connections = probes.open_connections();
    w.peak = {std::max(w.peak.rss_mib, s.rss_mib), std::max(w.peak.fds, s.fds)};
    samples.emplace_back(now - start, s);
    if (o.progress && now >= next_progress) {
      std::printf("[%4.0f s] daemon RSS %.1f MiB, %.0f fds | %s\n", Seconds(now - start), s.rss_mib,
                  s.fds, probes.progress().c_str());
      std::fflush(stdout);
      next_progress += 30s;
    }
    if (now - start >= o.duration) break;
  }
  const auto elapsed = Steady::now() - start;
  const auto window = std::min<Steady::duration>(60s, (o.duration - o.warmup) / 3);
  w.seconds = Seconds(elapsed);
  w.start = MedianBetween(samples, o.warmup, o.warmup + window);
  w.end = MedianBetween(samples, elapsed - window, elapsed);
  return w;
}

}  // namespace neuronmon::soak
