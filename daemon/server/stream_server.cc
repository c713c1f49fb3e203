#include "daemon/server/stream_server.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <variant>

#include "daemon/server/session.h"
#include "daemon/server/tls_context.h"
#include "proto/common/socket_path.h"

namespace neuronmon::daemon {
namespace {

using LocalAcceptor = asio::local::stream_protocol::acceptor;
using TcpAcceptor = asio::ip::tcp::acceptor;

std::string Errno(int e) { return std::strerror(e); }

// Creates the socket's directory (mode 0750) when missing; an existing one is left as it is.
Status EnsureDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status::Ok();
  std::filesystem::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return Status::IoError("cannot create " + dir.string() + ": " + Errno(errno));
  }
  return Status::Ok();
}

// A socket file already at `path`: refuse when a daemon answers there, else remove it.
Status ClearStaleSocket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Status::Ok();
  if (!S_ISSOCK(st.st_mode)) {
    return Status::AlreadyExists(path + " exists and is not a socket; not replacing it");
  }
  asio::io_context probe_io;
  asio::local::stream_protocol::socket probe(probe_io);
  boost::system::error_code ec;
  probe.connect(asio::local::stream_protocol::endpoint(path), ec);
  if (!ec) {
    return Status::AlreadyExists("another neuron-monitord is already listening on " + path);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::IoError("cannot remove stale socket " + path + ": " + Errno(errno));
  }
  return Status::Ok();
}

}  // namespace

struct StreamServer::Listener {
  explicit Listener(asio::io_context& io) : backoff_timer(io) {}
  Transport transport = Transport::kUnix;
  bool requires_token = false;
  std::shared_ptr<const TlsServerContext> tls;  // TCP with TLS; replaced by SetTcpTls
  std::string description;
  std::variant<std::unique_ptr<LocalAcceptor>, std::unique_ptr<TcpAcceptor>> acceptor;
  asio::steady_timer backoff_timer;
  Nanos backoff{0};  // after a failed accept; zero once one succeeds
};

StreamServer::StreamServer(asio::io_context& io, DaemonCore& core, Logger& log, DaemonStats& stats,
                           ServerLimits limits, std::string token)
    : io_(io), core_(core), log_(log), stats_(stats), limits_(limits), token_(std::move(token)) {}

StreamServer::~StreamServer() {
  // Close() removes each session from sessions_: iterate over a copy.
  for (auto& s : Sessions()) s->Close("shutdown");
  if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
}

std::vector<std::shared_ptr<Session>> StreamServer::Sessions() const {
  std::vector<std::shared_ptr<Session>> out;
  out.reserve(sessions_.size());
  for (const auto& [id, s] : sessions_) out.push_back(s);
  return out;
}

void StreamServer::LogLimited(LogSeverity severity, const std::string& key,
                              const std::string& message) {
  if (!log_.Enabled(severity)) return;
  const LogRateLimiter::Decision d = log_limiter_.Admit(key, std::chrono::steady_clock::now());
  if (d.allowed) log_.Log(severity, WithSuppressedCount(message, d.suppressed));
}

void StreamServer::AdjustQueuedBytes(std::size_t bytes, bool add) {
  queued_bytes_total_ = add ? queued_bytes_total_ + bytes
                            : queued_bytes_total_ - std::min(bytes, queued_bytes_total_);
}

Status StreamServer::ListenUnix(const UnixListenOptions& options) {
  const std::filesystem::path path(options.path);
  if (options.path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::InvalidArgument(options.path + ": socket path too long");
  }
  // The per-user fallback under /tmp, which others could have made first: 0700 and ours, or refuse.
  const auto euid = static_cast<unsigned>(::geteuid());
  Status status = path.parent_path() == FallbackSocketDirectory(euid)
                      ? EnsurePrivateDirectory(path.parent_path(), euid)
                      : EnsureDirectory(path.parent_path());
  if (!status.ok()) return status;
  status = ClearStaleSocket(options.path);
  if (!status.ok()) return status;
  auto acceptor = std::make_unique<LocalAcceptor>(io_);
  boost::system::error_code ec;
  acceptor->open(asio::local::stream_protocol(), ec);
  if (!ec) acceptor->bind(asio::local::stream_protocol::endpoint(options.path), ec);
  if (ec) return Status::IoError("cannot bind " + options.path + ": " + ec.message());
  // Permissions are set between bind and listen, so no client can connect before they apply.
  if (::chmod(options.path.c_str(), options.mode) != 0) {
    return Status::IoError("cannot chmod " + options.path + ": " + Errno(errno));
  }
  if (!options.group.empty()) {
    struct group* g = ::getgrnam(options.group.c_str());
    if (g == nullptr)
      return Status::NotFound("socket group \"" + options.group + "\" does not exist");
    if (::chown(options.path.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0) {
      return Status::IoError("cannot give " + options.path + " to group " + options.group + ": " +
                             Errno(errno));
    }
  }
  acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::IoError("cannot listen on " + options.path + ": " + ec.message());
  unix_path_ = options.path;
  auto listener = std::make_unique<Listener>(io_);
  listener->transport = Transport::kUnix;
  listener->description = "unix:" + options.path;
  listener->acceptor = std::move(acceptor);
  listeners_.push_back(std::move(listener));
  Accept(*listeners_.back());
  return Status::Ok();
}

Status StreamServer::ListenTcp(const std::string& host, std::uint16_t port, bool requires_token,
                               std::shared_ptr<const TlsServerContext> tls) {
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(io_);
  auto results = resolver.resolve(host, std::to_string(port), asio::ip::tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Status::InvalidArgument("cannot resolve " + host + ": " + ec.message());
  }
  const asio::ip::tcp::endpoint endpoint = results.begin()->endpoint();
  auto acceptor = std::make_unique<TcpAcceptor>(io_);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IoError("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                           ec.message());
  }
  auto listener = std::make_unique<Listener>(io_);
  listener->transport = Transport::kTcp;
  listener->requires_token = requires_token;
  const auto bound = acceptor->local_endpoint(ec);
  listener->description = "tcp:" + bound.address().to_string() + ":" + std::to_string(bound.port());
  if (tls) listener->description += " (" + tls->description() + ")";
  listener->tls = std::move(tls);
  listener->acceptor = std::move(acceptor);
  listeners_.push_back(std::move(listener));
  Accept(*listeners_.back());
  return Status::Ok();
}

Status StreamServer::AdoptListener(int fd, bool loopback_requires_token,
                                   std::shared_ptr<const TlsServerContext> tcp_tls,
                                   bool allow_plaintext) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status::IoError("socket-activation fd " + std::to_string(fd) + ": " + Errno(errno));
  }
  auto listener = std::make_unique<Listener>(io_);
  boost::system::error_code ec;
  if (addr.ss_family == AF_UNIX) {
    auto acceptor = std::make_unique<LocalAcceptor>(io_);
    acceptor->assign(asio::local::stream_protocol(), fd, ec);
    listener->transport = Transport::kUnix;
    listener->description = "unix:" + acceptor->local_endpoint(ec).path() + " (socket activation)";
    listener->acceptor = std::move(acceptor);
  } else {
    auto acceptor = std::make_unique<TcpAcceptor>(io_);
    acceptor->assign(addr.ss_family == AF_INET6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), fd,
                     ec);
    listener->transport = Transport::kTcp;
    const auto ep = acceptor->local_endpoint(ec);
    if (!ec && !ep.address().is_loopback() && !tcp_tls && !allow_plaintext) {
      return Status::FailedPrecondition("socket-activation fd " + std::to_string(fd) + " (tcp:" +
                                        ep.address().to_string() + ":" + std::to_string(ep.port()) +
                                        ") is off loopback without TLS; set listeners.tcp.tls, or "
                                        "listeners.tcp.allow_plaintext: true");
    }
    listener->requires_token = !ep.address().is_loopback() || loopback_requires_token;
    listener->description = "tcp:" + ep.address().to_string() + ":" + std::to_string(ep.port()) +
                            " (socket activation" +
                            (tcp_tls ? ", " + tcp_tls->description() : std::string()) + ")";
    listener->tls = std::move(tcp_tls);
    listener->acceptor = std::move(acceptor);
  }
  if (ec)
    return Status::IoError("socket-activation fd " + std::to_string(fd) + ": " + ec.message());
  listeners_.push_back(std::move(listener));
  Accept(*listeners_.back());
  return Status::Ok();
}

void StreamServer::Accept(Listener& listener) {
  std::visit(
      [&](auto& acceptor) {
        acceptor->async_accept([this, &listener](const boost::system::error_code& ec, auto socket) {
          if (shutting_down_ || ec == asio::error::operation_aborted) return;
          if (ec) return OnAcceptError(listener, ec);
          listener.backoff = Nanos(0);
          try {
            const auto protocol = socket.local_endpoint().protocol();
            GenericSocket generic(
                io_, asio::generic::stream_protocol(protocol.family(), protocol.protocol()),
                socket.release());
            OnAccepted(listener, std::move(generic));
          } catch (const std::exception& e) {
            // e.g. the peer reset before we looked at it, or memory ran out: lose this one only.
            LogLimited(LogSeverity::kWarn, "accept_setup:" + listener.description,
                       "client on " + listener.description + " dropped: " + e.what());
          }
          Accept(listener);
        });
      },
      listener.acceptor);
}

void StreamServer::OnAcceptError(Listener& listener, const boost::system::error_code& ec) {
  LogLimited(LogSeverity::kWarn, "accept:" + listener.description,
             "accept on " + listener.description + " failed: " + ec.message());
  // Out of descriptors (EMFILE, ENFILE) or memory, the listener stays readable: accepting again at
  // once would spin. Wait, longer each time, for closing sessions to free some.
  listener.backoff = std::clamp<Nanos>(listener.backoff * 2, std::chrono::milliseconds(50),
                                       std::chrono::seconds(1));
  listener.backoff_timer.expires_after(
      std::chrono::duration_cast<asio::steady_timer::duration>(listener.backoff));
  listener.backoff_timer.async_wait([this, &listener](const boost::system::error_code& wait_ec) {
    if (!wait_ec && !shutting_down_) Accept(listener);
  });
}

StreamServer::Peer StreamServer::PeerOf(GenericSocket& socket, Transport transport) {
  if (transport == Transport::kEmbedded) return {"in-process", ""};
  if (transport == Transport::kUnix) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      const std::string uid = "uid " + std::to_string(cred.uid);
      return {uid + " pid " + std::to_string(cred.pid), uid};
    }
    return {"unix peer", "uid ?"};
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char host[64] = "?";
  if (::getpeername(socket.native_handle(), reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    const void* ip =
        addr.ss_family == AF_INET6
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&addr)->sin_addr);
    ::inet_ntop(addr.ss_family, ip, host, sizeof host);
    const unsigned port =
        ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    return {std::string(host) + ":" + std::to_string(port), "tcp " + std::string(host)};
  }
  return {"tcp peer", "tcp ?"};
}

void StreamServer::SetTcpTls(std::shared_ptr<const TlsServerContext> tls) {
  for (auto& l : listeners_) {
    if (l->transport == Transport::kTcp && l->tls) l->tls = tls;
  }
}

std::unique_ptr<ByteStream> StreamServer::Wrap(const Listener& listener, GenericSocket socket) {
  if (listener.tls) {
    // A batch of frames goes out as several TLS records: without TCP_NODELAY, Nagle holds the last
    // until the client's delayed ACK (40 ms).
    const int one = 1;
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return MakeTlsStream(std::move(socket), listener.tls);
  }
  return MakePlainStream(std::move(socket));
}

void StreamServer::OnAccepted(Listener& listener, GenericSocket socket) {
  const Peer peer = PeerOf(socket, listener.transport);
  ++stats_.connections_total;
  std::string refusal;
  if (sessions_.size() >= limits_.max_clients) {
    refusal = "too many clients (limit " + std::to_string(limits_.max_clients) + ")";
  } else if (!peer.key.empty() && per_peer_[peer.key] >= limits_.max_clients_per_uid) {
    refusal = "too many clients from " + peer.key + " (limit " +
              std::to_string(limits_.max_clients_per_uid) + " per uid or address)";
  }
  if (!refusal.empty()) {
    // Not counted against its peer: it closes once the error is written.
    auto session = std::make_shared<Session>(
        static_cast<SessionContext&>(*this), Wrap(listener, std::move(socket)), next_id_++,
        listener.transport, peer.description, "", listener.requires_token);
    LogLimited(
        LogSeverity::kWarn, "refuse:" + peer.key,
        "refusing client " + peer.description + " on " + listener.description + ": " + refusal);
    sessions_.emplace(session->id(), session);
    ++stats_.clients[static_cast<int>(listener.transport)];
    session->Reject(v1::ERROR_CODE_TOO_MANY_CLIENTS, refusal, "too_many_clients");
    return;
  }
  MakeRoomForHandshake();
  auto session = std::make_shared<Session>(
      static_cast<SessionContext&>(*this), Wrap(listener, std::move(socket)), next_id_++,
      listener.transport, peer.description, peer.key, listener.requires_token);
  LogLimited(LogSeverity::kInfo, "connect",
             "client " + std::to_string(session->id()) + " connected on " + listener.description +
                 " (" + peer.description + ")");
  Admit(session, listener.transport);
}

// Closes the oldest connection still in its handshake when max_handshaking are: a client that
// says Hello at once gets in however many idle connections someone opened.
void StreamServer::MakeRoomForHandshake() {
  while (handshaking_.size() >= limits_.max_handshaking) {
    auto it = sessions_.find(*handshaking_.begin());
    if (it == sessions_.end()) {
      handshaking_.erase(handshaking_.begin());
      continue;
    }
    auto oldest = it->second;
    LogLimited(LogSeverity::kWarn, "handshake_evicted",
               "closing client " + std::to_string(oldest->id()) + " (" + oldest->peer() +
                   "): still in its handshake while " + std::to_string(handshaking_.size()) +
                   " connections wait (limits.max_handshaking)");
    oldest->Close("handshake_evicted");
  }
}

void StreamServer::Admit(const std::shared_ptr<Session>& session, Transport transport) {
  sessions_.emplace(session->id(), session);
  handshaking_.insert(session->id());
  if (!session->peer_key().empty()) ++per_peer_[session->peer_key()];
  ++stats_.clients[static_cast<int>(transport)];
  session->Start();
}

void StreamServer::OnWelcomed(Session& session) { handshaking_.erase(session.id()); }

bool StreamServer::AdmitFilterCompile(const std::string& key, MonoTime now) {
  if (key.empty()) return true;
  const double rate = limits_.filter_compiles_per_second;
  auto [it, added] = compile_budget_.try_emplace(key, Bucket{rate, now});
  Bucket& b = it->second;
  b.tokens =
      std::min(rate, b.tokens + rate * std::chrono::duration<double>(now - b.refilled).count());
  b.refilled = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

void StreamServer::ServeConnected(int fd, Transport transport) {
  GenericSocket socket(io_, asio::generic::stream_protocol(AF_UNIX, 0), fd);
  Peer peer = PeerOf(socket, transport);
  auto session = std::make_shared<Session>(static_cast<SessionContext&>(*this),
                                           MakePlainStream(std::move(socket)), next_id_++,
                                           transport, std::move(peer.description), peer.key, false);
  ++stats_.connections_total;
  Admit(session, transport);
}

void StreamServer::Remove(Session& session, const std::string& reason) {
  auto it = sessions_.find(session.id());
  if (it == sessions_.end()) return;
  auto keep = it->second;  // the session may be destroyed once erased
  sessions_.erase(it);
  handshaking_.erase(session.id());
  if (!session.peer_key().empty()) {
    auto peer = per_peer_.find(session.peer_key());
    if (peer != per_peer_.end() && --peer->second == 0) {
      per_peer_.erase(peer);
      compile_budget_.erase(session.peer_key());
    }
  }
  --stats_.clients[static_cast<int>(session.transport())];
  ++stats_.disconnects[reason];
  if (reason != "shutdown") {
    LogLimited(LogSeverity::kInfo, "disconnect:" + reason,
               "client " + std::to_string(session.id()) + " (" + session.peer() +
                   ") disconnected: " + reason);
  }
  MaybeFinishShutdown();
}

void StreamServer::Broadcast() {
  // A copy: a failing write may remove sessions while we iterate.
  const std::uint64_t seq = core_.history().newest_seq();
  for (auto& s : Sessions()) {
    // A replay catches up to this seq by itself, even one this Pump finishes.
    const bool replaying = s->replaying();
    s->Pump();  // this sample's events, and a replay held back by the all-clients budget
    if (replaying || !s->wants_reports()) continue;
    try {
      // A recording client gets the snapshot before the report made of it: a client that stops
      // after a report has kept what that report showed.
      if (s->subscription().snapshots()) {
        if (auto frames = core_.RecordFrames(!s->records_started())) {
          s->DeliverRecords(std::move(frames), seq);
        }
      }
      if (auto frame = core_.LiveFrame(s->subscription())) s->Deliver(std::move(frame), seq);
    } catch (const std::exception& e) {
      // One client's report could not be built (std::bad_alloc, say): lose that client only.
      LogLimited(LogSeverity::kError, "internal_error",
                 "client " + std::to_string(s->id()) + " (" + s->peer() +
                     "): internal error building its report: " + e.what() + "; disconnecting it");
      s->Close("internal_error");
    }
  }
  if (!core_.last_error().empty()) LogLimited(LogSeverity::kError, "report", core_.last_error());
}

void StreamServer::Heartbeat(MonoTime now) {
  for (auto& s : Sessions()) s->CheckStuck(now);
  const auto interval = limits_.heartbeat_interval;
  if (interval <= Nanos(0)) return;
  v1::Envelope beat;
  beat.mutable_heartbeat()->set_newest_seq(core_.history().newest_seq());
  beat.mutable_heartbeat()->set_wall_time_unix_ns(ToUnixNanos(std::chrono::system_clock::now()));
  for (auto& s : Sessions()) {
    if (s->welcomed() && now - s->last_send() >= interval) s->Send(beat);
  }
}

void StreamServer::NoticeAll(const v1::Notice& notice) {
  v1::Envelope e;
  *e.mutable_notice() = notice;
  // Clients subscribed to events hear of health and incidents as events, with their structure.
  const bool told_as_event =
      notice.kind() == v1::NOTICE_KIND_HEALTH || notice.kind() == v1::NOTICE_KIND_INCIDENT;
  for (auto& s : Sessions()) {
    if (s->welcomed() && !(told_as_event && s->wants_events())) s->Send(e);
  }
}

void StreamServer::PumpEvents() {
  for (auto& s : Sessions()) {
    if (s->wants_events()) s->Pump();
  }
}

void StreamServer::Shutdown(Nanos deadline, std::function<void()> done) {
  shutting_down_ = true;
  shutdown_done_ = std::move(done);
  for (auto& listener : listeners_) {
    listener->backoff_timer.cancel();
    std::visit(
        [](auto& a) {
          boost::system::error_code ignored;
          a->close(ignored);
        },
        listener->acceptor);
  }
  if (!unix_path_.empty()) {
    ::unlink(unix_path_.c_str());
    unix_path_.clear();
  }
  for (auto& s : Sessions()) s->Shutdown();
  shutdown_timer_ = std::make_unique<asio::steady_timer>(io_);
  shutdown_timer_->expires_after(
      std::chrono::duration_cast<asio::steady_timer::duration>(deadline));
  shutdown_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    for (auto& s : Sessions()) s->Close("shutdown");
    MaybeFinishShutdown();
  });
  MaybeFinishShutdown();
}

void StreamServer::MaybeFinishShutdown() {
  if (!shutting_down_ || !sessions_.empty() || !shutdown_done_) return;
  if (shutdown_timer_) shutdown_timer_->cancel();
  auto done = std::move(shutdown_done_);
  shutdown_done_ = nullptr;
  asio::post(io_, std::move(done));
}

std::vector<std::string> StreamServer::listening_on() const {
  std::vector<std::string> out;
  for (const auto& l : listeners_) out.push_back(l->description);
  return out;
}

}  // namespace neuronmon::daemon
