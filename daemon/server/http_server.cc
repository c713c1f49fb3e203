#include "daemon/server/http_server.h"

#include <map>
#include <set>

// Beast after asio.h, which includes <utility> first (see asio.h).
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "daemon/server/tls_context.h"

namespace neuronmon::daemon {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::chrono::steady_clock::duration Steady(Nanos n) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(n);
}

// How long a closing connection may keep sending before it is cut: reading what the client still
// sends lets it see the error reply instead of a reset.
constexpr auto kLinger = std::chrono::seconds(1);
// A scrape whose reply has been written for this long without being read may lose its slot to a
// new scrape. Prometheus reads a reply of a few hundred KB in milliseconds.
constexpr Nanos kStalledScrape = std::chrono::seconds(1);

}  // namespace

// What the server keeps of a connection, whichever its stream (plain or TLS).
class HttpConnection {
 public:
  virtual ~HttpConnection() = default;
  // (TLS: the handshake, then) the first request.
  virtual void Start() = 0;
  // When this connection has held a scrape slot with a reply it has not read for longer than
  // `stalled`: the time its write started; nullopt otherwise.
  virtual std::optional<std::chrono::steady_clock::time_point> StalledScrapeSince(
      std::chrono::steady_clock::time_point now, Nanos stalled) const = 0;
  // Gives the scrape slot back now and closes the connection.
  virtual void AbandonScrape() = 0;
  virtual void Close() = 0;
  // A long-lived /events reply: sends the events logged since the last call (or a heartbeat),
  // closes it when its write is stuck past the write timeout, ends it when its lifetime is over.
  virtual void PumpEvents(std::chrono::steady_clock::time_point now) = 0;
};

struct HttpServer::Impl {
  Impl(asio::io_context& io_context, const DaemonCore& core, const DaemonStats& stats,
       Logger& logger, HttpServerOptions server_options)
      : io(io_context),
        log(logger),
        options(std::move(server_options)),
        handler(core, stats, options.handler),
        backoff_timer(io_context) {}

  void Accept(const std::shared_ptr<Impl>& self);
  void Admit(const std::shared_ptr<Impl>& self, tcp::socket socket);
  void FreeStalledScrape(std::chrono::steady_clock::time_point now);
  // A stream may write `wanted` more bytes: what is left of the budget all streams share.
  std::size_t StreamBudget() const {
    const std::size_t total = options.event_streams_max_bytes_total;
    return std::min(options.event_stream_max_bytes,
                    total > stream_bytes_in_flight ? total - stream_bytes_in_flight : 0);
  }

  asio::io_context& io;
  Logger& log;
  HttpServerOptions options;
  MetricsHandler handler;
  std::unique_ptr<tcp::acceptor> acceptor;
  bool requires_token = false;
  bool stopped = false;
  std::optional<std::uint16_t> port;
  std::string url;
  std::shared_ptr<const TlsServerContext> tls;  // null: plain HTTP
  std::map<std::uint64_t, std::weak_ptr<HttpConnection>> sessions;
  std::set<std::uint64_t> pending;
  std::map<std::uint64_t, std::weak_ptr<HttpConnection>> streams;  // long-lived /events replies
  std::size_t stream_bytes_in_flight = 0;
  // A pass over the streams is under way (PumpStreams), and another is wanted after it.
  bool pumping = false;
  bool pump_again = false;
  asio::steady_timer backoff_timer;
  Nanos accept_backoff{0};
  LogRateLimiter log_limiter{
      std::chrono::seconds(10)};  // sessions without an authorized request answered, oldest first
  std::uint64_t next_id = 1;
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection: (a TLS handshake,) read a request, reply, repeat while keep-alive. Kept alive by
// the shared_ptr in its pending operation's handler, as in Asio's examples. `Stream` is
// beast::tcp_stream or TlsStream.
template <typename Stream>
class HttpSession final : public HttpConnection,
                          public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  HttpSession(Stream stream, std::shared_ptr<HttpServer::Impl> server, std::uint64_t id)
      : stream_(std::move(stream)), server_(std::move(server)), id_(id) {}

  ~HttpSession() override {
    server_->handler.Release(slot_);
    server_->sessions.erase(id_);
    server_->pending.erase(id_);
    server_->streams.erase(id_);
    server_->stream_bytes_in_flight -= std::min(server_->stream_bytes_in_flight, out_.size());
  }

  void Start() override {
    started_ = std::chrono::steady_clock::now();
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      // The handshake is part of the request: it must end within the request timeout.
      Lowest().expires_after(Steady(server().options.request_timeout));
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                self->Guarded([&] { self->OnHandshake(ec); });
                              });
    } else {
      ReadRequest();
    }
  }
  std::optional<std::chrono::steady_clock::time_point> StalledScrapeSince(
      std::chrono::steady_clock::time_point now, Nanos stalled) const override {
    if (slot_ != ReplySlot::kScrape || now - write_started_ < Steady(stalled)) return std::nullopt;
    return write_started_;
  }
  void AbandonScrape() override {
    server().handler.Release(std::exchange(slot_, ReplySlot::kNone));
    Close();
  }
  void Close() override {
    beast::error_code ignored;
    Lowest().socket().close(ignored);
  }
  void PumpEvents(std::chrono::steady_clock::time_point now) override {
    Guarded([&] { Pump(now); });
  }

 private:
  HttpServer::Impl& server() { return *server_; }
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // TLS: a client whose certificate the listener verified needs no token.
  void OnHandshake(beast::error_code ec) {
    if (server().stopped) return;
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      if (ec) {
        const long verified = SSL_get_verify_result(stream_.native_handle());
        server().log.Debug("http: " + Peer() + ": TLS handshake failed: " + ec.message() +
                           (verified == X509_V_OK
                                ? std::string()
                                : std::string(" (client certificate: ") +
                                      X509_verify_cert_error_string(verified) + ")"));
        return Close();
      }
      certified_ = server().tls && server().tls->PeerAuthenticated(stream_.native_handle());
    }
    ReadRequest();
  }

  // No exception (std::bad_alloc building a reply, say) leaves a handler: the connection is
  // closed and the daemon goes on.
  template <typename Fn>
  void Guarded(Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      server().log.Error(std::string("http: internal error, connection closed: ") + e.what());
      Close();
    }
  }

  void ReadRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server().options.max_header_bytes));
    parser_->body_limit(server().options.max_body_bytes);
    Lowest().expires_after(Steady(server().options.request_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->Guarded([&] { self->OnRead(ec); });
                     });
  }

  // Keep-alive: the idle timeout runs until the next request's first bytes arrive, then the
  // request timeout.
  void WaitForNextRequest() {
    if (buffer_.size() > 0) return ReadRequest();
    // Idle no longer than the connection may live.
    const auto lifetime_end = started_ + Steady(server().options.connection_lifetime);
    Lowest().expires_at(std::min(
        std::chrono::steady_clock::now() + Steady(server().options.idle_timeout), lifetime_end));
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (!ec && !self->server().stopped) self->ReadRequest();
                            });
  }

  void OnRead(beast::error_code ec) {
    if (server().stopped || ec == http::error::end_of_stream) return;
    if (ec == beast::error::timeout) {
      server().log.Debug("http: " + Peer() + ": request not complete in time, closed");
      return;  // the stream closed the socket
    }
    if (ec == http::error::header_limit) return ReplyError(431, "request headers too large");
    if (ec == http::error::body_limit) return ReplyError(413, "request body too large");
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category()) {
      return ReplyError(400, "malformed request: " + ec.message());
    }
    if (ec) return;  // reset or closed by the peer
    const http::request<http::string_body>& req = parser_->get();
    HttpRequestHead head;
    head.method = std::string_view(req.method_string().data(), req.method_string().size());
    head.target = std::string_view(req.target().data(), req.target().size());
    const auto accept = req[http::field::accept];
    head.accept = std::string_view(accept.data(), accept.size());
    const auto accept_encoding = req[http::field::accept_encoding];
    head.accept_encoding = std::string_view(accept_encoding.data(), accept_encoding.size());
    const auto authorization = req[http::field::authorization];
    head.authorization = std::string_view(authorization.data(), authorization.size());
    const auto last_event_id = req["Last-Event-ID"];
    head.last_event_id = std::string_view(last_event_id.data(), last_event_id.size());
    head.requires_token = server().requires_token && !certified_;
    const auto now = std::chrono::steady_clock::now();
    if (server().handler.scrapes_in_flight() >= server().options.handler.max_scrapes) {
      server().FreeStalledScrape(now);
    }
    HttpReply reply = server().handler.Handle(head, now);
    ++requests_;
    // A connection that has served its share, or lived its time, closes after this reply.
    const bool keep = req.keep_alive() && requests_ < server().options.max_requests &&
                      now - started_ < Steady(server().options.connection_lifetime);
    Write(std::move(reply), req.version(), keep, req.method() == http::verb::head);
  }

  void ReplyError(int status, const std::string& what) {
    server().log.Debug("http: " + Peer() + ": " + what);
    HttpReply reply;
    reply.status = status;
    reply.body = std::to_string(status) + " " + what + "\n";
    Write(std::move(reply), 11, /*keep_alive=*/false, /*head=*/false);
  }

  // The status line and the headers every reply has: server, content type, the handler's extras.
  template <typename Body>
  static void SetHead(http::response<Body>& response, const HttpReply& reply, unsigned version) {
    response.result(static_cast<http::status>(reply.status));
    response.version(version);
    response.set(http::field::server, "neuron-monitord");
    response.set(http::field::content_type, reply.content_type);
    for (const auto& [name, value] : reply.headers) response.set(name, value);
  }

  void Write(HttpReply reply, unsigned version, bool keep_alive, bool head) {
    if (reply.stream) return StartStream(std::move(reply), version);
    server().handler.CountResponse(reply.status);
    slot_ = reply.slot;
    response_ = {};
    SetHead(response_, reply, version);
    response_.keep_alive(keep_alive && reply.status < 400);
    response_.content_length(reply.body.size());
    if (!head) response_.body() = std::move(reply.body);
    Lowest().expires_after(Steady(server().options.write_timeout));
    write_started_ = std::chrono::steady_clock::now();
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                        self->Guarded([&] { self->OnWritten(ec); });
                      });
  }

  void OnWritten(beast::error_code ec) {
    server().handler.Release(std::exchange(slot_, ReplySlot::kNone));
    if (ec || server().stopped) return;
    // A 2xx reply it has read in full: an authorized client, no longer the first to be evicted. A
    // client that asks and never reads stays evictable while it holds a scrape slot.
    if (response_.result_int() < 300) server().pending.erase(id_);
    if (!response_.keep_alive()) return Linger();
    response_ = {};  // the rendered body is not kept between requests
    WaitForNextRequest();
  }

  // A long-lived /events reply: the header (chunked for HTTP/1.1; an HTTP/1.0 body ends with the
  // connection), then the events as they are logged (Pump). Beast's deadlines are off from here —
  // a read waits for the client to leave — and Pump applies the write timeout and the lifetime.
  void StartStream(HttpReply reply, unsigned version) {
    server().handler.CountResponse(reply.status);
    slot_ = reply.slot;  // held until the connection closes
    server().pending.erase(id_);
    server().streams.emplace(id_, this->weak_from_this());
    sse_ = reply.stream->sse;
    after_ = reply.stream->after;
    chunked_ = version >= 11;
    SetHead(stream_head_, reply, version);
    stream_head_.keep_alive(false);
    if (chunked_) stream_head_.chunked(true);
    Lowest().expires_never();
    const auto now = std::chrono::steady_clock::now();
    stream_end_ = now + Steady(server().options.event_stream_lifetime);
    last_stream_write_ = now;
    pending_text_ = std::move(reply.body);
    serializer_.emplace(stream_head_);
    writing_ = true;
    write_started_ = now;
    http::async_write_header(stream_, *serializer_,
                             [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                               self->Guarded([&] { self->OnStreamWritten(ec); });
                             });
    WatchForClose();
  }

  // Reads and drops what the client sends after its request; its leaving closes the stream.
  void WatchForClose() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(1024),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec || self->server().stopped) return self->Close();
                              self->WatchForClose();
                            });
  }

  void Pump(std::chrono::steady_clock::time_point now) {
    if (!serializer_) return;
    HttpServer::Impl& s = server();
    if (writing_) {  // the last chunk too
      if (now - write_started_ > Steady(s.options.write_timeout)) {
        s.log.Debug("http: " + Peer() + ": /events stream not read within the write timeout");
        Close();
      }
      return;
    }
    if (closed_stream_) return;
    if (now >= stream_end_) {
      // Its lifetime is over: end the body cleanly; the client resumes after the last event.
      closed_stream_ = true;
      if (!chunked_) return EndStream();
      out_.clear();
      return WriteStream(http::make_chunk_last());
    }
    std::string text = std::move(pending_text_);
    pending_text_.clear();
    const std::size_t budget = s.StreamBudget();
    // Most passes find nothing new (they run every tick for the heartbeats and lifetimes).
    // A stream's keep-alive is due `heartbeat` to twice that after its last write, at a point
    // of its own (from its id): streams opened, or sent an event, together do not all write
    // their keep-alives in the same turn of the loop, 1,000 writes in front of a scrape.
    const Nanos heartbeat = s.options.event_stream_heartbeat;
    const Nanos keep_alive_after = heartbeat + heartbeat * static_cast<std::int64_t>(id_ % 64) / 64;
    const bool keep_alive_due = sse_ && now - last_stream_write_ >= Steady(keep_alive_after);
    if (text.empty() && after_ >= s.handler.newest_event_seq() && !keep_alive_due) return;
    if (budget > text.size()) {
      text += s.handler.EventsAfter(&after_, sse_, 1000, budget - text.size());
    }
    if (text.empty() && keep_alive_due) {
      text = ": keep-alive\n\n";  // an SSE comment: keeps proxies from cutting an idle stream
    }
    if (text.empty()) return;
    out_ = std::move(text);
    s.stream_bytes_in_flight += out_.size();
    if (chunked_) return WriteStream(http::make_chunk(asio::buffer(out_)));
    WriteStream(asio::buffer(out_));
  }

  // The body is complete (its last chunk written; without chunks, the close ends it): close.
  // The client sends nothing on a stream, so nothing unread turns the close into a reset.
  void EndStream() {
    server().handler.Release(std::exchange(slot_, ReplySlot::kNone));
    server().streams.erase(id_);
    Close();
  }

  template <typename Buffers>
  void WriteStream(const Buffers& buffers) {
    writing_ = true;
    write_started_ = std::chrono::steady_clock::now();
    asio::async_write(stream_, buffers,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                        self->Guarded([&] { self->OnStreamWritten(ec); });
                      });
  }

  void OnStreamWritten(beast::error_code ec) {
    writing_ = false;
    HttpServer::Impl& s = server();
    s.stream_bytes_in_flight -= std::min(s.stream_bytes_in_flight, out_.size());
    out_.clear();
    if (ec || s.stopped) return Close();
    if (closed_stream_) return EndStream();
    last_stream_write_ = std::chrono::steady_clock::now();
    Pump(last_stream_write_);  // more may have been logged meanwhile
  }

  // Stops sending and reads (and drops) what the client still sends, for at most kLinger in all:
  // one deadline, not one per read, or a client that keeps sending would hold the connection.
  void Linger() {
    if (!linger_deadline_) {
      beast::error_code ignored;
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      linger_deadline_ = std::chrono::steady_clock::now() + kLinger;
      Lowest().expires_at(*linger_deadline_);
    }
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (!ec && !self->server().stopped) self->Linger();
                            });
  }

  std::string Peer() {
    beast::error_code ec;
    const tcp::endpoint e = Lowest().socket().remote_endpoint(ec);
    return ec ? "?" : e.address().to_string() + ":" + std::to_string(e.port());
  }

  Stream stream_;
  std::shared_ptr<HttpServer::Impl> server_;
  std::uint64_t id_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  ReplySlot slot_ = ReplySlot::kNone;  // the handler's slot the reply being written holds
  bool certified_ = false;             // TLS: the client's certificate authenticates it
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point write_started_;
  std::size_t requests_ = 0;
  std::optional<std::chrono::steady_clock::time_point> linger_deadline_;
  // A long-lived /events reply (StartStream).
  http::response<http::empty_body> stream_head_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  bool sse_ = false;
  bool chunked_ = false;
  bool writing_ = false;
  bool closed_stream_ = false;  // its lifetime is over: the last chunk is written, then closed
  std::uint64_t after_ = 0;     // the last event sent
  std::string pending_text_;    // sent with the first events (the SSE retry line)
  std::string out_;             // being written
  std::chrono::steady_clock::time_point stream_end_;
  std::chrono::steady_clock::time_point last_stream_write_;
};

void HttpServer::Impl::Accept(const std::shared_ptr<Impl>& self) {
  acceptor->async_accept([self](beast::error_code ec, tcp::socket socket) {
    if (self->stopped || ec == asio::error::operation_aborted) return;
    if (!ec) {
      self->accept_backoff = Nanos(0);
      self->Admit(self, std::move(socket));
      return self->Accept(self);
    }
    if (auto d = self->log_limiter.Admit("accept", std::chrono::steady_clock::now()); d.allowed) {
      self->log.Warn(WithSuppressedCount("http: accept failed: " + ec.message(), d.suppressed));
    }
    // Out of descriptors or memory the listener stays readable: back off instead of spinning.
    self->accept_backoff = std::clamp<Nanos>(
        self->accept_backoff * 2, std::chrono::milliseconds(50), std::chrono::seconds(1));
    self->backoff_timer.expires_after(Steady(self->accept_backoff));
    self->backoff_timer.async_wait([self](const boost::system::error_code& wait_ec) {
      if (!wait_ec && !self->stopped) self->Accept(self);
    });
  });
}

void HttpServer::Impl::Admit(const std::shared_ptr<Impl>& self, tcp::socket socket) {
  // The oldest connection that has not yet been answered makes room for the newcomer.
  while (pending.size() >= options.max_pending) {
    const std::uint64_t oldest = *pending.begin();
    pending.erase(pending.begin());
    auto it = sessions.find(oldest);
    if (it == sessions.end()) continue;
    if (auto session = it->second.lock()) {
      log.Debug("http: closing a connection with no authorized request to make room");
      session->Close();
    }
  }
  if (sessions.size() - streams.size() >= options.max_connections) {
    log.Debug("http: " + std::to_string(sessions.size()) + " connections open; refusing another");
    return;  // the socket closes as it goes out of scope
  }
  {
    // A reply goes out as several writes (TLS: a record per buffer); Nagle would hold the last
    // until the client's delayed ACK, 40 ms later.
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
  }
  if (options.send_buffer_bytes > 0) {
    beast::error_code ignored;
    socket.set_option(
        asio::socket_base::send_buffer_size(static_cast<int>(options.send_buffer_bytes)), ignored);
  }
  const std::uint64_t id = next_id++;
  std::shared_ptr<HttpConnection> session;
  if (tls) {
    // asio::ssl::stream needs an asio::ssl::context while it makes its SSL object, which keeps
    // its own reference to the listener's SSL_CTX (a reload replaces `tls`, not this one).
    SSL_CTX_up_ref(tls->native());
    asio::ssl::context wrapper(tls->native());
    TlsStream stream(beast::tcp_stream(std::move(socket)), wrapper);
    KeepRecordBuffers(stream.native_handle());
    session = std::make_shared<HttpSession<TlsStream>>(std::move(stream), self, id);
  } else {
    session = std::make_shared<HttpSession<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)),
                                                               self, id);
  }
  sessions.emplace(id, session);
  pending.insert(id);
  session->Start();
}

// Every scrape slot is taken and a new scrape asks for one: the connection that has left its reply
// unread the longest, past kStalledScrape, gives its slot up — a client that asks and never reads
// cannot hold the slots for the whole write timeout.
void HttpServer::Impl::FreeStalledScrape(std::chrono::steady_clock::time_point now) {
  std::shared_ptr<HttpConnection> stalest;
  std::chrono::steady_clock::time_point since = now;
  for (auto& [id, weak] : sessions) {
    auto session = weak.lock();
    if (!session) continue;
    if (auto s = session->StalledScrapeSince(now, kStalledScrape); s && *s < since) {
      since = *s;
      stalest = session;
    }
  }
  if (stalest) {
    log.Debug("http: a scrape reply unread for over a second gives its slot to a new scrape");
    stalest->AbandonScrape();
  }
}

HttpServer::HttpServer(asio::io_context& io, const DaemonCore& core, const DaemonStats& stats,
                       Logger& log, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(io, core, stats, log, std::move(options))) {}

HttpServer::~HttpServer() { Shutdown(); }

Status HttpServer::Listen(const std::string& host, std::uint16_t port, bool requires_token,
                          std::shared_ptr<const TlsServerContext> tls) {
  boost::system::error_code ec;
  tcp::resolver resolver(impl_->io);
  auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Status::InvalidArgument("cannot resolve " + host + ": " + ec.message());
  }
  const tcp::endpoint endpoint = results.begin()->endpoint();
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->io);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  const tcp::endpoint bound = ec ? endpoint : acceptor->local_endpoint(ec);
  if (ec) {
    return Status::IoError("cannot serve /metrics on " + host + ":" + std::to_string(port) + ": " +
                           ec.message());
  }
  const std::string address = bound.address().to_string();
  impl_->url = std::string(tls ? "https://" : "http://") +
               (bound.address().is_v6() ? "[" + address + "]" : address) + ":" +
               std::to_string(bound.port());
  impl_->port = bound.port();
  impl_->requires_token = requires_token;
  impl_->tls = std::move(tls);
  impl_->acceptor = std::move(acceptor);
  impl_->Accept(impl_);
  return Status::Ok();
}

void HttpServer::SetTls(std::shared_ptr<const TlsServerContext> tls) {
  if (impl_->tls) impl_->tls = std::move(tls);
}

std::optional<std::uint16_t> HttpServer::port() const { return impl_->port; }
std::string HttpServer::url() const { return impl_->url; }
std::size_t HttpServer::connection_count() const { return impl_->sessions.size(); }
void HttpServer::SetLimits(const HttpServerOptions& options) {
  HttpServerOptions& o = impl_->options;
  o.max_connections = options.max_connections;
  o.max_pending = options.max_pending;
  o.max_header_bytes = options.max_header_bytes;
  o.max_body_bytes = options.max_body_bytes;
  o.request_timeout = options.request_timeout;
  o.idle_timeout = options.idle_timeout;
  o.write_timeout = options.write_timeout;
  o.connection_lifetime = options.connection_lifetime;
  o.max_requests = options.max_requests;
  impl_->handler.set_max_scrapes(options.handler.max_scrapes);
  impl_->handler.set_max_probes(options.handler.max_probes);
  impl_->handler.set_max_event_streams(options.handler.max_event_streams);
  o.event_stream_lifetime = options.event_stream_lifetime;
  o.event_stream_max_bytes = options.event_stream_max_bytes;
  o.event_streams_max_bytes_total = options.event_streams_max_bytes_total;
  o.event_stream_heartbeat = options.event_stream_heartbeat;
}

namespace {

// Streams given their events in one turn of the loop: an event for 1,000 streams is 1,000
// writes, and a scrape that arrives meanwhile is served between batches, not after all of them.
constexpr std::size_t kStreamsPerTurn = 64;

// Pumps the streams from id `from` on, `kStreamsPerTurn` at a time, each batch a handler of its
// own; then once more from the start when PumpEvents was called during the pass.
void PumpStreams(const std::shared_ptr<HttpServer::Impl>& impl, std::uint64_t from) {
  if (impl->stopped) {
    impl->pumping = impl->pump_again = false;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const auto again = [&impl](std::uint64_t next) {
    asio::post(impl->io, [weak = std::weak_ptr<HttpServer::Impl>(impl), next] {
      if (auto i = weak.lock()) PumpStreams(i, next);
    });
  };
  std::size_t pumped = 0;
  for (auto it = impl->streams.lower_bound(from); it != impl->streams.end();) {
    const std::uint64_t id = it->first;
    if (pumped == kStreamsPerTurn) return again(id);
    if (auto stream = it->second.lock()) {
      stream->PumpEvents(now);
      ++pumped;
    }
    it = impl->streams.upper_bound(id);  // a stream that failed its write left the map
  }
  if (std::exchange(impl->pump_again, false)) return again(0);
  impl->pumping = false;
}

}  // namespace

void HttpServer::PumpEvents() {
  if (impl_->pumping) {
    impl_->pump_again = true;
    return;
  }
  impl_->pumping = true;
  PumpStreams(impl_, 0);
}

std::size_t HttpServer::event_stream_count() const { return impl_->streams.size(); }

void HttpServer::Shutdown() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  boost::system::error_code ignored;
  if (impl_->acceptor) impl_->acceptor->close(ignored);
  impl_->backoff_timer.cancel();
  // Closing cancels each session's pending operation; its handler sees `stopped` and returns.
  for (auto& [id, weak] : std::map(impl_->sessions)) {
    if (auto session = weak.lock()) session->Close();
  }
}

}  // namespace neuronmon::daemon
