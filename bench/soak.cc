// soak: a whole-process endurance test of neuron-monitord. It starts the daemon itself (a temp
// dir holding its socket, its config and its log; /metrics on a free loopback port) and, for
// --duration, keeps --clients abusive stream clients cycling through hostile behaviours — slow
// readers with pathological or invalid tag filters, silent connections, garbage, Subscribe floods,
// odd resume points, clients that never subscribe — beside an abusive /metrics client (idle,
// slowloris, oversized headers, never reading), a well-behaved scraper, and one well-behaved
// neuron-top-like subscriber whose delivery lag (receipt minus report wall time) it measures.
//
//   soak --daemon build/release/daemon/neuron-monitord --duration 10m --clients 1000 --progress
//
// The daemon's config (soak.json) raises max_clients, max_clients_per_uid and max_handshaking so
// that every abusive client, all from one uid, gets in — the worst case for the daemon — and keeps
// the history to --retention, shorter than --warmup, so the history is full before RSS is first
// measured. The other limits keep their defaults; they are what is being soaked.
//
// Verdict, exit 1 when any fails: the daemon never died and exited cleanly on SIGTERM; its RSS and
// open fd count at the end are within 5% of those after the warm-up; the well-behaved client's lag
// p99 is at most 50 ms and it missed no report without a gap notice; every scrape succeeded.
// Reported, not judged: how late the daemon took its samples (the lag starts at the sample, so it
// cannot show a sampler held up behind other work), and what the daemon did to each abuser.
// Exit 2: it could not start. Ctrl-C stops early, still cleaning up and printing the summary.
// Threads: one per load component and main, which watches the daemon; each component's tally is
// guarded by its own mutex. Everything opened is closed and the temp dir removed on the way out.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "proto/common/duration.h"
#include "proto/common/unique_fd.h"
#include "proto/wire/frame_codec.h"
#include "tui/model.h"

namespace {

using namespace neuronmon;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;
using Rng = std::mt19937_64;

// Where the load generators are: running, draining (the daemon is being stopped: open nothing,
// only read what it says), stopped.
enum class Phase { kRunning, kDraining, kStopped };

constexpr double kMaxDrift = 0.05;
constexpr double kMaxLagP99Ms = 50;
constexpr auto kScrapeInterval = 5s;
constexpr auto kScrapeTimeout = 10s;  // Prometheus's default scrape_timeout
// The daemon's defaults (packaging/neuron-monitord.json), which soak.json leaves alone, and the
// slack a client allows the daemon past them before counting the deadline as not enforced.
constexpr auto kHandshakeTimeout = 5s;
constexpr auto kSubscribeTimeout = 30s;
constexpr auto kMetricsRequestTimeout = 10s;
constexpr auto kSlack = 10s;

struct SoakOptions {
  std::string daemon_binary;
  std::string device = "sim:trn2.48xlarge";
  std::string daemon_log;  // empty: in the temp dir, removed after
  Nanos duration = 10min;
  Nanos warmup = 30s;
  Nanos period = 1s;
  Nanos retention = 20s;
  int clients = 1000;
  int metrics_connections = 48;
  std::uint64_t seed = 1;
  bool progress = false;
};

// ---------------------------------------------------------------------------------------------
// Small utilities.

Steady::duration Between(Rng& rng, Steady::duration lo, Steady::duration hi) {
  return lo + Steady::duration(static_cast<Steady::rep>(
                  rng() % static_cast<std::uint64_t>((hi - lo).count() + 1)));
}

std::int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

// "a 3, b 1" from a tally map, most frequent first; "none" when empty.
template <typename Key>
std::string Tallied(const std::map<Key, std::uint64_t>& counts) {
  std::vector<std::pair<std::uint64_t, std::string>> sorted;
  for (const auto& [key, n] : counts) {
    if constexpr (std::is_same_v<Key, std::string>) {
      sorted.emplace_back(n, key);
    } else {
      sorted.emplace_back(n, std::to_string(key));
    }
  }
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  for (const auto& [n, key] : sorted)
    out += (out.empty() ? "" : ", ") + key + " " + std::to_string(n);
  return out.empty() ? "none" : out;
}

// ---------------------------------------------------------------------------------------------
// Sockets.

// A non-blocking unix stream socket connected to `path`, with SO_RCVBUF `rcvbuf` when > 0 (for a
// unix stream it is the daemon's send buffer that bounds what waits unread; this only shrinks our
// side). Invalid with errno set when the connect fails (EAGAIN: the daemon's backlog is full).
UniqueFd ConnectUnix(const std::string& path, int rcvbuf) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  if (rcvbuf > 0) ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    fd.Reset();
    errno = saved;
  }
  return fd;
}

// A TCP socket connected to 127.0.0.1:`port` (the connect waits at most one second), then made
// non-blocking. Invalid with errno set on failure.
UniqueFd ConnectLoopback(std::uint16_t port, int rcvbuf) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  const timeval one_second{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &one_second, sizeof one_second);
  if (rcvbuf > 0) ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    fd.Reset();
    errno = saved;
    return fd;
  }
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
  return fd;
}

// A loopback TCP port free a moment ago (0 when none could be had).
std::uint16_t FreeLoopbackPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

// Sends what the socket takes now; returns the bytes not sent.
std::string SendSome(int fd, std::string bytes) {
  if (bytes.empty()) return bytes;
  const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent > 0) bytes.erase(0, static_cast<std::size_t>(sent));
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Frames a client sends.

std::string Frame(const v1::Envelope& envelope) {
  Result<std::string> frame = wire::EncodeFrame(envelope);
  return frame.ok() ? std::move(*frame) : std::string();
}

std::string HelloFrame(std::uint32_t version = 1, const std::string& name = "soak") {
  v1::Envelope e;
  e.mutable_hello()->set_protocol_version(version);
  e.mutable_hello()->set_client_name(name);
  return Frame(e);
}

std::string SubscribeFrame(const v1::Subscribe& subscribe) {
  v1::Envelope e;
  *e.mutable_subscribe() = subscribe;
  return Frame(e);
}

std::string Varint(std::uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
  return out + static_cast<char>(v);
}

// A tag filter: mostly ordinary, some pathological for a backtracking engine, some invalid, some
// at or over the daemon's 256-byte cap (one just under the 64 KiB frame limit).
std::string RandomTagFilter(Rng& rng) {
  constexpr std::array<std::string_view, 14> kOrdinary = {
      "",           "",         "",          "",   ".*",          "llama", "^llama3-8b-rank[0-3]$",
      "rank1[0-5]", "vllm|gpt", "(?i)LLAMA", "^$", "no-such-tag", "\\d+$", "[[:alpha:]]{1,1000}"};
  constexpr std::array<std::string_view, 8> kPathological = {
      "(.*)*(.*)*X",          "((((a)))){1000}",    "(a*)*b",    "(x+x+)+y", "(a{999}){999}",
      "((a{100}){100}){100}", "(?:(?:(?:a*)*)*)*$", "\\pL{1000}"};
  constexpr std::array<std::string_view, 8> kInvalid = {"[(", "(?P<",    "*",   "a)",
                                                        "\\", "x{1001}", "(?<", "\\8"};
  const std::uint64_t roll = rng() % 40;
  if (roll < 20) return std::string(kOrdinary[rng() % kOrdinary.size()]);
  if (roll < 30) return std::string(kPathological[rng() % kPathological.size()]);
  if (roll < 36) return std::string(kInvalid[rng() % kInvalid.size()]);
  if (roll < 37) return std::string(60000, 'a');
  if (roll < 38) return std::string(256, 'a');  // exactly the cap: accepted
  std::string refused;                          // 300 bytes: over the cap
  while (refused.size() < 300) refused += "(a|b)";
  return refused;
}

// A Subscribe with a random group set (empty: every group), periods and tag filter; one group in
// twenty is unknown or has an absurd period.
v1::Subscribe RandomSubscribe(Rng& rng) {
  constexpr std::array<int, 11> kGroups = {1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 20};
  constexpr std::array<int, 2> kUnknownGroups = {7, 99};
  constexpr std::array<std::uint64_t, 6> kPeriods = {
      0, 0, 1'000'000'000, 2'000'000'000, 5'000'000'000, 10'000'000'000};
  constexpr std::array<std::uint64_t, 3> kOddPeriods = {1, 25ull * 3600 * 1'000'000'000,
                                                        UINT64_MAX};
  v1::Subscribe s;
  const auto groups = rng() % 6;
  for (std::uint64_t i = 0; i < groups; ++i) {
    v1::GroupSubscription* g = s.add_groups();
    const bool odd = rng() % 20 == 0;
    g->set_group(static_cast<v1::Group>(odd ? kUnknownGroups[rng() % 2] : kGroups[rng() % 11]));
    g->set_period_ns(rng() % 20 == 0 ? kOddPeriods[rng() % 3] : kPeriods[rng() % 6]);
  }
  s.set_tag_filter(RandomTagFilter(rng));
  return s;
}

// Resume points: from the start, ahead of anything (another instance's seqs), or anywhere; the
// soak's seqs stay below a thousand, so small values hit both retained and evicted reports.
v1::Subscribe ResumeSubscribe(Rng& rng) {
  const std::array<std::uint64_t, 6> points = {0,     1,           UINT64_MAX, UINT64_MAX - 1,
                                               rng(), rng() % 1000};
  v1::Subscribe s = RandomSubscribe(rng);
  s.set_resume_after_seq(points[rng() % points.size()]);
  return s;
}

// Bytes no client should send: each is answered with an Error and a close, or (a truncated frame)
// by the handshake deadline.
std::string GarbageBytes(Rng& rng) {
  v1::Envelope report;
  report.mutable_report()->set_seq(1);
  // Envelope{subscribe{tag_filter: "\xff\xfe"}}: a proto3 string that is not UTF-8.
  const std::string not_utf8 = std::string("\x06\x1a\x04\x12\x02\xff\xfe", 7);
  switch (rng() % 11) {
    case 0: {
      std::string random(1 + rng() % 512, '\0');
      for (char& c : random) c = static_cast<char>(rng());
      return random;
    }
    case 1:
      return "\xff\xff\xff\xff\x0f" + std::string(100, 'x');  // 4 GiB frame
    case 2:
      return Varint(70000) + std::string(1000, 'x');  // over 64 KiB
    case 3:
      return "\xff\xff\xff\xff\xff\x01";  // 6-byte varint
    case 4:
      return std::string(1, '\0');  // zero length
    case 5:
      return SubscribeFrame(RandomSubscribe(rng));  // before Hello
    case 6:
      return HelloFrame(2);  // unsupported version
    case 7:
      return HelloFrame() + HelloFrame();
    case 8:
      return HelloFrame() + Frame(report);  // clients do not send reports
    case 9:
      return HelloFrame() + not_utf8;
    default:
      return Varint(100) + std::string(10, 'x');  // truncated, then silence
  }
}

std::string Shorten(std::string name, std::string_view prefix) {
  if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  return name;
}

// "SUBSCRIBED", "GAP/SLOW_CLIENT".
std::string NoticeName(const v1::Notice& n) {
  std::string name = Shorten(v1::NoticeKind_Name(n.kind()), "NOTICE_KIND_");
  if (n.kind() == v1::NOTICE_KIND_GAP) {
    name += "/" + Shorten(v1::GapReason_Name(n.gap_reason()), "GAP_REASON_");
  }
  return name.empty() ? "kind " + std::to_string(n.kind()) : name;
}

std::string ErrorName(const v1::Error& e) {
  const std::string name = Shorten(v1::ErrorCode_Name(e.code()), "ERROR_CODE_");
  return name.empty() ? "code " + std::to_string(e.code()) : name;
}

// ---------------------------------------------------------------------------------------------
// The abusive stream population.

enum class Behaviour { kSlowReader, kSilent, kGarbage, kSubscribeFlood, kResume, kNoSubscribe };
constexpr std::size_t kBehaviours = 6;
constexpr std::array<const char*, kBehaviours> kBehaviourNames = {
    "slow-reader", "silent", "garbage", "subscribe-flood", "resume", "no-subscribe"};

struct StreamTally {
  using PerBehaviour = std::array<std::uint64_t, kBehaviours>;
  PerBehaviour started{}, closed_by_daemon{}, ended_by_soak{};
  PerBehaviour overran{};  // the daemon left it open past its deadline plus kSlack
  std::map<std::string, std::uint64_t> errors;   // Error frames received, by code
  std::map<std::string, std::uint64_t> notices;  // Notices received, by kind (gaps by reason)
  std::map<std::string, std::uint64_t> connect_failures;  // by errno text
  std::uint64_t welcomes = 0, reports = 0, bytes_read = 0, sends_blocked = 0, bad_frames = 0;
  std::uint64_t connected = 0;  // now
};

struct AbusiveClient {
  UniqueFd fd;
  Behaviour behaviour = Behaviour::kSlowReader;
  bool reads_fast = false;      // reads whatever arrives; otherwise a few KB every few seconds
  bool must_be_closed = false;  // the daemon must close it before close_at
  std::string unsent;           // the rest of a frame the socket did not take
  wire::FrameDecoder decoder{wire::kDefaultOutboundMaxFrame};
  Steady::time_point next_action{};
  Steady::time_point close_at{};
};

// One epoll thread drives every abusive client. Not thread-safe except tally().
class StreamAbuser {
 public:
  StreamAbuser(std::string socket_path, int clients, std::uint64_t seed)
      : socket_path_(std::move(socket_path)),
        rng_(seed),
        epoll_(::epoll_create1(EPOLL_CLOEXEC)),
        clients_(static_cast<std::size_t>(clients)) {}

  // Runs until `phase` is kStopped; while kDraining it opens and sends nothing, only reads.
  void Run(const std::atomic<Phase>& phase);
  StreamTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void Act(AbusiveClient& c, Steady::time_point now);
  void Open(AbusiveClient& c, Steady::time_point now);
  void Begin(AbusiveClient& c, Steady::time_point now);
  void OnEvent(AbusiveClient& c, std::uint32_t events);
  bool Read(AbusiveClient& c, std::size_t max_bytes);
  void Decode(AbusiveClient& c, std::string_view input);
  void Count(const v1::Envelope& e);
  void Send(AbusiveClient& c, std::string bytes);
  void End(AbusiveClient& c, bool by_daemon);

  const std::string socket_path_;
  Rng rng_;
  UniqueFd epoll_;
  std::vector<AbusiveClient> clients_;  // never resized: epoll events carry indexes
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  mutable std::mutex mu_;  // guards tally_ (the loop holds it while it works)
  StreamTally tally_;
};

void StreamAbuser::Run(const std::atomic<Phase>& phase) {
  const auto start = Steady::now();
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    clients_[i].next_action = start + std::chrono::milliseconds(5 * i);  // a 5 s ramp per 1,000
  }
  std::array<epoll_event, 256> events;
  while (phase.load() != Phase::kStopped) {
    const int n = ::epoll_wait(epoll_.get(), events.data(), events.size(), 50);
    std::lock_guard lock(mu_);
    for (int k = 0; k < n; ++k) OnEvent(clients_[events[k].data.u64], events[k].events);
    if (phase.load() != Phase::kRunning) continue;
    const auto now = Steady::now();
    for (AbusiveClient& c : clients_) {
      if (now >= c.next_action) Act(c, now);
    }
  }
  for (AbusiveClient& c : clients_) c.fd.Reset();
}

void StreamAbuser::Act(AbusiveClient& c, Steady::time_point now) {
  if (!c.fd.valid()) return Open(c, now);
  if (now >= c.close_at) return End(c, false);
  if (c.behaviour == Behaviour::kSubscribeFlood) {
    // Many Subscribes a second, never reading; a frame the socket did not take goes first.
    Send(c, c.unsent.empty() ? SubscribeFrame(RandomSubscribe(rng_)) : std::string());
    c.next_action = std::min(c.close_at, now + 50ms);
    return;
  }
  if (!c.reads_fast && !Read(c, 1024 + rng_() % 8192)) return;
  c.next_action = std::min(c.close_at, now + Between(rng_, 2s, 5s));
}

void StreamAbuser::Open(AbusiveClient& c, Steady::time_point now) {
  c.behaviour = static_cast<Behaviour>(rng_() % kBehaviours);
  const bool slow = c.behaviour == Behaviour::kSlowReader ||
                    (c.behaviour == Behaviour::kResume && rng_() % 2 == 0);
  c.fd = ConnectUnix(socket_path_, slow ? 4096 : 0);
  if (!c.fd.valid()) {
    ++tally_.connect_failures[std::strerror(errno)];
    c.next_action = now + 100ms;
    return;
  }
  c.reads_fast = !slow && c.behaviour != Behaviour::kSubscribeFlood;
  c.unsent.clear();
  c.decoder = wire::FrameDecoder(wire::kDefaultOutboundMaxFrame);
  epoll_event ev{};
  ev.events = EPOLLRDHUP | (c.reads_fast ? static_cast<std::uint32_t>(EPOLLIN) : 0u);
  ev.data.u64 = static_cast<std::uint64_t>(&c - clients_.data());
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c.fd.get(), &ev);
  ++tally_.started[static_cast<std::size_t>(c.behaviour)];
  ++tally_.connected;
  Begin(c, now);
}

// What each behaviour sends first, and how long it stays.
void StreamAbuser::Begin(AbusiveClient& c, Steady::time_point now) {
  c.must_be_closed = false;
  c.close_at = now + Between(rng_, 5s, 60s);
  switch (c.behaviour) {
    case Behaviour::kSlowReader:
      Send(c, HelloFrame() + SubscribeFrame(RandomSubscribe(rng_)));
      break;
    case Behaviour::kSilent:
      c.must_be_closed = true;
      c.close_at = now + kHandshakeTimeout + kSlack;
      break;
    case Behaviour::kGarbage:
      Send(c, GarbageBytes(rng_));
      c.must_be_closed = true;
      c.close_at = now + kHandshakeTimeout + kSlack;
      break;
    case Behaviour::kSubscribeFlood:
      Send(c, HelloFrame());
      break;
    case Behaviour::kResume:
      Send(c, HelloFrame() + SubscribeFrame(ResumeSubscribe(rng_)));
      break;
    case Behaviour::kNoSubscribe:
      Send(c, HelloFrame());
      c.must_be_closed = true;
      c.close_at = now + kSubscribeTimeout + kSlack;
      break;
  }
  c.next_action = c.reads_fast ? c.close_at : std::min(c.close_at, now + Between(rng_, 1s, 5s));
}

void StreamAbuser::OnEvent(AbusiveClient& c, std::uint32_t events) {
  if (!c.fd.valid()) return;
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
    // The daemon closed it: read what it said last (bounded), then close our end.
    if (Read(c, 256 * 1024)) End(c, true);
    return;
  }
  Read(c, 256 * 1024);
}

// Reads up to `max_bytes` and counts the frames; false when the connection ended (the daemon
// closed it, or sent a frame that does not decode).
bool StreamAbuser::Read(AbusiveClient& c, std::size_t max_bytes) {
  for (std::size_t total = 0; total < max_bytes;) {
    const ssize_t got = ::recv(c.fd.get(), buffer_.data(),
                               std::min(buffer_.size(), max_bytes - total), MSG_DONTWAIT);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (got <= 0) {
      End(c, true);
      return false;
    }
    total += static_cast<std::size_t>(got);
    tally_.bytes_read += static_cast<std::uint64_t>(got);
    Decode(c, std::string_view(buffer_.data(), static_cast<std::size_t>(got)));
    if (!c.fd.valid()) return false;
  }
  return true;
}

void StreamAbuser::Decode(AbusiveClient& c, std::string_view input) {
  v1::Envelope e;
  while (!input.empty()) {
    const auto outcome = c.decoder.Decode(input, e);
    if (outcome == wire::FrameDecoder::Outcome::kNeedMore) return;
    if (outcome == wire::FrameDecoder::Outcome::kError) {
      ++tally_.bad_frames;  // the daemon sent something that is not a frame: its bug
      return End(c, false);
    }
    Count(e);
  }
}

void StreamAbuser::Count(const v1::Envelope& e) {
  switch (e.body_case()) {
    case v1::Envelope::kWelcome:
      ++tally_.welcomes;
      break;
    case v1::Envelope::kReport:
      ++tally_.reports;
      break;
    case v1::Envelope::kError:
      ++tally_.errors[ErrorName(e.error())];
      break;
    case v1::Envelope::kNotice:
      ++tally_.notices[NoticeName(e.notice())];
      break;
    default:
      break;
  }
}

void StreamAbuser::Send(AbusiveClient& c, std::string bytes) {
  c.unsent = SendSome(c.fd.get(), c.unsent + bytes);
  if (!c.unsent.empty()) ++tally_.sends_blocked;
}

void StreamAbuser::End(AbusiveClient& c, bool by_daemon) {
  const auto b = static_cast<std::size_t>(c.behaviour);
  if (by_daemon) {
    ++tally_.closed_by_daemon[b];
  } else {
    ++tally_.ended_by_soak[b];
    if (c.must_be_closed) ++tally_.overran[b];
  }
  --tally_.connected;
  c.fd.Reset();
  c.next_action = Steady::now() + std::chrono::milliseconds(rng_() % 200);
}

// ---------------------------------------------------------------------------------------------
// The abusive /metrics client.

enum class MetricsAbuse { kIdle, kSlowloris, kHugeHeaders, kNeverReads };

struct MetricsTally {
  std::uint64_t connections = 0, closed_by_daemon = 0, ended_by_soak = 0, overran = 0;
  std::uint64_t open = 0;                                 // now
  std::map<std::string, std::uint64_t> connect_failures;  // by errno text
  std::map<int, std::uint64_t> statuses;                  // HTTP status of replies it read
};

struct MetricsConnection {
  UniqueFd fd;
  MetricsAbuse abuse = MetricsAbuse::kIdle;
  bool must_be_closed = false;  // by the request timeout
  bool status_seen = false;
  std::string unsent;
  Steady::time_point next_action{};
  Steady::time_point close_at{};
};

// Holds --metrics-connections connections open, each idle, trickling a header (slowloris),
// sending oversized headers, or pipelining requests it never reads; reopens what is closed.
class MetricsAbuser {
 public:
  MetricsAbuser(std::uint16_t port, int connections, std::uint64_t seed)
      : port_(port), rng_(seed), connections_(static_cast<std::size_t>(connections)) {}

  // Runs until `phase` leaves kRunning.
  void Run(const std::atomic<Phase>& phase);
  MetricsTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void Act(MetricsConnection& c, Steady::time_point now);
  void Open(MetricsConnection& c, Steady::time_point now);
  void OnEvents(MetricsConnection& c, short revents);
  void End(MetricsConnection& c, bool by_daemon);

  const std::uint16_t port_;
  Rng rng_;
  std::vector<MetricsConnection> connections_;
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  mutable std::mutex mu_;  // guards tally_
  MetricsTally tally_;
};

void MetricsAbuser::Run(const std::atomic<Phase>& phase) {
  std::vector<pollfd> polled(connections_.size());
  while (phase.load() == Phase::kRunning) {
    for (std::size_t i = 0; i < connections_.size(); ++i) {
      const bool reads = connections_[i].abuse != MetricsAbuse::kNeverReads;
      polled[i] = {connections_[i].fd.get(), static_cast<short>(POLLRDHUP | (reads ? POLLIN : 0)),
                   0};
    }
    ::poll(polled.data(), polled.size(), 100);
    std::lock_guard lock(mu_);
    const auto now = Steady::now();
    for (std::size_t i = 0; i < connections_.size(); ++i) {
      if (polled[i].fd >= 0 && polled[i].revents != 0) OnEvents(connections_[i], polled[i].revents);
      if (now >= connections_[i].next_action) Act(connections_[i], now);
    }
  }
  for (MetricsConnection& c : connections_) c.fd.Reset();
}

void MetricsAbuser::Act(MetricsConnection& c, Steady::time_point now) {
  if (!c.fd.valid()) return Open(c, now);
  if (now >= c.close_at) return End(c, false);
  if (c.abuse == MetricsAbuse::kSlowloris && c.unsent.empty()) c.unsent = "a";
  if (c.abuse == MetricsAbuse::kNeverReads && c.unsent.empty()) {
    c.unsent = "GET /metrics HTTP/1.1\r\nHost: soak\r\n\r\n";
  }
  c.unsent = SendSome(c.fd.get(), std::move(c.unsent));
  c.next_action = std::min(c.close_at, now + Between(rng_, 1s, 4s));
}

void MetricsAbuser::Open(MetricsConnection& c, Steady::time_point now) {
  c.abuse = static_cast<MetricsAbuse>(rng_() % 4);
  c.fd = ConnectLoopback(port_, c.abuse == MetricsAbuse::kNeverReads ? 4096 : 0);
  if (!c.fd.valid()) {
    ++tally_.connect_failures[std::strerror(errno)];
    c.next_action = now + 1s;
    return;
  }
  ++tally_.connections;
  ++tally_.open;
  c.status_seen = false;
  c.must_be_closed = c.abuse != MetricsAbuse::kNeverReads;
  c.close_at = now + (c.must_be_closed ? kMetricsRequestTimeout + kSlack : 40s);
  const std::string start = "GET /metrics HTTP/1.1\r\nHost: soak\r\n";
  if (c.abuse == MetricsAbuse::kSlowloris) c.unsent = start + "X-Slow: ";
  if (c.abuse == MetricsAbuse::kHugeHeaders) {
    c.unsent = start + "X-Huge: " + std::string(16 * 1024, 'h') + "\r\n\r\n";
  }
  if (c.abuse == MetricsAbuse::kIdle) c.unsent.clear();
  Act(c, now);
}

void MetricsAbuser::OnEvents(MetricsConnection& c, short revents) {
  if (!(revents & POLLIN)) return End(c, true);  // reset or hung up, unread
  const ssize_t got = ::recv(c.fd.get(), buffer_.data(), buffer_.size(), MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (got <= 0) return End(c, true);
  const std::string_view reply(buffer_.data(), static_cast<std::size_t>(got));
  if (!c.status_seen && reply.rfind("HTTP/1.", 0) == 0 && reply.size() > 12) {
    c.status_seen = true;
    ++tally_.statuses[std::atoi(std::string(reply.substr(9, 3)).c_str())];
  }
}

void MetricsAbuser::End(MetricsConnection& c, bool by_daemon) {
  if (by_daemon) {
    ++tally_.closed_by_daemon;
  } else {
    ++tally_.ended_by_soak;
    if (c.must_be_closed) ++tally_.overran;
  }
  --tally_.open;
  c.fd.Reset();
  c.unsent.clear();
  c.next_action = Steady::now() + Between(rng_, 200ms, 1s);
}

// ---------------------------------------------------------------------------------------------
// The well-behaved scraper.

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

struct ScrapeTally {
  std::uint64_t ok = 0;
  std::map<std::string, std::uint64_t> failures;  // by what went wrong
  std::vector<double> ms;                         // successful scrapes' durations
  std::map<std::string, double> daemon_counters;  // the daemon's own series, last scrape
};

// The daemon's neuron_monitord_* series worth a line in the summary, keyed "name{labels}".
std::map<std::string, double> DaemonCounters(const std::string& body) {
  constexpr std::array<std::string_view, 5> kKept = {
      "neuron_monitord_client_disconnects_total", "neuron_monitord_sampler_missed_ticks_total",
      "neuron_monitord_frames_dropped_total", "neuron_monitord_http_responses_total",
      "neuron_monitord_connections_total"};
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

// Fetches /metrics every kScrapeInterval, as Prometheus would, on a new connection each time.
class Scraper {
 public:
  explicit Scraper(std::uint16_t port) : port_(port) {}

  // Runs until `phase` leaves kRunning.
  void Run(const std::atomic<Phase>& phase) {
    auto next = Steady::now();
    while (phase.load() == Phase::kRunning) {
      if (Steady::now() >= next) {
        ScrapeOnce();
        next += kScrapeInterval;
      }
      std::this_thread::sleep_for(100ms);
    }
  }
  // One scrape, counted like the others.
  void ScrapeOnce() {
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
  ScrapeTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  const std::uint16_t port_;
  mutable std::mutex mu_;  // guards tally_
  ScrapeTally tally_;
};

// ---------------------------------------------------------------------------------------------
// The well-behaved neuron-top-like client.

struct TopTally {
  std::vector<double> lags_ms;         // receipt minus report wall time, each live report in order
  std::vector<std::int64_t> walls_ns;  // every live report's wall time, in order
  // The first live report of a connection is the newest sample when it subscribed, whatever its
  // age, so it is counted in `firsts` and not in the lag.
  std::uint64_t reports = 0, firsts = 0, replayed = 0, gaps = 0, missing = 0, out_of_order = 0;
  std::uint64_t connections = 0, errors = 0;
  bool shutdown_notice = false;
  std::string last_error;
};

// Subscribes to neuron-top's groups at the base period, so every seq carries a report, and reads
// promptly. Reconnects (resuming after the last seq) if it loses the daemon.
class TopClient {
 public:
  TopClient(std::string socket_path, Nanos period)
      : socket_path_(std::move(socket_path)), period_(period) {}

  // Runs until `phase` is kStopped.
  void Run(const std::atomic<Phase>& phase) {
    while (phase.load() != Phase::kStopped) {
      Converse(phase);
      if (phase.load() == Phase::kRunning) std::this_thread::sleep_for(1s);
    }
  }
  TopTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void Converse(const std::atomic<Phase>& phase);
  bool ReadOnce(int fd, wire::FrameDecoder& decoder);
  void OnEnvelope(const v1::Envelope& e, std::int64_t received_ns);

  const std::string socket_path_;
  const Nanos period_;
  std::vector<char> buffer_ = std::vector<char>(1 << 20);
  std::uint64_t last_seq_ = 0;
  bool first_live_ = true;  // the next live report is the connection's first
  mutable std::mutex mu_;   // guards tally_
  TopTally tally_;
};

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

// ---------------------------------------------------------------------------------------------
// The daemon process.

// A temp dir, removed with everything in it when this goes.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "soak-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// "exited with status 1", "killed by signal 11 (Segmentation fault), core dumped".
std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (!WIFSIGNALED(status)) return "stopped (wait status " + std::to_string(status) + ")";
  const int sig = WTERMSIG(status);
  return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")" +
         (WCOREDUMP(status) ? ", core dumped" : "");
}

struct StopOutcome {
  std::string description;  // how it ended
  double seconds = 0;       // from SIGTERM to exit
  bool clean = false;       // exited 0 on SIGTERM, without SIGKILL
};

// The daemon as a child process: its own process group (a terminal's Ctrl-C reaches only soak),
// default signal dispositions, stdout and stderr into a log file. Killed if still running when
// this goes.
class DaemonProcess {
 public:
  DaemonProcess() = default;
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;
  ~DaemonProcess() {
    if (pid_ > 0 && !exit_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Starts `argv` (argv[0] is the binary). False with `error` set when it cannot.
  bool Start(std::vector<std::string> argv, const std::filesystem::path& log, std::string& error);
  // How it ended when it has; nullopt while it runs.
  std::optional<std::string> Exited();
  // SIGTERM, then SIGKILL after 5 s.
  StopOutcome Stop();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_;  // wait status once reaped
};

bool DaemonProcess::Start(std::vector<std::string> argv, const std::filesystem::path& log,
                          std::string& error) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  const int rc = ::posix_spawn(&pid_, args[0], &files, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0) error = "cannot start " + argv[0] + ": " + std::strerror(rc);
  return rc == 0;
}

std::optional<std::string> DaemonProcess::Exited() {
  int status = 0;
  if (!exit_ && pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) exit_ = status;
  if (!exit_) return std::nullopt;
  return DescribeWaitStatus(*exit_);
}

StopOutcome DaemonProcess::Stop() {
  StopOutcome out;
  if (auto already = Exited()) return {*already + " before it was stopped", 0, false};
  const auto start = Steady::now();
  ::kill(pid_, SIGTERM);
  while (!Exited() && Steady::now() - start < 5s) std::this_thread::sleep_for(10ms);
  out.seconds = Seconds(Steady::now() - start);
  if (!exit_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_ = status;
    out.description = "still running 5 s after SIGTERM, killed";
    return out;
  }
  out.description = DescribeWaitStatus(*exit_) + " after SIGTERM";
  out.clean = WIFEXITED(*exit_) && WEXITSTATUS(*exit_) == 0;
  return out;
}

// soak.json: room for every abusive client from our one uid, and a history shorter than the
// warm-up. Returns its path; empty when it cannot be written.
std::filesystem::path WriteSoakConfig(const std::filesystem::path& dir, const SoakOptions& o) {
  const int room = std::max(4096, 2 * o.clients + 64);
  const Nanos retention = std::max(o.retention, o.period);
  const std::filesystem::path path = dir / "soak.json";
  std::ofstream out(path);
  out << "// Written by bench/soak: every abusive client (all one uid) gets in; the history is\n"
      << "// shorter than the warm-up, so it is full before RSS is first measured.\n"
      << "{\n  \"history_retention\": \"" << FormatDuration(retention) << "\",\n"
      << "  \"limits\": {\"max_clients\": " << room << ", \"max_clients_per_uid\": " << room
      << ", \"max_handshaking\": " << std::max(2048, o.clients + 64) << "}\n}\n";
  return out.good() ? path : std::filesystem::path();
}

// Waits until the daemon's socket exists and /metrics accepts connections (up to 15 s).
bool WaitReady(DaemonProcess& daemon, const std::string& socket_path, std::uint16_t port) {
  for (auto give_up = Steady::now() + 15s; Steady::now() < give_up;) {
    if (daemon.Exited()) return false;
    if (std::filesystem::exists(socket_path) && ConnectLoopback(port, 0).valid()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Watching the daemon.

struct ProcSample {
  double rss_mib = 0;
  double fds = 0;
  double soak_connections = 0;  // the connections soak held open at the time (for the fd figure)
};

ProcSample SampleProc(pid_t pid) {
  ProcSample s;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_mib = std::atof(line.c_str() + 6) / 1024;
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

struct Watched {
  ProcSample start, end, peak;      // start: after the warm-up; end: the last seconds
  std::optional<std::string> died;  // how, when the daemon died during the run
  bool interrupted = false;         // a signal stopped the run early
  double seconds = 0;               // how long the load ran
};

// What the watcher asks the load about: a progress line's tail, and how many connections soak
// holds open now.
struct LoadProbes {
  std::function<std::string()> progress;
  std::function<double()> open_connections;
};

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

// Once a second until --duration has passed: is the daemon alive, what are its RSS and fds, and
// (with --progress) a line every 30 s. A signal in `stop_signals` (blocked) ends it early. The
// start and end figures are medians over a window (a third of the measured time, at most a
// minute): slow clients' queues, which the daemon lets grow to limits.max_queued_bytes_total by
// design, swing RSS by megabytes from one second to the next.
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

// ---------------------------------------------------------------------------------------------
// The report.

struct Results {
  Watched watched;
  StopOutcome stop;
  StreamTally stream;
  MetricsTally metrics;
  ScrapeTally scrapes;
  TopTally top;
  std::vector<std::string> log_lines;  // the daemon's log
};

struct Verdict {
  std::vector<std::string> failed;
  // Prints "figure  ok|FAIL  text" and records a failure.
  void Line(const char* figure, bool ok, const std::string& text) {
    std::printf("%-18s %-4s  %s\n", figure, ok ? "ok" : "FAIL", text.c_str());
    if (!ok) failed.push_back(figure);
  }
  // Prints a figure that is not judged.
  void Info(const char* figure, const std::string& text) {
    std::printf("%-18s %-4s  %s\n", figure, "", text.c_str());
  }
};

std::string Format(const char* format, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

double Drift(double start, double end) { return start > 0 ? (end - start) / start : 0; }

void PrintDaemonFigures(const Results& r, Verdict& v) {
  const Watched& w = r.watched;
  v.Line("daemon", !w.died && r.stop.clean,
         (w.died ? "died during the run: " + *w.died : "running throughout") + "; " +
             r.stop.description + Format(" (%.1f s)", r.stop.seconds));
  const double rss = Drift(w.start.rss_mib, w.end.rss_mib);
  v.Line("daemon RSS", std::abs(rss) <= kMaxDrift,
         Format("start %.1f MiB, end %.1f MiB (%+.1f%%), max %.1f MiB", w.start.rss_mib,
                w.end.rss_mib, 100 * rss, w.peak.rss_mib));
  const double fds = Drift(w.start.fds, w.end.fds);
  v.Line("daemon fds", std::abs(fds) <= kMaxDrift,
         Format("start %.0f, end %.0f (%+.1f%%), max %.0f; minus soak's open connections "
                "(below 0: not yet accepted): start %.0f, end %.0f",
                w.start.fds, w.end.fds, 100 * fds, w.peak.fds,
                w.start.fds - w.start.soak_connections, w.end.fds - w.end.soak_connections));
}

void PrintTopFigures(const TopTally& t, Verdict& v) {
  const double p99 = Percentile(t.lags_ms, 0.99);
  const auto worst = std::max_element(t.lags_ms.begin(), t.lags_ms.end());
  v.Line("top lag", !t.lags_ms.empty() && p99 <= kMaxLagP99Ms,
         Format("p50 %.1f ms, p99 %.1f ms, max %.1f ms (report %zu) over %zu live reports "
                "(not each connection's first)",
                Percentile(t.lags_ms, 0.5), p99, t.lags_ms.empty() ? 0.0 : *worst,
                static_cast<std::size_t>(worst - t.lags_ms.begin()) + 1, t.lags_ms.size()));
  v.Line("top stream", t.missing == 0 && t.out_of_order == 0 && t.errors == 0 && t.connections == 1,
         Format("%llu reports (%llu replayed), %llu gap notices, %llu missing without one, "
                "%llu out of order, %llu connection(s), %llu errors%s%s",
                static_cast<unsigned long long>(t.reports),
                static_cast<unsigned long long>(t.replayed),
                static_cast<unsigned long long>(t.gaps), static_cast<unsigned long long>(t.missing),
                static_cast<unsigned long long>(t.out_of_order),
                static_cast<unsigned long long>(t.connections),
                static_cast<unsigned long long>(t.errors),
                t.last_error.empty() ? "" : (" (" + t.last_error + ")").c_str(),
                t.shutdown_notice ? "; shutdown notice seen" : "; no shutdown notice"));
}

// How late the daemon took its samples, which the lag cannot show: a report's wall time is when
// its sample was taken, however late the sampler's timer fired. Each wall time's phase in the
// period is compared with the median phase (most samples are on time); a sample later than a whole
// period is skipped by the daemon, which shows as a longer interval between wall times.
void PrintSamplingFigures(const TopTally& t, Nanos period, Verdict& v) {
  const std::int64_t p = period.count();
  std::vector<double> phases;
  for (std::int64_t wall : t.walls_ns) phases.push_back(static_cast<double>(wall % p));
  const auto median = static_cast<std::int64_t>(Percentile(phases, 0.5));
  std::vector<double> late_ms;
  std::size_t long_intervals = 0;
  for (std::size_t i = 0; i < t.walls_ns.size(); ++i) {
    std::int64_t late = ((t.walls_ns[i] % p) - median + p + p / 2) % p - p / 2;  // [-p/2, p/2)
    late_ms.push_back(static_cast<double>(late) / 1e6);
    if (i > 0 && 2 * (t.walls_ns[i] - t.walls_ns[i - 1]) > 3 * p) ++long_intervals;
  }
  v.Info("top sampling",
         Format("samples late by p50 %.1f ms, p99 %.1f ms, max %.1f ms (against "
                "the median phase); %zu intervals over 1.5 periods",
                Percentile(late_ms, 0.5), Percentile(late_ms, 0.99),
                late_ms.empty() ? 0.0 : *std::max_element(late_ms.begin(), late_ms.end()),
                long_intervals));
}

void PrintScrapeFigures(const ScrapeTally& s, Verdict& v) {
  std::uint64_t failed = 0;
  for (const auto& [why, n] : s.failures) failed += n;
  v.Line(
      "scrapes", failed == 0 && s.ok > 0,
      Format("%llu of %llu succeeded; p50 %.1f ms, p99 %.1f ms; failures: %s",
             static_cast<unsigned long long>(s.ok), static_cast<unsigned long long>(s.ok + failed),
             Percentile(s.ms, 0.5), Percentile(s.ms, 0.99), Tallied(s.failures).c_str()));
}

std::string PerBehaviour(const StreamTally::PerBehaviour& counts) {
  std::string out;
  for (std::size_t b = 0; b < kBehaviours; ++b) {
    out += (b ? ", " : "") + std::string(kBehaviourNames[b]) + " " + std::to_string(counts[b]);
  }
  return out;
}

void PrintAbuseFigures(const StreamTally& s, const MetricsTally& m) {
  std::uint64_t started = 0, overran = 0;
  for (std::size_t b = 0; b < kBehaviours; ++b) started += s.started[b], overran += s.overran[b];
  std::printf("%-24s %llu: %s\n", "abusive connections", static_cast<unsigned long long>(started),
              PerBehaviour(s.started).c_str());
  std::printf("%-24s %s\n", "  closed by the daemon", PerBehaviour(s.closed_by_daemon).c_str());
  std::printf("%-24s %s\n", "  ended by soak", PerBehaviour(s.ended_by_soak).c_str());
  std::printf("%-24s %llu (open 10 s past the handshake or subscribe deadline, from connect)%s\n",
              "  deadline not kept", static_cast<unsigned long long>(overran),
              overran ? (": " + PerBehaviour(s.overran)).c_str() : "");
  std::printf("%-24s %s\n", "  errors received", Tallied(s.errors).c_str());
  std::printf("%-24s %s\n", "  notices received", Tallied(s.notices).c_str());
  std::printf(
      "%-24s %llu welcomes, %llu reports, %.1f MB read, %llu sends blocked, "
      "%llu undecodable frames; connect failures: %s\n",
      "  other", static_cast<unsigned long long>(s.welcomes),
      static_cast<unsigned long long>(s.reports), static_cast<double>(s.bytes_read) / 1e6,
      static_cast<unsigned long long>(s.sends_blocked),
      static_cast<unsigned long long>(s.bad_frames), Tallied(s.connect_failures).c_str());
  std::printf(
      "%-24s %llu connections, %llu closed by the daemon, %llu ended by soak (%llu past "
      "the request timeout); replies: %s; connect failures: %s\n",
      "metrics abuser", static_cast<unsigned long long>(m.connections),
      static_cast<unsigned long long>(m.closed_by_daemon),
      static_cast<unsigned long long>(m.ended_by_soak), static_cast<unsigned long long>(m.overran),
      Tallied(m.statuses).c_str(), Tallied(m.connect_failures).c_str());
}

// The daemon's own counters from the last scrape, one family a line.
void PrintDaemonCounters(const std::map<std::string, double>& counters) {
  std::map<std::string, std::string> families;
  for (const auto& [series, value] : counters) {
    const std::size_t brace = series.find('{');
    std::string& line = families[series.substr(0, brace)];
    const std::size_t quote = series.find('"');
    const std::string label = quote == std::string::npos
                                  ? std::string()
                                  : series.substr(quote + 1, series.rfind('"') - quote - 1) + " ";
    line += (line.empty() ? "" : ", ") + label + Format("%.0f", value);
  }
  for (const auto& [family, line] : families) {
    std::printf("%-24s %s\n", Shorten(family, "neuron_monitord_").c_str(), line.c_str());
  }
}

// Counts the daemon's log lines by severity, and the lines its Logger did not write (they lack its
// timestamp: a library writing to stderr past the daemon's rate limiter); shows the first of those.
void PrintDaemonLog(const std::vector<std::string>& lines) {
  std::size_t errors = 0, warnings = 0, foreign = 0;
  const std::string* first_foreign = nullptr;
  for (const std::string& l : lines) {
    errors += l.find(" error: ") != std::string::npos;
    warnings += l.find(" warn: ") != std::string::npos;
    if (!l.empty() && std::isdigit(static_cast<unsigned char>(l[0]))) continue;
    if (++foreign == 1) first_foreign = &l;
  }
  std::printf("%-24s %zu lines: %zu error, %zu warn, %zu not from its logger\n", "daemon log",
              lines.size(), errors, warnings, foreign);
  if (first_foreign) std::printf("  | %s\n", first_foreign->substr(0, 200).c_str());
}

// Prints the summary; true when every criterion held.
bool Report(const SoakOptions& o, const Results& r) {
  std::printf("soak: %.0f s, %d abusive clients, period %s, device %s, seed %llu%s\n",
              r.watched.seconds, o.clients, FormatDuration(o.period).c_str(), o.device.c_str(),
              static_cast<unsigned long long>(o.seed),
              r.watched.interrupted ? " (interrupted)" : "");
  Verdict v;
  PrintDaemonFigures(r, v);
  PrintTopFigures(r.top, v);
  PrintSamplingFigures(r.top, o.period, v);
  PrintScrapeFigures(r.scrapes, v);
  PrintAbuseFigures(r.stream, r.metrics);
  PrintDaemonCounters(r.scrapes.daemon_counters);
  PrintDaemonLog(r.log_lines);
  if (r.watched.interrupted) v.failed.push_back("interrupted");
  std::string failed;
  for (const std::string& f : v.failed) failed += (failed.empty() ? "" : ", ") + f;
  std::printf("verdict: %s\n", v.failed.empty() ? "PASS" : ("FAIL (" + failed + ")").c_str());
  return v.failed.empty();
}

std::vector<std::string> ReadLines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// The run.

// The progress line's tail: the population, and the top client's lag since the previous line.
std::function<std::string()> ProgressLine(const StreamAbuser& stream, const TopClient& top,
                                          const Scraper& scraper) {
  return [&, lag_mark = std::size_t{0}]() mutable {
    const StreamTally s = stream.tally();
    const TopTally t = top.tally();
    const ScrapeTally sc = scraper.tally();
    std::uint64_t closed = 0, scrape_failures = 0;
    for (std::uint64_t n : s.closed_by_daemon) closed += n;
    for (const auto& [why, n] : sc.failures) scrape_failures += n;
    const std::vector<double> recent(t.lags_ms.begin() + static_cast<std::ptrdiff_t>(lag_mark),
                                     t.lags_ms.end());
    lag_mark = t.lags_ms.size();
    return Format(
        "abusers %llu up, %llu closed by daemon | top lag p99 %.1f ms (last %zu), "
        "%llu missing | scrapes %llu ok, %llu failed",
        static_cast<unsigned long long>(s.connected), static_cast<unsigned long long>(closed),
        Percentile(recent, 0.99), recent.size(), static_cast<unsigned long long>(t.missing),
        static_cast<unsigned long long>(sc.ok), static_cast<unsigned long long>(scrape_failures));
  };
}

// Runs the load against a started daemon, then stops the daemon while the clients are still
// connected (they read its goodbye), then stops the clients.
Results RunLoad(const SoakOptions& o, DaemonProcess& daemon, const std::string& socket_path,
                std::uint16_t metrics_port, const sigset_t& stop_signals) {
  StreamAbuser stream(socket_path, o.clients, o.seed);
  MetricsAbuser metrics(metrics_port, o.metrics_connections, o.seed + 1);
  Scraper scraper(metrics_port);
  TopClient top(socket_path, o.period);
  std::atomic<Phase> phase{Phase::kRunning};
  std::vector<std::thread> threads;
  threads.emplace_back([&] { stream.Run(phase); });
  threads.emplace_back([&] { metrics.Run(phase); });
  threads.emplace_back([&] { scraper.Run(phase); });
  threads.emplace_back([&] { top.Run(phase); });
  Results r;
  const auto open_connections = [&] {
    return static_cast<double>(stream.tally().connected + metrics.tally().open + 1);
  };
  r.watched =
      Watch(daemon, o, stop_signals, {ProgressLine(stream, top, scraper), open_connections});
  phase = Phase::kDraining;
  if (!r.watched.died) scraper.ScrapeOnce();
  r.stream = stream.tally();
  r.metrics = metrics.tally();
  r.scrapes = scraper.tally();
  r.stop = daemon.Stop();
  std::this_thread::sleep_for(200ms);  // the top client reads the shutdown notice
  phase = Phase::kStopped;
  for (std::thread& t : threads) t.join();
  r.top = top.tally();
  return r;
}

std::vector<std::string> DaemonArgs(const SoakOptions& o, const std::string& socket_path,
                                    std::uint16_t port, const std::filesystem::path& config) {
  return {o.daemon_binary,
          "--socket",
          socket_path,
          "--device",
          o.device,
          "--period",
          FormatDuration(o.period),
          "--seed",
          std::to_string(o.seed),
          "--metrics-listen",
          "127.0.0.1:" + std::to_string(port),
          "--config",
          config.string(),
          "--log-level",
          "info"};
}

// Starts the daemon in `dir`, runs the load, reports. The exit code.
int Soak(const SoakOptions& o, const TempDir& dir, const sigset_t& stop_signals) {
  const std::string socket_path = (dir.path() / "d.sock").string();
  const std::filesystem::path config = WriteSoakConfig(dir.path(), o);
  const std::uint16_t port = FreeLoopbackPort();
  if (config.empty() || port == 0) {
    std::fprintf(stderr, "soak: cannot prepare %s\n", dir.path().c_str());
    return 2;
  }
  const std::filesystem::path log =
      o.daemon_log.empty() ? dir.path() / "daemon.log" : std::filesystem::path(o.daemon_log);
  DaemonProcess daemon;
  std::string error;
  if (!daemon.Start(DaemonArgs(o, socket_path, port, config), log, error) ||
      !WaitReady(daemon, socket_path, port)) {
    std::fprintf(stderr, "soak: the daemon did not start%s%s\n", error.empty() ? "" : ": ",
                 error.c_str());
    for (const std::string& l : ReadLines(log)) {
      std::fprintf(stderr, "  | %s\n", l.c_str());
    }
    return 2;
  }
  Results r = RunLoad(o, daemon, socket_path, port, stop_signals);
  r.log_lines = ReadLines(log);
  return Report(o, r) ? 0 : 1;
}

void RaiseFdLimit() {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

}  // namespace

int main(int argc, char** argv) {
  SoakOptions o;
  std::string duration = "10m", warmup = "30s", period = "1s", retention = "20s";
  CLI::App app{"soak: abusive clients against one neuron-monitord; RSS, fds, lag, crashes"};
  app.add_option("--daemon", o.daemon_binary, "neuron-monitord binary to start")->required();
  app.add_option("--duration", duration, "how long the load runs, warm-up included");
  app.add_option("--clients", o.clients, "abusive stream clients")->check(CLI::Range(1, 100000));
  app.add_option("--period", period, "the daemon's base period (and the top client's)");
  app.add_option("--device", o.device, "the daemon's device");
  app.add_option("--seed", o.seed, "seed of the load's choices and the simulation");
  app.add_option("--warmup", warmup, "time before the start figures are taken");
  app.add_option("--retention", retention, "the daemon's history; keep it below --warmup");
  app.add_option("--metrics-connections", o.metrics_connections, "abusive /metrics connections")
      ->check(CLI::Range(1, 10000));
  app.add_option("--daemon-log", o.daemon_log, "keep the daemon's log in this file");
  app.add_flag("--progress", o.progress, "a line every 30 s");
  CLI11_PARSE(app, argc, argv);
  const auto d = ParseDuration(duration), w = ParseDuration(warmup), p = ParseDuration(period),
             h = ParseDuration(retention);
  for (const auto* parsed : {&d, &w, &p, &h}) {
    if (!parsed->ok())
      return std::fprintf(stderr, "soak: %s\n", parsed->status().message().c_str()), 2;
  }
  o.duration = *d;
  o.warmup = *w;
  o.period = *p;
  o.retention = *h;
  if (o.duration < o.warmup + 10s) {
    return std::fprintf(stderr, "soak: --duration must exceed --warmup by 10 s\n"), 2;
  }
  RaiseFdLimit();
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;  // blocked in every thread; the watcher waits for them
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, sig);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const TempDir dir;
  if (dir.path().empty()) return std::fprintf(stderr, "soak: cannot create a temp dir\n"), 2;
  return Soak(o, dir, stop_signals);
}
