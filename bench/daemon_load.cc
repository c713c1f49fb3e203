// daemon_load: connects N subscribers to a neuron-monitord and measures delivery lag (sample time
// to receipt), reports dropped or missing, and the daemon's CPU and memory while it serves them.
//
//   daemon_load --daemon build/release/daemon/neuron-monitord --clients 1000 --period 100ms
//   daemon_load --socket /run/neuron-monitor/neuron-monitord.sock --clients 10 --duration 60s
//   daemon_load --daemon build/release/daemon/neuron-monitord --clients 1000 --transport tls
//
// With --daemon it starts the daemon itself (temp socket, --device as given) and stops it after.
// Its config (daemon_load.json in the temp dir) raises limits.max_clients, max_clients_per_uid
// and max_handshaking to at least --clients: all of this tool's clients share one uid and say
// Hello at once, which the defaults (256 per uid, 64 in their handshake) would refuse. It also
// lifts max_history_bytes to 1 GiB, so a short --period keeps the default 10-minute history
// (the daemon refuses to start when the history's estimate is over that limit: 144 MiB at 100ms).
// --transport tcp or tls (with --daemon) serves the stream on a loopback TCP port instead, tls with
// a certificate made in the temp dir by the openssl command; each subscriber then does its own TLS
// handshake (OpenSSL, verifying the certificate) and reads through it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proto/common/duration.h"
#include "proto/common/order_statistics.h"
#include "proto/procfs/proc_parsers.h"
#include "proto/wire/frame_codec.h"
#include "tui/model.h"

namespace {

using namespace neuronmon;
using Steady = std::chrono::steady_clock;

struct LoadOptions {
  std::string daemon_binary, socket_path, device = "sim:trn2.48xlarge", groups = "top";
  std::string period_text = "100ms", duration_text = "20s", warmup_text = "3s";
  std::string transport = "unix";  // unix, tcp or tls (tcp and tls need --daemon)
  std::uint16_t port = 0;          // tcp, tls: the daemon's loopback port
  int clients = 100;
  int threads = 2;
};

struct Subscriber {
  int fd = -1;
  SSL* ssl = nullptr;   // --transport tls
  std::string pending;  // bytes of an incomplete frame
  std::uint64_t last_seq = 0;
  std::uint64_t reports = 0;
  std::uint64_t missing = 0;  // seqs skipped without a gap notice
  std::uint64_t gaps = 0;     // gap notices
};

// Reads a varint at `p`; false when incomplete or longer than 10 bytes.
bool Varint(const char*& p, const char* end, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const auto b = static_cast<unsigned char>(*p++);
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// What the load tool needs from one frame, without parsing a whole Report: the benchmark must
// measure the daemon, not protobuf parsing in the load generator.
struct Scanned {
  bool report = false;
  std::uint64_t seq = 0;
  std::int64_t wall_ns = 0;
  bool replay = false;
  std::optional<v1::Notice> notice;
};

Scanned Scan(std::string_view frame) {
  Scanned out;
  const char* p = frame.data();
  const char* end = p + frame.size();
  std::uint64_t tag = 0, len = 0;
  if (!Varint(p, end, tag) || (tag & 7) != 2 || !Varint(p, end, len)) return out;
  const char* body_end = p + len;
  if (tag >> 3 == 5) {  // Notice
    v1::Notice n;
    if (n.ParseFromArray(p, static_cast<int>(len))) out.notice = n;
    return out;
  }
  if (tag >> 3 != 4) return out;  // not a Report
  out.report = true;
  while (p < body_end) {
    std::uint64_t t = 0, v = 0;
    if (!Varint(p, body_end, t)) break;
    const int field = static_cast<int>(t >> 3);
    switch (t & 7) {
      case 0:
        Varint(p, body_end, v);
        if (field == 1) out.seq = v;
        if (field == 2) out.wall_ns = static_cast<std::int64_t>(v);
        if (field == 5) out.replay = v != 0;
        break;
      case 1:
        p += 8;
        break;
      case 2:
        Varint(p, body_end, v);
        p += v;
        break;
      case 5:
        p += 4;
        break;
      default:
        return out;
    }
  }
  return out;
}

// A connected TCP socket to 127.0.0.1:`port`, or -1.
int ConnectTcp(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int Connect(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

v1::Subscribe SubscriptionFor(const std::string& groups, Nanos period) {
  v1::Subscribe s = tui::TopSubscription(1);
  if (groups == "all") s.clear_groups();  // empty: every group
  if (groups == "cores") {
    s.clear_groups();
    s.add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
  }
  for (v1::GroupSubscription& gs : *s.mutable_groups()) {
    gs.set_period_ns(static_cast<std::uint64_t>(period.count()));
  }
  return s;
}

void SendHandshake(const Subscriber& sub, const v1::Subscribe& s) {
  v1::Envelope hello;
  hello.mutable_hello()->set_protocol_version(1);
  hello.mutable_hello()->set_client_name("daemon_load");
  v1::Envelope subscribe;
  *subscribe.mutable_subscribe() = s;
  const std::string bytes = *wire::EncodeFrame(hello) + *wire::EncodeFrame(subscribe);
  if (sub.ssl != nullptr) {
    (void)SSL_write(sub.ssl, bytes.data(), static_cast<int>(bytes.size()));
  } else {
    (void)!::send(sub.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
}

struct ProcUsage {
  double cpu_seconds = 0;
  double rss_mib = 0;
  double peak_rss_mib = 0;
};

// The process's CPU time and resident size from /proc; a figure that cannot be read stays 0.
ProcUsage Usage(pid_t pid) {
  ProcUsage u;
  const std::string proc = "/proc/" + std::to_string(pid);
  if (Result<std::string> text = procfs::ReadSmallFile(proc + "/stat"); text.ok()) {
    if (Result<procfs::ProcessStat> stat = procfs::ParseProcessStat(*text); stat.ok()) {
      u.cpu_seconds = static_cast<double>(stat->user_ticks + stat->system_ticks) /
                      static_cast<double>(::sysconf(_SC_CLK_TCK));
    }
  }
  if (Result<std::string> status = procfs::ReadSmallFile(proc + "/status"); status.ok()) {
    const auto mib = [&](std::string_view key) {
      const std::optional<std::uint64_t> kib = procfs::StatusNumber(*status, key);
      return kib ? static_cast<double>(*kib) / 1024 : 0.0;
    };
    u.rss_mib = mib("VmRSS");
    u.peak_rss_mib = mib("VmHWM");
  }
  return u;
}

// The `q` quantile of `v`, the rank rounded down.
double Percentile(const std::vector<double>& v, double q) {
  return Quantile(v, q, RankRounding::kDown);
}

void Handle(Subscriber& s, const Scanned& e, bool measuring, std::vector<double>& lags) {
  if (e.notice && e.notice->kind() == v1::NOTICE_KIND_GAP) {
    ++s.gaps;
    s.last_seq = e.notice->last_seq();
    return;
  }
  if (!e.report) return;
  if (s.last_seq != 0 && e.seq > s.last_seq + 1 && measuring) s.missing += e.seq - s.last_seq - 1;
  s.last_seq = e.seq;
  if (!measuring || e.replay) return;
  ++s.reports;
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  lags.push_back(static_cast<double>(now.count() - e.wall_ns) / 1e6);
}

// Splits `s.pending` into frames and handles each.
void Drain(Subscriber& s, bool measuring, std::vector<double>& lags) {
  const char* p = s.pending.data();
  const char* end = p + s.pending.size();
  for (;;) {
    const char* start = p;
    std::uint64_t len = 0;
    if (!Varint(p, end, len) || static_cast<std::uint64_t>(end - p) < len) {
      p = start;
      break;
    }
    Handle(s, Scan(std::string_view(p, len)), measuring, lags);
    p += len;
  }
  s.pending.erase(0, static_cast<std::size_t>(p - s.pending.data()));
}

void AddOptions(CLI::App& app, LoadOptions& o) {
  app.add_option("--daemon", o.daemon_binary, "start this neuron-monitord binary");
  app.add_option("--socket", o.socket_path, "or use a running daemon's socket");
  app.add_option("--device", o.device, "device for a started daemon");
  app.add_option("--clients", o.clients, "subscribers");
  app.add_option("--period", o.period_text, "subscription (and started daemon) period");
  app.add_option("--duration", o.duration_text, "measurement time");
  app.add_option("--warmup", o.warmup_text, "time before measuring");
  app.add_option("--groups", o.groups, "top (neuron-top's groups), all, or cores");
  app.add_option("--threads", o.threads, "reader threads in this tool");
  app.add_option("--transport", o.transport, "with --daemon: unix (default), tcp or tls")
      ->check(CLI::IsMember({"unix", "tcp", "tls"}));
}

void RaiseFdLimit() {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

// A daemon this tool started: its pid (-1: none, a running daemon is used) and its temp dir.
struct StartedDaemon {
  pid_t pid = -1;
  std::filesystem::path dir;
};

// Room for every client, all from our one uid and in their handshake at once, and for a
// 10-minute history at a short period.
// Over TCP, a loopback listener (TLS with `dir`'s cert.pem and key.pem); the unix socket open to
// all, so loopback TCP needs no token.
void WriteConfig(const std::string& path, int clients, const LoadOptions& o,
                 const std::filesystem::path& dir) {
  std::ofstream out(path);
  out << "{\"limits\": {\"max_clients\": " << std::max(2048, clients + 64)
      << ", \"max_clients_per_uid\": " << std::max(256, clients + 64)
      << ", \"max_handshaking\": " << std::max(64, clients + 64)
      << ", \"max_history_bytes\": 1073741824}";
  if (o.transport != "unix") {
    out << ", \"listeners\": {\"unix\": {\"mode\": \"0666\"}, \"tcp\": {\"address\": \"127.0.0.1:"
        << o.port << "\"";
    if (o.transport == "tls") {
      out << ", \"tls\": {\"cert_file\": \"" << (dir / "cert.pem").string()
          << "\", \"key_file\": \"" << (dir / "key.pem").string() << "\"}";
    }
    out << "}}";
  }
  out << "}\n";
}

// A loopback port nothing listens on now.
std::uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Starts o.daemon_binary in a new temp dir, on a socket there (o.socket_path is set to it), and
// waits up to 5 s for the socket. False, with a message, when it cannot be spawned.
bool StartDaemon(LoadOptions& o, StartedDaemon& daemon) {
  daemon.dir =
      std::filesystem::temp_directory_path() / ("daemon_load-" + std::to_string(::getpid()));
  std::filesystem::create_directories(daemon.dir);
  o.socket_path = (daemon.dir / "d.sock").string();
  const std::string config = (daemon.dir / "daemon_load.json").string();
  if (o.transport != "unix") o.port = FreePort();
  if (o.transport == "tls") {
    const std::string make =
        "openssl req -x509 -new -noenc -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout '" +
        (daemon.dir / "key.pem").string() + "' -out '" + (daemon.dir / "cert.pem").string() +
        "' -days 2 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 2>/dev/null";
    if (std::system(make.c_str()) != 0) {
      std::fprintf(stderr, "openssl could not make a certificate\n");
      return false;
    }
  }
  WriteConfig(config, o.clients, o, daemon.dir);
  std::vector<std::string> args = {
      o.daemon_binary, "--socket",         o.socket_path, "--device",    o.device, "--period",
      o.period_text,   "--metrics-listen", "off",         "--log-level", "warn",   "--config",
      config,          "--record",         "off"};
  std::vector<char*> argv_c;
  for (auto& a : args) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  if (posix_spawn(&daemon.pid, o.daemon_binary.c_str(), nullptr, nullptr, argv_c.data(), environ) !=
      0) {
    std::fprintf(stderr, "cannot start %s\n", o.daemon_binary.c_str());
    return false;
  }
  for (int i = 0; i < 500 && !std::filesystem::exists(o.socket_path); ++i) ::usleep(10000);
  return true;
}

// Connects every subscriber to `socket_path` and sends its Hello and `subscription`. False, with
// a message, at the first connection that fails.
bool ConnectAll(const LoadOptions& o, SSL_CTX* tls, const v1::Subscribe& subscription,
                std::vector<Subscriber>& subs) {
  for (std::size_t i = 0; i < subs.size(); ++i) {
    Subscriber& s = subs[i];
    s.fd = o.transport == "unix" ? Connect(o.socket_path) : ConnectTcp(o.port);
    if (s.fd < 0) {
      std::fprintf(stderr, "connect %zu failed\n", i);
      return false;
    }
    if (tls != nullptr) {
      s.ssl = SSL_new(tls);
      SSL_set_fd(s.ssl, s.fd);
      SSL_set1_host(s.ssl, "127.0.0.1");
      if (SSL_connect(s.ssl) != 1) {
        char why[256];
        ERR_error_string_n(ERR_get_error(), why, sizeof why);
        std::fprintf(stderr, "TLS handshake %zu failed: %s\n", i, why);
        return false;
      }
    }
    SendHandshake(s, subscription);
    ::fcntl(s.fd, F_SETFL, O_NONBLOCK);
  }
  return true;
}

// Reads what `s` has and handles its frames.
void ReadAvailable(Subscriber& s, std::vector<char>& buf, bool measuring, std::vector<double>& lags,
                   std::uint64_t& bytes) {
  for (;;) {
    const ssize_t got = s.ssl != nullptr ? SSL_read(s.ssl, buf.data(), static_cast<int>(buf.size()))
                                         : ::recv(s.fd, buf.data(), buf.size(), 0);
    if (got <= 0) break;
    bytes += static_cast<std::uint64_t>(got);
    s.pending.append(buf.data(), static_cast<std::size_t>(got));
    Drain(s, measuring, lags);
  }
}

// Reader `t` of `threads`: an epoll set over its share of the subscribers, read until `end`.
void ReadUntil(std::vector<Subscriber>& subs, std::size_t t, std::size_t threads,
               Steady::time_point end, const std::atomic<bool>& measuring,
               std::vector<double>& lags, std::uint64_t& bytes) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = t; i < subs.size(); i += threads) {
    epoll_event ev{EPOLLIN, {.u64 = i}};
    ::epoll_ctl(ep, EPOLL_CTL_ADD, subs[i].fd, &ev);
  }
  lags.reserve(subs.size() * 1000 / threads);
  std::vector<char> buf(1 << 20);
  epoll_event events[256];
  while (Steady::now() < end) {
    const int n = ::epoll_wait(ep, events, 256, 50);
    const bool m = measuring.load(std::memory_order_relaxed);
    for (int k = 0; k < n; ++k) ReadAvailable(subs[events[k].data.u64], buf, m, lags, bytes);
  }
  ::close(ep);
}

// What the readers received while measuring, and the daemon's usage as it started and ended.
struct Measured {
  std::vector<double> lags;
  std::uint64_t bytes = 0;
  ProcUsage before, after;
};

// Reads every subscriber on `threads` threads through `warmup` and then `duration`; takes the
// daemon's usage (when `daemon_pid` > 0) as measuring starts and once the readers have stopped.
Measured Measure(std::vector<Subscriber>& subs, int threads, Nanos warmup, Nanos duration,
                 pid_t daemon_pid) {
  const auto measure_from = Steady::now() + warmup;
  const auto end = measure_from + duration;
  std::atomic<bool> measuring{false};
  const auto n = static_cast<std::size_t>(threads);
  std::vector<std::vector<double>> lag_parts(n);
  std::vector<std::uint64_t> bytes_parts(n, 0);
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < n; ++t) {
    workers.emplace_back(
        [&, t] { ReadUntil(subs, t, n, end, measuring, lag_parts[t], bytes_parts[t]); });
  }
  Measured m;
  std::this_thread::sleep_until(measure_from);
  if (daemon_pid > 0) m.before = Usage(daemon_pid);
  measuring = true;
  for (std::thread& w : workers) w.join();
  for (std::size_t t = 0; t < n; ++t) {
    m.lags.insert(m.lags.end(), lag_parts[t].begin(), lag_parts[t].end());
    m.bytes += bytes_parts[t];
  }
  if (daemon_pid > 0) m.after = Usage(daemon_pid);
  return m;
}

struct Totals {
  std::uint64_t reports = 0, missing = 0, gaps = 0;
};

// Sums the subscribers' counts and closes their connections.
Totals CloseAll(const std::vector<Subscriber>& subs) {
  Totals t;
  for (const Subscriber& s : subs) {
    t.reports += s.reports;
    t.missing += s.missing;
    t.gaps += s.gaps;
    if (s.ssl != nullptr) SSL_free(s.ssl);
    ::close(s.fd);
  }
  return t;
}

void PrintResults(const LoadOptions& o, Nanos duration, Measured& m, const Totals& t,
                  bool started_daemon) {
  const double seconds = std::chrono::duration<double>(duration).count();
  std::printf("clients %d over %s, period %s, device %s, groups %s, %.0f s measured\n", o.clients,
              o.transport.c_str(), o.period_text.c_str(), o.device.c_str(), o.groups.c_str(),
              seconds);
  std::printf("reports received  %llu (%.0f/s), %.1f MB/s\n",
              static_cast<unsigned long long>(t.reports), static_cast<double>(t.reports) / seconds,
              static_cast<double>(m.bytes) / seconds / 1e6);
  std::printf("delivery lag      p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", Percentile(m.lags, 0.5),
              Percentile(m.lags, 0.99),
              m.lags.empty() ? 0 : *std::max_element(m.lags.begin(), m.lags.end()));
  std::printf("dropped           %llu gap notices, %llu reports missing\n",
              static_cast<unsigned long long>(t.gaps), static_cast<unsigned long long>(t.missing));
  if (started_daemon) {
    std::printf("daemon            %.2f%% of one core, RSS %.1f MiB (peak %.1f MiB)\n",
                100 * (m.after.cpu_seconds - m.before.cpu_seconds) / seconds, m.after.rss_mib,
                m.after.peak_rss_mib);
  }
}

void StopDaemon(const StartedDaemon& daemon) {
  ::kill(daemon.pid, SIGTERM);
  ::waitpid(daemon.pid, nullptr, 0);
  std::filesystem::remove_all(daemon.dir);
}

}  // namespace

int main(int argc, char** argv) {
  LoadOptions o;
  CLI::App app{"daemon_load: many subscribers against neuron-monitord"};
  AddOptions(app, o);
  CLI11_PARSE(app, argc, argv);
  const Nanos period = *ParseDuration(o.period_text);
  const Nanos duration = *ParseDuration(o.duration_text);
  const Nanos warmup = *ParseDuration(o.warmup_text);
  RaiseFdLimit();
  ::signal(SIGPIPE, SIG_IGN);
  StartedDaemon daemon;
  if (o.transport != "unix" && o.daemon_binary.empty()) {
    std::fprintf(stderr, "--transport %s needs --daemon\n", o.transport.c_str());
    return 1;
  }
  if (!o.daemon_binary.empty() && !StartDaemon(o, daemon)) return 1;
  SSL_CTX* tls = nullptr;
  if (o.transport == "tls") {
    tls = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(tls, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_load_verify_locations(tls, (daemon.dir / "cert.pem").c_str(), nullptr);
    // The daemon's listener comes up after its unix socket: wait for the port too.
    for (int i = 0; i < 500; ++i) {
      const int fd = ConnectTcp(o.port);
      if (fd >= 0) {
        ::close(fd);
        break;
      }
      ::usleep(10000);
    }
  }
  std::vector<Subscriber> subs(static_cast<std::size_t>(o.clients));
  if (!ConnectAll(o, tls, SubscriptionFor(o.groups, period), subs)) return 1;
  Measured m = Measure(subs, o.threads, warmup, duration, daemon.pid);
  const Totals totals = CloseAll(subs);
  PrintResults(o, duration, m, totals, daemon.pid > 0);
  if (daemon.pid > 0) StopDaemon(daemon);
  if (tls != nullptr) SSL_CTX_free(tls);
  return 0;
}
