#include "daemon/server/session.h"

#include "daemon/server/stream_server.h"

namespace neuronmon::daemon {
namespace {

constexpr std::size_t kMaxBatchFrames = 64;
constexpr std::size_t kMaxBatchBytes = 4 << 20;

std::shared_ptr<const std::string> Encode(const v1::Envelope& envelope) {
  Result<std::string> frame = wire::EncodeFrame(envelope);
  if (!frame.ok()) return nullptr;
  return std::make_shared<const std::string>(std::move(*frame));
}

v1::Envelope ErrorEnvelope(v1::ErrorCode code, const std::string& message, bool fatal) {
  v1::Envelope e;
  e.mutable_error()->set_code(code);
  e.mutable_error()->set_message(message);
  e.mutable_error()->set_fatal(fatal);
  return e;
}

asio::steady_timer::duration ToTimer(Nanos d) {
  return std::chrono::duration_cast<asio::steady_timer::duration>(d);
}

}  // namespace

Session::Session(StreamServer& server, GenericSocket socket, std::uint64_t id, Transport transport,
                 std::string peer, bool requires_token)
    : server_(server),
      socket_(std::move(socket)),
      id_(id),
      transport_(transport),
      peer_(std::move(peer)),
      requires_token_(requires_token),
      handshake_timer_(server.io()),
      decoder_(wire::kDefaultInboundMaxFrame),
      last_send_(std::chrono::steady_clock::now()),
      last_receive_(last_send_) {}

void Session::Start() {
  handshake_timer_.expires_after(ToTimer(server_.limits().handshake_timeout));
  handshake_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->welcomed_ || self->closing_) return;
    self->Fail(v1::ERROR_CODE_HANDSHAKE_TIMEOUT, "no Hello within the handshake deadline", true,
               "handshake_timeout");
  });
  ReadSome();
}

void Session::Reject(v1::ErrorCode code, const std::string& message) {
  Fail(code, message, true, "rejected");
}

void Session::ReadSome() {
  socket_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->OnRead(ec, n); });
}

void Session::OnRead(const boost::system::error_code& ec, std::size_t n) {
  if (closed_) return;
  if (ec) {
    // The peer went away (or we closed): whatever was queued is lost with it.
    Close(ec == asio::error::eof ? "closed" : "read_error");
    return;
  }
  last_receive_ = std::chrono::steady_clock::now();
  if (closing_) return ReadSome();  // drain and ignore while the goodbye is written
  std::string_view input(read_buffer_.data(), n);
  while (!input.empty() && !closing_) {
    v1::Envelope envelope;
    const auto outcome = decoder_.Decode(input, envelope);
    if (outcome == wire::FrameDecoder::Outcome::kNeedMore) break;
    if (outcome == wire::FrameDecoder::Outcome::kError) {
      const bool too_large = decoder_.error() == wire::DecodeError::kFrameTooLarge;
      Fail(too_large ? v1::ERROR_CODE_FRAME_TOO_LARGE : v1::ERROR_CODE_MALFORMED_FRAME,
           decoder_.error_message(), true, "protocol");
      break;
    }
    Handle(envelope);
  }
  if (!closed_) ReadSome();
}

void Session::Handle(const v1::Envelope& envelope) {
  switch (envelope.body_case()) {
    case v1::Envelope::kHello:
      if (welcomed_) {
        return Fail(v1::ERROR_CODE_PROTOCOL_VIOLATION, "Hello sent twice", true, "protocol");
      }
      return OnHello(envelope.hello());
    case v1::Envelope::kSubscribe:
      if (!welcomed_) {
        return Fail(v1::ERROR_CODE_PROTOCOL_VIOLATION, "Subscribe before Hello", true, "protocol");
      }
      return OnSubscribe(envelope.subscribe());
    case v1::Envelope::kHeartbeat:
      if (!welcomed_) {
        return Fail(v1::ERROR_CODE_PROTOCOL_VIOLATION, "Heartbeat before Hello", true, "protocol");
      }
      return;
    case v1::Envelope::BODY_NOT_SET:
      return;  // a message from a newer protocol revision: ignore it
    default:
      return Fail(v1::ERROR_CODE_PROTOCOL_VIOLATION,
                  "clients may send only Hello, Subscribe and Heartbeat", true, "protocol");
  }
}

void Session::OnHello(const v1::Hello& hello) {
  if (hello.protocol_version() != 1) {
    return Fail(v1::ERROR_CODE_UNSUPPORTED_VERSION,
                "protocol version " + std::to_string(hello.protocol_version()) +
                    " is not supported (this daemon speaks 1)",
                true, "protocol");
  }
  if (requires_token_ && (server_.token().empty() || hello.token() != server_.token())) {
    return Fail(v1::ERROR_CODE_UNAUTHENTICATED, "missing or wrong auth token", true,
                "unauthenticated");
  }
  welcomed_ = true;
  handshake_timer_.cancel();
  server_.log().Debug("client " + std::to_string(id_) + " (" + peer_ + ") is " +
                      (hello.client_name().empty() ? "unnamed" : hello.client_name()));
  v1::Envelope welcome;
  *welcome.mutable_welcome() = server_.core().MakeWelcome(std::chrono::steady_clock::now());
  Queue(welcome);
}

void Session::OnSubscribe(const v1::Subscribe& subscribe) {
  DaemonCore& core = server_.core();
  Result<Subscription> sub = Subscription::FromRequest(subscribe, core.period());
  if (!sub.ok()) {
    return Fail(v1::ERROR_CODE_INVALID_SUBSCRIPTION, sub.status().message(), false, "");
  }
  subscription_ = std::move(*sub);
  // Reports queued for the old subscription no longer apply.
  std::erase_if(outbox_, [](const Frame& f) { return f.seq != 0; });
  queued_reports_ = 0;
  gap_first_ = gap_last_ = 0;
  v1::Envelope ok;
  ok.mutable_notice()->set_kind(v1::NOTICE_KIND_SUBSCRIBED);
  ok.mutable_notice()->set_text(subscription_->Describe(core.period()));
  Queue(ok);
  const History& history = core.history();
  if (history.empty()) return;
  if (subscribe.has_resume_after_seq()) {
    const std::uint64_t after = subscribe.resume_after_seq();
    if (after + 1 < history.oldest_seq()) {
      v1::Envelope gap;
      v1::Notice* n = gap.mutable_notice();
      n->set_kind(v1::NOTICE_KIND_GAP);
      n->set_gap_reason(v1::GAP_REASON_RETENTION);
      n->set_first_seq(after + 1);
      n->set_last_seq(history.oldest_seq() - 1);
      n->set_text("reports older than the retained history were not replayed");
      Queue(gap);
    }
    replay_next_ = std::max(after + 1, history.oldest_seq());
    if (replay_next_ > history.newest_seq()) replay_next_ = 0;
    MaybeWrite();
    return;
  }
  // The first report carries every subscribed group at once, as neuron-monitor's first record.
  if (auto first = core.ReportAt(*subscription_, history.newest_seq(), true, false)) {
    v1::Envelope e;
    *e.mutable_report() = std::move(*first);
    if (auto bytes = Encode(e)) Enqueue({bytes, history.newest_seq()});
  }
}

void Session::Fail(v1::ErrorCode code, const std::string& message, bool fatal,
                   const std::string& reason) {
  if (fatal) {
    server_.log().Info("client " + std::to_string(id_) + " (" + peer_ + "): " + message);
  }
  Queue(ErrorEnvelope(code, message, fatal));
  if (fatal) {
    closing_ = true;
    close_reason_ = reason;
    outbox_.erase(
        std::remove_if(outbox_.begin(), outbox_.end(), [](const Frame& f) { return f.seq != 0; }),
        outbox_.end());
    replay_next_ = 0;
    MaybeWrite();
  }
}

void Session::Deliver(std::shared_ptr<const std::string> frame, std::uint64_t seq) {
  if (!subscribed() || replaying()) return;  // a replay catches up to this seq by itself
  Enqueue({std::move(frame), seq});
}

void Session::Send(const v1::Envelope& envelope) {
  if (closing_ || closed_) return;
  Queue(envelope);
}

void Session::Shutdown() {
  if (closed_) return;
  v1::Envelope bye;
  bye.mutable_notice()->set_kind(v1::NOTICE_KIND_SHUTDOWN);
  bye.mutable_notice()->set_text("neuron-monitord is shutting down");
  Queue(bye);
  closing_ = true;
  close_reason_ = "shutdown";
  replay_next_ = 0;
  MaybeWrite();
}

void Session::Queue(const v1::Envelope& envelope) {
  if (closed_) return;
  auto bytes = Encode(envelope);
  if (bytes == nullptr) return;
  outbox_.push_back({std::move(bytes), 0});
  MaybeWrite();
}

void Session::Enqueue(Frame frame) {
  if (closed_ || closing_) return;
  if (queued_reports_ >= server_.limits().queue_depth) {
    // Drop the oldest queued report; a gap Notice will say which seqs never came.
    auto oldest =
        std::find_if(outbox_.begin(), outbox_.end(), [](const Frame& f) { return f.seq != 0; });
    if (oldest != outbox_.end()) {
      if (gap_first_ == 0) gap_first_ = oldest->seq;
      gap_last_ = oldest->seq;
      outbox_.erase(oldest);
      --queued_reports_;
      ++server_.stats().frames_dropped;
    }
  }
  outbox_.push_back(std::move(frame));
  ++queued_reports_;
  MaybeWrite();
}

void Session::FillFromReplay() {
  DaemonCore& core = server_.core();
  while (replay_next_ != 0 && queued_reports_ < server_.limits().queue_depth) {
    const std::uint64_t seq = replay_next_;
    replay_next_ = seq < core.history().newest_seq() ? seq + 1 : 0;
    if (auto report = core.ReportAt(*subscription_, seq, false, true)) {
      v1::Envelope e;
      *e.mutable_report() = std::move(*report);
      if (auto bytes = Encode(e)) {
        outbox_.push_back({bytes, seq});
        ++queued_reports_;
      }
    }
  }
}

void Session::MaybeWrite() {
  if (closed_ || !in_flight_.empty()) return;
  if (replay_next_ != 0 && subscription_) FillFromReplay();
  if (gap_first_ != 0) {
    v1::Envelope gap;
    v1::Notice* n = gap.mutable_notice();
    n->set_kind(v1::NOTICE_KIND_GAP);
    n->set_gap_reason(v1::GAP_REASON_SLOW_CLIENT);
    n->set_first_seq(gap_first_);
    n->set_last_seq(gap_last_);
    n->set_text("reports dropped: the client did not read fast enough");
    gap_first_ = gap_last_ = 0;
    if (auto bytes = Encode(gap)) in_flight_.push_back({bytes, 0});
  }
  std::size_t bytes = 0;
  while (!outbox_.empty() && in_flight_.size() < kMaxBatchFrames && bytes < kMaxBatchBytes) {
    bytes += outbox_.front().bytes->size();
    if (outbox_.front().seq != 0) --queued_reports_;
    in_flight_.push_back(std::move(outbox_.front()));
    outbox_.pop_front();
  }
  if (in_flight_.empty()) {
    if (closing_) Close(close_reason_);
    return;
  }
  std::vector<asio::const_buffer> buffers;
  buffers.reserve(in_flight_.size());
  for (const Frame& f : in_flight_) buffers.push_back(asio::buffer(*f.bytes));
  write_started_ = std::chrono::steady_clock::now();
  asio::async_write(socket_, buffers,
                    [self = shared_from_this()](const boost::system::error_code& ec,
                                                std::size_t n) { self->OnWrite(ec, n); });
}

void Session::OnWrite(const boost::system::error_code& ec, std::size_t n) {
  if (closed_) return;
  if (ec) return Close("write_error");
  DaemonStats& stats = server_.stats();
  stats.frames_sent += in_flight_.size();
  stats.bytes_sent += n;
  last_send_ = std::chrono::steady_clock::now();
  in_flight_.clear();
  MaybeWrite();
}

void Session::CheckStuck(MonoTime now) {
  const Nanos idle = server_.limits().idle_timeout;
  if (idle > Nanos(0) && !closing_ && now - last_receive_ > idle) {
    return Fail(v1::ERROR_CODE_IDLE_TIMEOUT, "nothing received within the idle timeout", true,
                "idle_timeout");
  }
  if (!in_flight_.empty() && now - write_started_ > server_.limits().write_timeout) {
    server_.log().Warn(
        "client " + std::to_string(id_) + " (" + peer_ + ") has not read for " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::seconds>(now - write_started_).count()) +
        " s; disconnecting it");
    Close("write_timeout");
  }
}

void Session::Close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  handshake_timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(GenericSocket::shutdown_both, ignored);
  socket_.close(ignored);
  outbox_.clear();
  server_.Remove(*this, reason);
}

}  // namespace neuronmon::daemon
