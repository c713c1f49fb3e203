#include "client/client.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "client/daemon_socket.h"
#include "client/tls_context.h"
#include "client/transport.h"
#include "proto/common/duration.h"
#include "proto/common/socket_path.h"
#include "proto/common/terminal_text.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::client {
namespace {

using daemon_socket::CheckDaemonUser;
using daemon_socket::CheckSocketDirectory;
using daemon_socket::ConnectTcp;
using daemon_socket::ConnectUnix;
using daemon_socket::IsSocket;
using daemon_socket::Millis;

using SteadyTime = std::chrono::steady_clock::time_point;
constexpr Nanos kHeartbeatEvery = std::chrono::seconds(5);
// Connect queues up to two events (a notice, kConnected) before its caller can take any.
constexpr std::size_t kMinQueuedEvents = 4;

// "host:port", "[::1]:9414": as --connect takes it.
std::string HostPort(const Endpoint& ep) {
  const std::string host = ep.host.find(':') == std::string::npos ? ep.host : "[" + ep.host + "]";
  return host + ":" + std::to_string(ep.port);
}

// A TLS endpoint's files are loaded once, here, for every (re)connection.
Result<std::unique_ptr<TlsContext>> TcpSecurity(const Endpoint& ep, const std::string& token) {
  if (Status s = CheckTokenTransport(ep, token); !s.ok()) return s;
  if (!ep.tls.enabled) return std::unique_ptr<TlsContext>();
  return TlsContext::Create(ep.tls);
}

}  // namespace

Nanos JitteredBackoff(Nanos backoff, double unit_random) {
  const double scale = 0.5 + 0.5 * std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::duration_cast<Nanos>(backoff * scale);
}

Status CheckInventory(const v1::Inventory& inventory) {
  const auto too_many = [](const char* what, std::size_t n, std::size_t max) {
    return Status::InvalidArgument("the daemon's inventory lists " + std::to_string(n) + " " +
                                   what + " (at most " + std::to_string(max) +
                                   " are possible); refusing it");
  };
  // The largest real instance, a trn2 UltraServer, has 64 devices of at most 8 NeuronCores.
  constexpr std::size_t kMaxDevices = 4096, kMaxCoresPerDevice = 256, kMaxProcesses = 65536;
  const auto devices = static_cast<std::size_t>(inventory.devices_size());
  if (devices > kMaxDevices) return too_many("devices", devices, kMaxDevices);
  const std::size_t per = inventory.hardware_info().neuroncore_per_device_count();
  if (per > kMaxCoresPerDevice) return too_many("NeuronCores per device", per, kMaxCoresPerDevice);
  for (const v1::Device& d : inventory.devices()) {
    const auto cores = static_cast<std::size_t>(d.core_ids_size());
    if (cores > kMaxCoresPerDevice) {
      return too_many("NeuronCores on one device", cores, kMaxCoresPerDevice);
    }
    const auto links = static_cast<std::size_t>(d.connected_to_size());
    if (links > kMaxDevices) return too_many("connections of one device", links, kMaxDevices);
  }
  const auto processes = static_cast<std::size_t>(inventory.processes_size());
  if (processes > kMaxProcesses) return too_many("processes", processes, kMaxProcesses);
  return Status::Ok();
}

Result<Endpoint> TcpEndpoint(std::string_view host_port) {
  const std::size_t colon = host_port.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == host_port.size()) {
    return Status::InvalidArgument("\"" + std::string(host_port) + "\": expected HOST:PORT");
  }
  std::string host(host_port.substr(0, colon));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port_text(host_port.substr(colon + 1));
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) {
    return Status::InvalidArgument("\"" + std::string(host_port) + "\": port must be 1-65535");
  }
  Endpoint e;
  e.kind = Endpoint::Kind::kTcp;
  e.host = host;
  e.port = static_cast<std::uint16_t>(port);
  return e;
}

struct Client::State {
  ClientOptions options;
  std::shared_ptr<LocalDaemon> local;  // the in-process daemon, if that is the endpoint
  std::string description;
  std::unique_ptr<TlsContext> tls;  // for a TCP endpoint with TLS: every (re)connection's
  std::unique_ptr<Transport> conn;  // the current connection; null between them
  wire::FrameDecoder decoder{wire::kDefaultOutboundMaxFrame, wire::kDefaultMaxFields};
  std::minstd_rand random{std::random_device{}()};
  std::string leftover;  // bytes read with the Welcome, for the reader thread
  SteadyTime last_data;  // when the daemon's latest bytes were handed on as events
  SteadyTime last_sent;  // when we last sent it something
  int wake_fd = -1;      // eventfd: poke the reader thread
  int notify_fd = -1;    // eventfd (semaphore): one count per queued event
  std::thread thread;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Event> events;
  std::deque<std::size_t> event_bytes;  // each queued report's serialized size, 0 for others
  std::size_t queued_bytes = 0;
  bool stop = false;
  bool finished = false;
  std::optional<v1::Subscribe> pending_subscribe;
  bool job_mark_sent = false;  // options.job_mark went out
  std::optional<SteadyTime> next_retry;
  v1::Welcome welcome;
  std::uint64_t last_seq = 0;
  // With Subscribe.events: the newest event delivered (or the point events start after), to
  // resume from after a reconnect; unset until the first Subscribe is sent.
  std::optional<std::uint64_t> events_after;

  ~State() {
    conn.reset();
    if (wake_fd >= 0) ::close(wake_fd);
    if (notify_fd >= 0) ::close(notify_fd);
  }

  // Queues `e` for Next(), waiting while max_queued_events, or max_queued_bytes of reports, are
  // (unless stopping; one report larger than the byte cap still goes into an empty queue).
  void Push(Event e) {
    const std::size_t bytes = e.kind == Event::Kind::kReport   ? e.report.ByteSizeLong()
                              : e.kind == Event::Kind::kRecord ? e.record.ByteSizeLong()
                                                               : 0;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] {
        return stop || (events.size() < options.max_queued_events &&
                        (events.empty() || queued_bytes + bytes <= options.max_queued_bytes));
      });
      if (stop) return;
      events.push_back(std::move(e));
      event_bytes.push_back(bytes);
      queued_bytes += bytes;
    }
    const std::uint64_t one = 1;
    (void)!::write(notify_fd, &one, sizeof one);
    cv.notify_all();
  }

  bool Stopping() {
    std::lock_guard lock(mu);
    return stop;
  }

  Result<std::unique_ptr<Transport>> Open() {
    const Endpoint& ep = options.endpoint;
    switch (ep.kind) {
      case Endpoint::Kind::kUnix: {
        Status dir = CheckSocketDirectory(ep.path);
        if (!dir.ok()) return dir;
        Result<int> socket = ConnectUnix(ep.path, options.connect_timeout);
        if (!socket.ok()) return socket.status();
        std::unique_ptr<Transport> t = Transport::Plain(*socket);
        Status trusted = CheckDaemonUser(*socket, ep.path);
        if (!trusted.ok()) return trusted;
        return t;
      }
      case Endpoint::Kind::kTcp: {
        Result<int> socket = ConnectTcp(ep.host, ep.port, options.connect_timeout);
        if (!socket.ok()) return socket.status();
        if (!tls) return Transport::Plain(*socket);
        const std::string& name = ep.tls.server_name.empty() ? ep.host : ep.tls.server_name;
        return Transport::Tls(*socket, *tls, name, HostPort(ep), options.connect_timeout);
      }
      default: {
        Result<int> socket = local->Connect();
        if (!socket.ok()) return socket.status();
        return Transport::Plain(*socket);
      }
    }
  }

  // Reads frames until `want` arrives (Welcome) or an Error, within the handshake timeout.
  Status Handshake() {
    v1::Envelope hello;
    hello.mutable_hello()->set_protocol_version(1);
    hello.mutable_hello()->set_client_name(options.client_name);
    hello.mutable_hello()->set_token(options.token);
    char buf[16384];
    if (Status s = conn->Send(hello); !s.ok()) {
      // A TLS daemon that refused our client certificate may have said why in an alert.
      const Transport::ReadResult why = conn->Read(buf, sizeof buf);
      if (why.kind != Transport::ReadResult::Kind::kError) return s;
      return Status::Unavailable(description + ": " + why.error);
    }
    const SteadyTime deadline = std::chrono::steady_clock::now() + options.handshake_timeout;
    decoder = wire::FrameDecoder(wire::kDefaultOutboundMaxFrame, wire::kDefaultMaxFields);
    leftover.clear();
    for (;;) {
      pollfd p{conn->fd(), POLLIN, 0};
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= Nanos(0) || (!conn->Pending() && ::poll(&p, 1, Millis(left)) == 0)) {
        return Status::Unavailable("no Welcome from " + description +
                                   " within the handshake timeout");
      }
      const Transport::ReadResult r = conn->Read(buf, sizeof buf);
      if (r.kind == Transport::ReadResult::Kind::kNothingYet) continue;
      if (r.kind == Transport::ReadResult::Kind::kError)
        return Status::Unavailable(description + ": " + r.error);
      if (r.kind == Transport::ReadResult::Kind::kClosed)
        return Status::Unavailable(description + " closed the connection during the handshake");
      std::string_view in(buf, r.bytes);
      v1::Envelope e;
      while (!in.empty()) {
        const auto o = decoder.Decode(in, e);
        if (o == wire::FrameDecoder::Outcome::kError)
          return Status::Unavailable(description + ": " + decoder.error_message());
        if (o == wire::FrameDecoder::Outcome::kNeedMore) break;
        if (e.has_error()) return Status::Unavailable(description + ": " + e.error().message());
        if (e.has_welcome()) {
          if (Status sane = CheckInventory(e.welcome().inventory()); !sane.ok()) {
            return Status::Unavailable(description + ": " + sane.message());
          }
          bool restarted = false;
          {
            std::lock_guard lock(mu);
            restarted =
                welcome.instance_id() != 0 && welcome.instance_id() != e.welcome().instance_id();
            if (restarted) {
              last_seq = 0;  // a new daemon: its seqs start over, nothing to resume
              // Its events are all new to us: every one it kept, from its "started".
              if (events_after) events_after = 0;
            }
            welcome = e.welcome();
          }
          if (restarted) {
            Event info;
            info.kind = Event::Kind::kInfo;
            info.text =
                "neuron-monitord restarted; reports from before the restart are not available";
            Push(std::move(info));
          }
          Event ev;
          ev.kind = Event::Kind::kConnected;
          ev.welcome = e.welcome();
          Push(std::move(ev));
          // Frames right behind the Welcome wait for the reader thread: consuming them here
          // could block the caller on a full event queue.
          leftover.assign(in.data(), in.size());
          return Status::Ok();
        }
      }
    }
  }

  Status Subscribe() {
    v1::Envelope e;
    {
      std::lock_guard lock(mu);
      *e.mutable_subscribe() = options.subscribe;
      if (last_seq != 0) e.mutable_subscribe()->set_resume_after_seq(last_seq);
      if (options.subscribe.has_events()) {
        const v1::EventSubscription& asked = options.subscribe.events();
        if (!events_after) {
          events_after = asked.has_after_seq() ? asked.after_seq() : welcome.newest_event_seq();
        }
        e.mutable_subscribe()->mutable_events()->set_after_seq(*events_after);
      }
    }
    Status sent = conn->Send(e);
    if (sent.ok() && options.job_mark && !job_mark_sent) {
      v1::Envelope mark;
      *mark.mutable_job_mark() = *options.job_mark;
      sent = conn->Send(mark);
      job_mark_sent = sent.ok();
    }
    return sent;
  }

  Status Establish() {
    Result<std::unique_ptr<Transport>> opened = Open();
    if (!opened.ok()) return opened.status();
    conn = std::move(*opened);
    Status s = Handshake();
    if (s.ok()) s = Subscribe();
    if (!s.ok()) conn.reset();
    last_data = last_sent = std::chrono::steady_clock::now();
    return s;
  }

  // Decodes `in` into events; false when the stream is corrupt.
  bool Consume(std::string_view in) {
    v1::Envelope e;
    while (!in.empty()) {
      const auto o = decoder.Decode(in, e);
      if (o == wire::FrameDecoder::Outcome::kNeedMore) break;
      if (o == wire::FrameDecoder::Outcome::kError) return false;
      Event ev;
      switch (e.body_case()) {
        case v1::Envelope::kReport: {
          std::lock_guard lock(mu);
          last_seq = std::max(last_seq, e.report().seq());
        }
          ev.kind = Event::Kind::kReport;
          ev.report = std::move(*e.mutable_report());
          break;
        case v1::Envelope::kNotice:
          ev.kind =
              e.notice().kind() == v1::NOTICE_KIND_GAP ? Event::Kind::kGap : Event::Kind::kNotice;
          ev.notice = e.notice();
          if (e.notice().kind() == v1::NOTICE_KIND_EVENTS_GAP) {
            std::lock_guard lock(mu);
            events_after = std::max(events_after.value_or(0), e.notice().last_seq());
          }
          if (e.notice().gap_reason() == v1::GAP_REASON_RESUME_AHEAD) {
            // Our resume point is not this daemon's: start over from what it sends now.
            std::lock_guard lock(mu);
            last_seq = 0;
          }
          break;
        case v1::Envelope::kEvent: {
          if (!options.subscribe.has_events()) continue;  // not asked for
          std::lock_guard lock(mu);
          // Queued before a Resubscribe and sent again after it: delivered once.
          if (events_after && e.event().seq() <= *events_after) continue;
          events_after = e.event().seq();
        }
          ev.kind = Event::Kind::kEvent;
          ev.event = std::move(*e.mutable_event());
          break;
        case v1::Envelope::kError:
          ev.kind = Event::Kind::kError;
          ev.error = e.error();
          break;
        case v1::Envelope::kRecord:
          if (!options.subscribe.snapshots()) continue;  // not asked for
          ev.kind = Event::Kind::kRecord;
          ev.record = std::move(*e.mutable_record());
          break;
        default:
          continue;  // heartbeats and messages from newer daemons
      }
      Push(std::move(ev));
    }
    return true;
  }

  // Takes a wake-up: the Resubscribe that caused it, if any, now also the subscription sent after
  // every reconnect.
  std::optional<v1::Subscribe> TakeWake() {
    std::uint64_t v;
    (void)!::read(wake_fd, &v, sizeof v);
    std::optional<v1::Subscribe> next;
    std::lock_guard lock(mu);
    next.swap(pending_subscribe);
    if (next) options.subscribe = *next;
    return next;
  }

  // Waits `d` unless told to stop; false when stopping. A Resubscribe meanwhile is kept for the
  // next connection and does not cut the wait short.
  bool Pause(Nanos d) {
    const SteadyTime until = std::chrono::steady_clock::now() + d;
    while (!Stopping()) {
      const Nanos left = until - std::chrono::steady_clock::now();
      if (left <= Nanos(0)) return true;
      pollfd p{wake_fd, POLLIN, 0};
      if (::poll(&p, 1, Millis(left) + 1) > 0) (void)TakeWake();
    }
    return false;
  }

  void Disconnected(const std::string& why) {
    conn.reset();
    Event ev;
    ev.kind = Event::Kind::kDisconnected;
    ev.text = why;
    Push(std::move(ev));
  }

  void Reconnect() {
    Nanos backoff = options.initial_backoff;
    while (!Stopping()) {
      const Nanos delay = JitteredBackoff(backoff, std::uniform_real_distribution<>(0, 1)(random));
      {
        std::lock_guard lock(mu);
        next_retry = std::chrono::steady_clock::now() + delay;
      }
      if (!Pause(delay)) return;
      const bool ok = Establish().ok();
      if (ok) {
        std::lock_guard lock(mu);
        next_retry.reset();
        return;
      }
      backoff = std::min(options.max_backoff, backoff * 2);
    }
  }

  void Run() {
    char buf[64 * 1024];
    while (!Stopping()) {
      if (!conn) {
        if (!options.reconnect || local) break;
        Reconnect();
        continue;
      }
      if (!leftover.empty()) {
        ConsumeLeftover();
        continue;
      }
      const SteadyTime now = std::chrono::steady_clock::now();
      if (StalledOrQuiet(now)) continue;
      if (!WaitAndRead(now, buf, sizeof buf)) break;
    }
    std::lock_guard lock(mu);
    finished = true;
    cv.notify_all();
  }

  // The bytes read with the Welcome, handed on before any read.
  void ConsumeLeftover() {
    const std::string bytes = std::move(leftover);
    leftover.clear();
    if (!Consume(bytes)) {
      Disconnected("corrupt stream from " + description + ": " + decoder.error_message());
    }
    last_data = std::chrono::steady_clock::now();  // see ReadSocket
  }

  // Drops a daemon silent for stall_timeout, or sends a heartbeat after kHeartbeatEvery of our
  // own silence; true when it did either.
  bool StalledOrQuiet(SteadyTime now) {
    if (now - last_data >= options.stall_timeout) {
      Disconnected("nothing from " + description + " for " + FormatElapsed(now - last_data));
      return true;
    }
    if (now - last_sent < kHeartbeatEvery) return false;
    // Quiet for a while: tell the daemon we are alive (it may enforce an idle timeout).
    v1::Envelope beat;
    beat.mutable_heartbeat()->set_newest_seq(last_seq);
    last_sent = now;
    if (!conn->Send(beat).ok()) Disconnected("lost " + description);
    return true;
  }

  // Waits for the daemon's bytes or a wake-up until the next timer is due, and takes what came;
  // false when it cannot wait. Bytes TLS already decrypted do not wait for the socket.
  bool WaitAndRead(SteadyTime now, char* buf, std::size_t size) {
    pollfd p[2] = {{conn->fd(), POLLIN, 0}, {wake_fd, POLLIN, 0}};
    const Nanos wait =
        std::min(last_sent + kHeartbeatEvery, last_data + options.stall_timeout) - now;
    const bool pending = conn->Pending();
    const int ready = ::poll(p, 2, pending ? 0 : Millis(wait) + 1);
    if (pending && !(p[1].revents & POLLIN)) {
      ReadSocket(buf, size);
      return true;
    }
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) return true;
    if (p[1].revents & POLLIN) {
      if (std::optional<v1::Subscribe> next = TakeWake()) {
        v1::Envelope e;
        *e.mutable_subscribe() = *next;
        if (!conn->Send(e).ok()) Disconnected("lost " + description + " while subscribing");
      }
      return true;
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) ReadSocket(buf, size);
    return true;
  }

  void ReadSocket(char* buf, std::size_t size) {
    using Kind = Transport::ReadResult::Kind;
    const Transport::ReadResult r = conn->Read(buf, size);
    if (r.kind == Kind::kNothingYet) return;  // half a TLS record: not data, stall clock runs
    if (r.kind == Kind::kData && Consume(std::string_view(buf, r.bytes))) {
      // After Consume, which may have waited for the caller to make room in the queue: only
      // time spent waiting on the socket is the daemon's silence.
      last_data = std::chrono::steady_clock::now();
      return;
    }
    Disconnected(r.kind == Kind::kClosed ? description + " closed the connection"
                 : r.kind == Kind::kError
                     ? "lost " + description + ": " + r.error
                     : "corrupt stream from " + description + ": " + decoder.error_message());
  }
};

Client::Client(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::optional<std::string> FindDaemonSocket(std::string* looked) {
  const std::vector<std::string> candidates = ClientSocketCandidates(CurrentSocketEnvironment());
  std::string ignored;  // sockets found where another user could have put them
  auto found = std::find_if(candidates.begin(), candidates.end(), [&](const std::string& c) {
    if (!IsSocket(c)) return false;
    Status dir = CheckSocketDirectory(c);
    if (!dir.ok()) ignored += "; ignored " + c + ": " + dir.message();
    return dir.ok();
  });
  if (found != candidates.end()) return *found;
  looked->clear();
  for (const std::string& c : candidates) *looked += (looked->empty() ? "" : ", ") + c;
  *looked += ignored;
  return std::nullopt;
}

Result<std::unique_ptr<Client>> Client::Connect(ClientOptions options) {
  auto state = std::make_unique<State>();
  state->options = std::move(options);
  state->options.max_queued_events = std::max(state->options.max_queued_events, kMinQueuedEvents);
  Endpoint& ep = state->options.endpoint;
  std::optional<std::string> info;
  if (ep.kind == Endpoint::Kind::kAuto) {
    std::string looked;
    if (std::optional<std::string> found = FindDaemonSocket(&looked)) {
      ep.kind = Endpoint::Kind::kUnix;
      ep.path = *found;
    } else {
      ep.kind = Endpoint::Kind::kStandalone;
      info = "no neuron-monitord socket found (looked in " + looked +
             "); running the simulator in-process";
    }
  }
  if (ep.kind == Endpoint::Kind::kStandalone) {
    if (ep.local == nullptr) {
      if (!ep.start_local) {
        return Status::FailedPrecondition("this program cannot run a daemon in-process");
      }
      Result<std::shared_ptr<LocalDaemon>> started = ep.start_local(ep.standalone);
      if (!started.ok()) return started.status();
      ep.local = std::move(*started);
    }
    state->local = ep.local;
    state->description = "embedded simulator";
  } else if (ep.kind == Endpoint::Kind::kUnix) {
    state->description = "unix:" + ep.path;
  } else {
    Result<std::unique_ptr<TlsContext>> tls = TcpSecurity(ep, state->options.token);
    if (!tls.ok()) return tls.status();
    state->tls = std::move(*tls);
    state->description = (state->tls ? "tls:" : "tcp:") + HostPort(ep);
  }
  state->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  state->notify_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
  if (info) {
    Event ev;
    ev.kind = Event::Kind::kInfo;
    ev.text = *info;
    state->Push(std::move(ev));
  }
  Status s = state->Establish();
  if (!s.ok()) return s;
  State* raw = state.get();
  state->thread = std::thread([raw] { raw->Run(); });
  return std::unique_ptr<Client>(new Client(std::move(state)));
}

Client::~Client() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  const std::uint64_t one = 1;
  (void)!::write(state_->wake_fd, &one, sizeof one);
  if (state_->thread.joinable()) state_->thread.join();
  state_->conn.reset();
  state_->local.reset();
}

std::optional<Event> Client::Next(Nanos timeout) {
  std::unique_lock lock(state_->mu);
  state_->cv.wait_for(lock, timeout, [&] { return !state_->events.empty() || state_->finished; });
  if (state_->events.empty()) return std::nullopt;
  Event e = std::move(state_->events.front());
  state_->events.pop_front();
  state_->queued_bytes -= state_->event_bytes.front();
  state_->event_bytes.pop_front();
  std::uint64_t v;
  (void)!::read(state_->notify_fd, &v, sizeof v);
  state_->cv.notify_all();  // a reader waiting for room in the queue
  return e;
}

int Client::notify_fd() const { return state_->notify_fd; }

void Client::Resubscribe(const v1::Subscribe& subscribe) {
  {
    std::lock_guard lock(state_->mu);
    state_->pending_subscribe = subscribe;
  }
  const std::uint64_t one = 1;
  (void)!::write(state_->wake_fd, &one, sizeof one);
}

std::optional<std::chrono::steady_clock::time_point> Client::next_retry() const {
  std::lock_guard lock(state_->mu);
  return state_->next_retry;
}

v1::Welcome Client::welcome() const {
  std::lock_guard lock(state_->mu);
  return state_->welcome;
}

std::string Client::endpoint_description() const { return state_->description; }
bool Client::standalone() const { return state_->local != nullptr; }

std::shared_ptr<LocalDaemon> Client::local_daemon() const { return state_->local; }

Endpoint Client::endpoint() const { return state_->options.endpoint; }
std::size_t Client::queued_events() const {
  std::lock_guard lock(state_->mu);
  return state_->events.size();
}

bool Client::running() const {
  std::lock_guard lock(state_->mu);
  return !state_->finished;
}

Result<v1::Welcome> FetchWelcome(const Endpoint& endpoint, const std::string& client_name,
                                 std::string* description, std::string* notice,
                                 const std::string& token) {
  ClientOptions options;
  options.client_name = client_name;
  options.endpoint = endpoint;
  options.token = token;
  options.reconnect = false;
  // A subscription nobody is due for: neuron-ls needs only the Welcome.
  v1::GroupSubscription* g = options.subscribe.add_groups();
  g->set_group(v1::GROUP_MEMORY_INFO);
  g->set_period_ns(86'400'000'000'000ULL);
  Result<std::unique_ptr<Client>> c = Client::Connect(std::move(options));
  if (!c.ok()) return c.status();
  if (description) *description = (*c)->endpoint_description();
  for (;;) {
    std::optional<Event> e = (*c)->Next(std::chrono::milliseconds(0));
    if (!e) break;
    if (e->kind == Event::Kind::kInfo && notice) *notice = e->text;
  }
  return (*c)->welcome();
}

Status CheckTokenTransport(const Endpoint& endpoint, const std::string& token) {
  if (endpoint.kind != Endpoint::Kind::kTcp || endpoint.tls.enabled || endpoint.tls.insecure ||
      token.empty()) {
    return Status::Ok();
  }
  return Status::FailedPrecondition(
      "refusing to send the token to " + HostPort(endpoint) +
      " over plaintext TCP: pass --tls-ca (the daemon's listeners.tcp.tls) or --insecure");
}

std::string InsecureNotice(const Endpoint& endpoint, bool sends_token) {
  if (endpoint.kind != Endpoint::Kind::kTcp || !endpoint.tls.insecure) return "";
  const std::string where = HostPort(endpoint);
  if (sends_token)
    return "--insecure: the token goes to " + where + " without verifying who serves it";
  if (endpoint.tls.enabled) return "--insecure: the certificate of " + where + " is not verified";
  return "";
}

}  // namespace neuronmon::client
