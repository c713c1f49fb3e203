#include "bench/soak/abusers.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "bench/soak/client_io.h"
#include "bench/soak/hostile_input.h"

namespace neuronmon::soak {
namespace {

using namespace std::chrono_literals;

// The daemon's defaults (packaging/neuron-monitord.json), which soak.json leaves alone, and the
// slack a client allows the daemon past them before counting the deadline as not enforced.
constexpr auto kHandshakeTimeout = 5s;
constexpr auto kSubscribeTimeout = 30s;
constexpr auto kMetricsRequestTimeout = 10s;
constexpr auto kSlack = 10s;

Steady::duration Between(Rng& rng, Steady::duration lo, Steady::duration hi) {
  return lo + Steady::duration(static_cast<Steady::rep>(
                  rng() % static_cast<std::uint64_t>((hi - lo).count() + 1)));
}

}  // namespace

StreamAbuser::StreamAbuser(std::string socket_path, int clients, std::uint64_t seed)
    : socket_path_(std::move(socket_path)),
      rng_(seed),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      clients_(static_cast<std::size_t>(clients)) {}

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

}  // namespace neuronmon::soak
