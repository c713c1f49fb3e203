// events_load: what long-lived /events subscribers cost a running neuron-monitord (bench/README.md,
// "Events"). It scrapes /metrics once a second as Prometheus would for --baseline with no
// subscriber, then opens --subscribers Server-Sent Events streams on /events and keeps them for
// --duration while it goes on scraping. Through both phases it sends the daemon SIGHUP every
// --reload-every (each reload is a "daemon" event), so the baseline pays for the reloads too and
// the difference is the subscribers'; it samples the daemon's RSS. It prints the scrape latency of
// both phases, the daemon's RSS over the loaded phase (from --warmup on) and CPU, how many events
// each subscriber got, and each event's delivery latency: its receipt minus its `time` (the
// sample's wall time for sampled events, the moment it was logged for the daemon's own) — on the
// /events streams, and on one protobuf stream subscriber (Subscribe.events) when --socket is given.
//
//   events_load --port 9413 --pid $(pidof neuron-monitord) --subscribers 1000 --duration 10m
//       --socket /run/neuron-monitor/neuron-monitord.sock
//
// bench/events_soak.sh starts a daemon for it. Exit status 0 when it ran, 2 when it could not.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "proto/common/duration.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

double NowUnixMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "2026-12-07T19:03:17.351Z" as Unix milliseconds; nullopt when it is not one.
std::optional<double> ParseTime(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr || *rest != '.') return std::nullopt;
  return static_cast<double>(timegm(&tm)) * 1000 + std::atof(rest + 1);
}

int Connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& text) {
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::send(fd, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// One scrape on a new connection, as Prometheus does (gzip): its milliseconds, or nullopt.
std::optional<double> Scrape(std::uint16_t port) {
  const auto start = Clock::now();
  const int fd = Connect(port);
  if (fd < 0) return std::nullopt;
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = SendAll(fd,
                    "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n"
                    "Connection: close\r\n\r\n");
  std::string reply;
  char buf[65536];
  while (ok) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) ok = false;
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (!ok || !reply.starts_with("HTTP/1.1 200")) return std::nullopt;
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct ProcessSample {
  double rss_mib = 0;
  double cpu_seconds = 0;
};

ProcessSample SampleProcess(int pid) {
  ProcessSample s;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) s.rss_mib = std::atof(line.c_str() + 6) / 1024;
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) {
      stime = std::stoull(f);
      break;
    }
  }
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return s;
}

struct Subscriber {
  int fd = -1;
  std::string pending;
  std::uint64_t events = 0;
  bool closed = false;
};

struct Latencies {
  std::mutex mu;
  std::vector<double> sampled_ms;  // events the daemon saw at a sample
  std::vector<double> daemon_ms;   // its own (the reloads)
};

// Takes the complete SSE events in `s.pending`; counts them and records the latency of those
// logged after `since_ms` (the retained ones sent at connect are history, not news).
void Consume(Subscriber& s, double since_ms, Latencies& lat) {
  for (;;) {
    const std::size_t end = s.pending.find("\n\n");
    if (end == std::string::npos) return;
    const std::string block = s.pending.substr(0, end);
    s.pending.erase(0, end + 2);
    const std::size_t data = block.find("data: {");
    if (data == std::string::npos) continue;
    ++s.events;
    const std::size_t t = block.find("\"time\":\"", data);
    if (t == std::string::npos) continue;
    const std::optional<double> when = ParseTime(block.substr(t + 8, 24));
    if (!when || *when < since_ms) continue;
    const double ms = NowUnixMs() - *when;
    std::lock_guard lock(lat.mu);
    (block.find("\"kind\":\"daemon\"") != std::string::npos ? lat.daemon_ms : lat.sampled_ms)
        .push_back(ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"events_load: long-lived /events subscribers against a running neuron-monitord"};
  std::uint16_t port = 9413;
  int pid = 0;
  int subscribers = 1000;
  std::string duration_text = "10m", baseline_text = "2m", warmup_text = "30s", reload_text = "5s";
  app.add_option("--port", port, "the daemon's /metrics port on 127.0.0.1")->required();
  app.add_option("--pid", pid, "the daemon's pid (RSS, CPU, SIGHUP)")->required();
  app.add_option("--subscribers", subscribers, "Server-Sent Events streams to hold open");
  app.add_option("--duration", duration_text, "how long to hold them");
  app.add_option("--baseline", baseline_text, "scrapes without subscribers first");
  app.add_option("--warmup", warmup_text, "RSS is compared from this far into the loaded phase");
  app.add_option("--reload-every", reload_text, "SIGHUP the daemon this often (0s: never)");
  std::string socket_path;
  app.add_option("--socket", socket_path, "also subscribe to events on this stream socket");
  int subscriber_nice = 0;
  app.add_option("--subscriber-nice", subscriber_nice,
                 "the nice value of the thread that reads the subscribers' streams (on a small "
                 "machine, 19 keeps it from taking the scraper's and the daemon's CPU, as "
                 "subscribers on other hosts would not)");
  CLI11_PARSE(app, argc, argv);
  const auto parse = [](const std::string& t) { return neuronmon::ParseDuration(t); };
  const auto duration = parse(duration_text), baseline = parse(baseline_text),
             warmup = parse(warmup_text), reload = parse(reload_text);
  if (!duration.ok() || !baseline.ok() || !warmup.ok() || !reload.ok()) {
    std::fprintf(stderr, "events_load: a duration is not one (500ms, 10s, 2m)\n");
    return 2;
  }
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);

  std::atomic<int> phase{0};  // 0 baseline, 1 loaded, 2 done
  std::mutex scrape_mu;
  std::vector<double> scrapes[2];
  int scrape_failures[2] = {0, 0};
  std::thread scraper([&] {
    while (phase != 2) {
      const auto next = Clock::now() + std::chrono::seconds(1);
      const int p = phase;
      const std::optional<double> ms = Scrape(port);
      {
        std::lock_guard lock(scrape_mu);
        if (ms) {
          scrapes[p].push_back(*ms);
        } else {
          ++scrape_failures[p];
        }
      }
      std::this_thread::sleep_until(next);
    }
  });

  std::thread reloader([&] {
    if (*reload <= neuronmon::Nanos(0)) return;
    auto next = Clock::now() + *reload;
    while (phase != 2) {
      std::this_thread::sleep_for(milliseconds(100));
      if (Clock::now() < next) continue;
      ::kill(pid, SIGHUP);
      next += *reload;
    }
  });
  const ProcessSample base_start = SampleProcess(pid);
  std::this_thread::sleep_for(*baseline);
  const ProcessSample base_end = SampleProcess(pid);
  const double base_rss = base_end.rss_mib;

  // The subscribers, opened one after another, then read in one poll loop.
  std::vector<Subscriber> subs(static_cast<std::size_t>(subscribers));
  int refused = 0;
  for (Subscriber& s : subs) {
    s.fd = Connect(port);
    if (s.fd < 0 ||
        !SendAll(s.fd,
                 "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")) {
      ++refused;
      s.closed = true;
    }
  }
  const double loaded_from_ms = NowUnixMs();
  phase = 1;
  const auto loaded_start = Clock::now();
  const ProcessSample load_start = SampleProcess(pid);
  Latencies lat;
  Latencies stream_lat;  // the protobuf stream subscriber's
  std::unique_ptr<neuronmon::client::Client> stream_client;
  if (!socket_path.empty()) {
    neuronmon::client::ClientOptions co;
    co.client_name = "events_load";
    co.endpoint.kind = neuronmon::client::Endpoint::Kind::kUnix;
    co.endpoint.path = socket_path;
    co.subscribe.mutable_events()->set_only(true);
    auto c = neuronmon::client::Client::Connect(std::move(co));
    if (!c.ok()) {
      std::fprintf(stderr, "events_load: %s\n", c.status().message().c_str());
      return 2;
    }
    stream_client = std::move(*c);
  }
  std::thread stream_reader([&] {
    while (stream_client && phase == 1) {
      auto e = stream_client->Next(milliseconds(200));
      if (!e || e->kind != neuronmon::client::Event::Kind::kEvent) continue;
      const double ms = NowUnixMs() - static_cast<double>(e->event.unix_ns()) / 1e6;
      std::lock_guard lock(stream_lat.mu);
      (e->event.kind() == neuronmon::v1::EVENT_KIND_DAEMON ? stream_lat.daemon_ms
                                                           : stream_lat.sampled_ms)
          .push_back(ms);
    }
  });
  std::vector<std::pair<double, double>> rss;  // (seconds into the phase, MiB)
  std::thread reader([&] {
    if (subscriber_nice != 0) {
      ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), subscriber_nice);
    }
    std::vector<pollfd> fds;
    char buf[65536];
    while (phase == 1) {
      fds.clear();
      for (const Subscriber& s : subs) fds.push_back({s.closed ? -1 : s.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 200) <= 0) continue;
      for (std::size_t i = 0; i < subs.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const ssize_t n = ::recv(subs[i].fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) {
          subs[i].closed = true;
          continue;
        }
        subs[i].pending.append(buf, static_cast<std::size_t>(n));
        Consume(subs[i], loaded_from_ms, lat);
      }
    }
  });
  while (Clock::now() - loaded_start < *duration) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto now = Clock::now();
    const double t = std::chrono::duration<double>(now - loaded_start).count();
    if (static_cast<long>(t) % 5 == 0) rss.emplace_back(t, SampleProcess(pid).rss_mib);
  }
  const ProcessSample load_end = SampleProcess(pid);
  phase = 2;
  reader.join();
  stream_reader.join();
  reloader.join();
  scraper.join();
  int open = 0;
  std::uint64_t fewest = UINT64_MAX, most = 0;
  for (Subscriber& s : subs) {
    open += s.closed ? 0 : 1;
    fewest = std::min(fewest, s.events);
    most = std::max(most, s.events);
    if (s.fd >= 0) ::close(s.fd);
  }

  const double warm = std::chrono::duration<double>(*warmup).count();
  double first = 0, low = 1e18, high = 0, last = 0;
  for (const auto& [t, mib] : rss) {
    if (t < warm) continue;
    if (first == 0) first = mib;
    low = std::min(low, mib);
    high = std::max(high, mib);
    last = mib;
  }
  const double base_s = std::chrono::duration<double>(*baseline).count();
  const double load_s = std::chrono::duration<double>(*duration).count();
  std::printf("baseline (%s, no subscriber): RSS %.1f MiB, CPU %.2f%% of a core\n",
              baseline_text.c_str(), base_rss,
              100 * (base_end.cpu_seconds - base_start.cpu_seconds) / base_s);
  std::printf("  scrapes: %zu ok, %d failed; p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              scrapes[0].size(), scrape_failures[0], Percentile(scrapes[0], 0.5),
              Percentile(scrapes[0], 0.99), Percentile(scrapes[0], 1));
  std::printf("loaded (%s, %d subscribers: %d refused, %d still open at the end):\n",
              duration_text.c_str(), subscribers, refused, open);
  std::printf("  CPU %.2f%% of a core\n",
              100 * (load_end.cpu_seconds - load_start.cpu_seconds) / load_s);
  std::printf(
      "  RSS from %s on: first %.1f MiB, min %.1f, max %.1f, last %.1f (max/first %+.1f%%)\n",
      warmup_text.c_str(), first, low, high, last, first > 0 ? 100 * (high / first - 1) : 0);
  std::printf("  scrapes: %zu ok, %d failed; p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              scrapes[1].size(), scrape_failures[1], Percentile(scrapes[1], 0.5),
              Percentile(scrapes[1], 0.99), Percentile(scrapes[1], 1));
  std::printf("  events per subscriber: %llu to %llu\n",
              static_cast<unsigned long long>(fewest == UINT64_MAX ? 0 : fewest),
              static_cast<unsigned long long>(most));
  const auto print = [](const char* where, Latencies& l) {
    std::lock_guard lock(l.mu);
    std::printf(
        "  %s, sampled events (%zu receipts): p50 %.1f ms, p99 %.1f ms, max %.1f ms\n"
        "  %s, daemon events (%zu receipts): p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
        where, l.sampled_ms.size(), Percentile(l.sampled_ms, 0.5), Percentile(l.sampled_ms, 0.99),
        Percentile(l.sampled_ms, 1), where, l.daemon_ms.size(), Percentile(l.daemon_ms, 0.5),
        Percentile(l.daemon_ms, 0.99), Percentile(l.daemon_ms, 1));
  };
  print("delivery latency on /events", lat);
  if (stream_client) print("delivery latency on the protobuf stream", stream_lat);
  return 0;
}
