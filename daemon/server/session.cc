#include "daemon/server/session.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string_view>

#include "daemon/core/daemon_core.h"
#include "daemon/server/session_context.h"
#include "proto/common/secret.h"
#include "proto/common/tag_filter.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::daemon {
namespace {

constexpr std::size_t kMaxBatchFrames = 64;
constexpr std::size_t kMaxBatchBytes = 4 << 20;
// How soon a Subscribe held back by its user's compile budget is tried again.
constexpr Nanos kCompileRetry = std::chrono::milliseconds(250);
// Reports a replay builds ahead of the writer: enough to keep one batch going, while the memory
// a replaying client holds stays small.
constexpr std::size_t kReplayLookahead = 8;
// Events queued ahead of the writer: the rest wait in the daemon's event log (events.retention),
// so a client that reads slowly holds little and, within the retention, loses none.
constexpr std::size_t kEventLookahead = 32;

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

v1::Envelope GapEnvelope(v1::GapReason reason, std::uint64_t first, std::uint64_t last,
                         std::string text) {
  v1::Envelope gap;
  v1::Notice* n = gap.mutable_notice();
  n->set_kind(v1::NOTICE_KIND_GAP);
  n->set_gap_reason(reason);
  n->set_first_seq(first);
  n->set_last_seq(last);
  n->set_text(std::move(text));
  return gap;
}

v1::Envelope EventsGapEnvelope(std::uint64_t first, std::uint64_t last) {
  v1::Envelope gap = GapEnvelope(v1::GAP_REASON_RETENTION, first, last,
                                 "events older than the retained ones (events.retention, "
                                 "events.max_retained) were not delivered");
  gap.mutable_notice()->set_kind(v1::NOTICE_KIND_EVENTS_GAP);
  return gap;
}

asio::steady_timer::duration ToTimer(Nanos d) {
  return std::chrono::duration_cast<asio::steady_timer::duration>(d);
}

MonoTime Now() { return std::chrono::steady_clock::now(); }

}  // namespace

Session::Session(SessionContext& server, std::unique_ptr<ByteStream> stream, std::uint64_t id,
                 Transport transport, std::string peer, std::string peer_key, bool requires_token)
    : server_(server),
      stream_(std::move(stream)),
      id_(id),
      transport_(transport),
      peer_(std::move(peer)),
      peer_key_(std::move(peer_key)),
      requires_token_(requires_token),
      timer_(server.io()),
      decoder_(wire::kDefaultInboundMaxFrame),
      last_send_(Now()),
      last_receive_(last_send_) {}

template <typename Fn>
void Session::Guarded(const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    server_.LogLimited(LogSeverity::kError, "internal_error",
                       "client " + std::to_string(id_) + " (" + peer_ + "): internal error in " +
                           what + ": " + e.what() + "; disconnecting it");
    Close("internal_error");
  } catch (...) {
    server_.LogLimited(LogSeverity::kError, "internal_error",
                       "client " + std::to_string(id_) + " (" + peer_ + "): internal error in " +
                           what + "; disconnecting it");
    Close("internal_error");
  }
}

void Session::Start() {
  ArmTimer(server_.limits().handshake_timeout, &Session::OnHandshakeDeadline);
  stream_->AsyncHandshake([self = shared_from_this()](const boost::system::error_code& ec) {
    self->Guarded("the TLS handshake", [&] { self->OnTlsHandshake(ec); });
  });
}

void Session::OnTlsHandshake(const boost::system::error_code& ec) {
  if (closed_) return;
  if (ec) {
    // Wrong CA, a plaintext client, TLS 1.0: the client's side says why; ours is a debug line
    // (anyone can make a port scanner fill the log).
    if (server_.log().Enabled(LogSeverity::kDebug)) {
      const std::string why = stream_->verify_error();
      server_.log().Debug("client " + std::to_string(id_) + " (" + peer_ +
                          "): TLS handshake failed: " + ec.message() +
                          (why.empty() ? "" : " (client certificate: " + why + ")"));
    }
    return Close("tls_handshake");
  }
  stream_ready_ = true;
  if (stream_->peer_authenticated()) requires_token_ = false;
  if (server_.log().Enabled(LogSeverity::kDebug)) {
    if (const std::string protocol = stream_->protocol(); !protocol.empty()) {
      server_.log().Debug("client " + std::to_string(id_) + " (" + peer_ + "): " + protocol +
                          (requires_token_ ? "" : ", authenticated by its certificate"));
    }
  }
  ReadSome();
}

void Session::ArmTimer(Nanos after, void (Session::*on_expiry)()) {
  timer_.expires_after(ToTimer(after));  // cancels the previous deadline
  timer_.async_wait([self = shared_from_this(), on_expiry](const boost::system::error_code& ec) {
    if (ec || self->closed_ || self->closing_) return;
    self->Guarded("a timer", [&] { (self.get()->*on_expiry)(); });
  });
}

void Session::OnHandshakeDeadline() {
  if (welcomed_) return;
  if (!stream_ready_) {
    // Still in the TLS handshake: there is no channel to send the error on.
    server_.LogLimited(LogSeverity::kInfo, "fail:handshake_timeout",
                       "client " + std::to_string(id_) + " (" + peer_ +
                           "): no TLS handshake within the handshake deadline");
    return Close("handshake_timeout");
  }
  Fail(v1::ERROR_CODE_HANDSHAKE_TIMEOUT, "no Hello within the handshake deadline", true,
       "handshake_timeout");
}

void Session::Reject(v1::ErrorCode code, const std::string& message, const std::string& reason) {
  Fail(code, message, true, reason);
}

void Session::ReadSome() {
  stream_->AsyncReadSome(
      asio::buffer(read_buffer_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
        self->Guarded("a read", [&] { self->OnRead(ec, n); });
      });
}

void Session::OnRead(const boost::system::error_code& ec, std::size_t n) {
  if (closed_) return;
  if (ec) {
    // The peer went away (or we closed): whatever was queued is lost with it.
    Close(ec == asio::error::eof ? "closed" : "read_error");
    return;
  }
  last_receive_ = Now();
  if (closing_) return ReadSome();  // drain and ignore while the goodbye is written
  std::string_view input(read_buffer_.data(), n);
  while (!input.empty() && !closing_ && !closed_) {
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
    case v1::Envelope::kJobMark:
      if (!welcomed_) {
        return Fail(v1::ERROR_CODE_PROTOCOL_VIOLATION, "JobMark before Hello", true, "protocol");
      }
      return OnJobMark(envelope.job_mark());
    case v1::Envelope::BODY_NOT_SET:
      return;  // a message from a newer protocol revision: ignore it
    default:
      return Fail(v1::ERROR_CODE_PROTOCOL_VIOLATION,
                  "clients may send only Hello, Subscribe, Heartbeat and JobMark", true,
                  "protocol");
  }
}

void Session::OnJobMark(const v1::JobMark& request) {
  // Who asks is known only on the unix socket (SO_PEERCRED): "uid N". The in-process embedding
  // is the user's own daemon.
  JobMark mark;
  mark.job = request.job();
  mark.stop = request.stop();
  if (transport_ == Transport::kUnix) {
    std::uint32_t uid = 0;
    const std::string_view key = peer_key_;
    if (key.rfind("uid ", 0) != 0 ||
        std::from_chars(key.data() + 4, key.data() + key.size(), uid).ec != std::errc()) {
      return Fail(v1::ERROR_CODE_REFUSED, "job marks need the peer's credentials", false, "");
    }
    if (uid != 0) mark.uid = uid;
  } else if (transport_ != Transport::kEmbedded) {
    return Fail(v1::ERROR_CODE_REFUSED,
                "job marks are taken only over the daemon's unix socket, where it knows who asks",
                false, "");
  }
  Status st = server_.core().MarkJob(mark, Now(), std::chrono::system_clock::now());
  if (!st.ok()) return Fail(v1::ERROR_CODE_REFUSED, st.message(), false, "");
  const std::string job = SanitizeForTerminal(CutForMessage(request.job(), 100));
  server_.LogLimited(LogSeverity::kInfo, "job_mark",
                     "job " + job + (mark.stop ? " stopped" : " started") + " by " + peer_);
  v1::Envelope notice;
  notice.mutable_notice()->set_kind(v1::NOTICE_KIND_JOB_MARKED);
  notice.mutable_notice()->set_text("job " + job + (mark.stop ? " ended" : " started"));
  Queue(notice);
  server_.PumpEvents();
}

void Session::OnHello(const v1::Hello& hello) {
  if (hello.protocol_version() != 1) {
    return Fail(v1::ERROR_CODE_UNSUPPORTED_VERSION,
                "protocol version " + std::to_string(hello.protocol_version()) +
                    " is not supported (this daemon speaks 1)",
                true, "protocol");
  }
  if (requires_token_ &&
      (server_.token().empty() || !SecretsEqual(hello.token(), server_.token()))) {
    return Fail(v1::ERROR_CODE_UNAUTHENTICATED, "missing or wrong auth token", true,
                "unauthenticated");
  }
  welcomed_ = true;
  welcomed_at_ = Now();
  server_.OnWelcomed(*this);
  timer_.cancel();  // the handshake deadline is met; the subscribe deadline is CheckStuck's
  if (server_.log().Enabled(LogSeverity::kDebug)) {
    const std::string name = SanitizeForTerminal(CutForMessage(hello.client_name(), 64));
    server_.log().Debug("client " + std::to_string(id_) + " (" + peer_ + ") is " +
                        (name.empty() ? "unnamed" : name));
  }
  v1::Envelope welcome;
  *welcome.mutable_welcome() = server_.core().MakeWelcome(Now());
  Queue(welcome);
}

void Session::OnSubscribe(const v1::Subscribe& subscribe) {
  // Nothing is checked or compiled yet: a flood of Subscribes costs at most one check, one filter
  // compile and one report build per interval, the latest request winning.
  pending_subscribe_ = subscribe;
  if (pending_armed_) return;
  const MonoTime now = Now();
  const Nanos interval = server_.limits().subscribe_interval;
  if (!last_subscribe_ || now - *last_subscribe_ >= interval) return TryPendingSubscribe(now);
  pending_armed_ = true;
  ArmTimer(*last_subscribe_ + interval - now, &Session::OnPendingSubscribe);
}

void Session::OnPendingSubscribe() {
  pending_armed_ = false;
  if (pending_subscribe_) TryPendingSubscribe(Now());
}

void Session::TryPendingSubscribe(MonoTime now) {
  const ServerLimits& limits = server_.limits();
  const std::string& filter = pending_subscribe_->tag_filter();
  if (!filter.empty() && filter.size() <= limits.max_tag_filter_bytes &&
      !server_.filter_cache().Contains(filter) && !server_.AdmitFilterCompile(peer_key_, now)) {
    // This user has compiled its share of new filters for now: the request waits its turn.
    pending_armed_ = true;
    return ArmTimer(kCompileRetry, &Session::OnPendingSubscribe);
  }
  const v1::Subscribe request = std::move(*pending_subscribe_);
  pending_subscribe_.reset();
  last_subscribe_ = now;
  Result<Subscription> sub = Subscription::FromRequest(
      request, server_.core().period(), limits.max_tag_filter_bytes, &server_.filter_cache());
  if (!sub.ok()) {
    return Fail(v1::ERROR_CODE_INVALID_SUBSCRIPTION, sub.status().message(), false, "");
  }
  ApplySubscribe(request, std::move(*sub), now);
}

void Session::ApplySubscribe(const v1::Subscribe& subscribe, Subscription sub, MonoTime now) {
  DaemonCore& core = server_.core();
  subscription_ = std::move(sub);
  last_subscribe_ = now;
  // Reports queued for the old subscription no longer apply.
  for (auto it = outbox_.begin(); it != outbox_.end();) {
    if (it->seq == 0) {
      ++it;
      continue;
    }
    Account(it->bytes->size(), false);
    it = outbox_.erase(it);
  }
  queued_reports_ = 0;
  gap_first_ = gap_last_ = 0;
  replay_next_ = 0;
  // Events: from the requested point, else on from what this session already sent, else new ones.
  const std::uint64_t sent = events_next_ != 0 ? events_next_ - 1 : core.events().newest_seq();
  events_next_ = 0;
  reports_ = !subscribe.has_events() || !subscribe.events().only();
  if (subscribe.has_events()) {
    const std::uint64_t after =
        subscribe.events().has_after_seq() ? subscribe.events().after_seq() : sent;
    events_next_ = std::min(after, core.events().newest_seq()) + 1;
  }
  v1::Envelope ok;
  ok.mutable_notice()->set_kind(v1::NOTICE_KIND_SUBSCRIBED);
  std::string text = reports_ ? subscription_->Describe(core.period()) : "no reports";
  if (events_next_ != 0) text += "; events";
  ok.mutable_notice()->set_text(std::move(text));
  Queue(ok);
  if (closed_ || core.history().empty() || !reports_) return MaybeWrite();
  if (subscribe.has_resume_after_seq() &&
      subscribe.resume_after_seq() < core.history().newest_seq()) {
    return StartReplay(subscribe.resume_after_seq());
  }
  const std::uint64_t newest = core.history().newest_seq();
  if (subscribe.has_resume_after_seq()) {
    const std::uint64_t after = subscribe.resume_after_seq();
    if (after == newest) return;  // the client has everything: live reports follow
    // Ahead of anything this daemon produced: the client's seqs came from another instance.
    Queue(GapEnvelope(v1::GAP_REASON_RESUME_AHEAD, newest + 1, after,
                      "resume_after_seq " + std::to_string(after) +
                          " is ahead of the newest report " + std::to_string(newest) +
                          "; nothing replayed, streaming from the newest"));
  }
  // The first report carries every subscribed group at once, as neuron-monitor's first record.
  if (auto first = core.ReportAt(*subscription_, newest, ReportScope::kFirst)) {
    v1::Envelope e;
    *e.mutable_report() = std::move(*first);
    if (auto bytes = Encode(e)) Enqueue({bytes, newest});
  }
}

void Session::StartReplay(std::uint64_t after) {
  const History& history = server_.core().history();
  // REQUIRES: after < newest, so after + 1 cannot overflow.
  if (after + 1 < history.oldest_seq()) {
    Queue(GapEnvelope(v1::GAP_REASON_RETENTION, after + 1, history.oldest_seq() - 1,
                      "reports older than the retained history were not replayed"));
  }
  replay_next_ = std::max(after + 1, history.oldest_seq());
  MaybeWrite();
}

void Session::Fail(v1::ErrorCode code, const std::string& message, bool fatal,
                   const std::string& reason) {
  if (closed_) return;
  if (fatal) {
    server_.LogLimited(LogSeverity::kInfo, "fail:" + reason,
                       "client " + std::to_string(id_) + " (" + peer_ + "): " + message);
  }
  Queue(ErrorEnvelope(code, message, fatal));
  if (fatal && !closed_) {
    closing_ = true;
    close_reason_ = reason;
    timer_.cancel();
    while (DropOldestReport()) {
    }
    gap_first_ = gap_last_ = 0;
    replay_next_ = 0;
    events_next_ = 0;
    pending_subscribe_.reset();
    pending_armed_ = false;
    MaybeWrite();
  }
}

void Session::Deliver(std::shared_ptr<const std::string> frame, std::uint64_t seq) {
  if (!wants_reports() || replaying()) return;  // a replay catches up to this seq by itself
  Enqueue({std::move(frame), seq});
}

void Session::DeliverRecords(std::shared_ptr<const std::string> frames, std::uint64_t seq) {
  if (!wants_reports() || replaying()) return;
  records_started_ = true;
  Enqueue({std::move(frames), seq});
}

void Session::Send(const v1::Envelope& envelope) {
  if (closing_ || closed_) return;
  Queue(envelope);
}

void Session::Pump() {
  if ((replaying() || events_next_ != 0) && !closing_) Guarded("a replay", [&] { MaybeWrite(); });
}

void Session::Shutdown() {
  if (closed_) return;
  // The events logged so far (the daemon's "stopping") go before the goodbye, even while a write
  // is in flight.
  if (events_next_ != 0 && !closing_) FillEvents(2 * kEventLookahead);
  v1::Envelope bye;
  bye.mutable_notice()->set_kind(v1::NOTICE_KIND_SHUTDOWN);
  bye.mutable_notice()->set_text("neuron-monitord is shutting down");
  Queue(bye);
  closing_ = true;
  close_reason_ = "shutdown";
  replay_next_ = 0;
  events_next_ = 0;
  MaybeWrite();
}

void Session::Account(std::size_t bytes, bool add) {
  if (add) {
    queued_bytes_ += bytes;
  } else {
    queued_bytes_ -= std::min(bytes, queued_bytes_);
  }
  server_.AdjustQueuedBytes(bytes, add);
}

void Session::Queue(const v1::Envelope& envelope) {
  if (closed_) return;
  auto bytes = Encode(envelope);
  if (bytes == nullptr) return;
  const ServerLimits& limits = server_.limits();
  if (queued_controls_ >= limits.max_control_frames) {
    server_.LogLimited(LogSeverity::kWarn, "control_budget",
                       "client " + std::to_string(id_) + " (" + peer_ + ") left " +
                           std::to_string(queued_controls_) +
                           " notices and errors unread (limits.max_control_frames); "
                           "disconnecting it");
    return Close("control_budget");
  }
  while (queued_bytes_ + bytes->size() > limits.max_queue_bytes && DropOldestReport()) {
  }
  if (queued_bytes_ + bytes->size() > limits.max_queue_bytes) {
    server_.LogLimited(LogSeverity::kWarn, "queue_budget",
                       "client " + std::to_string(id_) + " (" + peer_ + ") has " +
                           std::to_string(queued_bytes_) +
                           " bytes unread (limits.max_queue_bytes); disconnecting it");
    return Close("queue_budget");
  }
  PushControl(std::move(bytes), false);
  MaybeWrite();
}

bool Session::OverReportBudget(std::size_t incoming) const {
  const ServerLimits& limits = server_.limits();
  return queued_reports_ >= limits.queue_depth ||
         queued_bytes_ + incoming > limits.max_queue_bytes ||
         server_.queued_bytes_total() + incoming > limits.max_queued_bytes_total;
}

// Drops the oldest queued report, to be named in a gap Notice; false when none is queued.
bool Session::DropOldestReport() {
  auto oldest =
      std::find_if(outbox_.begin(), outbox_.end(), [](const Frame& f) { return f.seq != 0; });
  if (oldest == outbox_.end()) return false;
  if (gap_first_ == 0) gap_first_ = oldest->seq;
  gap_last_ = oldest->seq;
  Account(oldest->bytes->size(), false);
  outbox_.erase(oldest);
  --queued_reports_;
  ++server_.stats().frames_dropped;
  return true;
}

void Session::Enqueue(Frame frame) {
  if (closed_ || closing_) return;
  const std::size_t size = frame.bytes->size();
  while (OverReportBudget(size) && DropOldestReport()) {
  }
  Account(size, true);
  outbox_.push_back(std::move(frame));
  ++queued_reports_;
  MaybeWrite();
}

void Session::FillFromReplay() {
  DaemonCore& core = server_.core();
  const History& history = core.history();
  while (replay_next_ != 0 && queued_reports_ < kReplayLookahead &&
         server_.queued_bytes_total() < server_.limits().max_queued_bytes_total) {
    if (history.empty()) {
      replay_next_ = 0;
      break;
    }
    if (replay_next_ < history.oldest_seq()) {
      // Evicted while this client read slowly: say so rather than skip them silently.
      const std::uint64_t first = replay_next_;
      replay_next_ = history.oldest_seq();
      PushControl(Encode(GapEnvelope(v1::GAP_REASON_RETENTION, first, replay_next_ - 1,
                                     "reports evicted from the history during the replay")),
                  false);
    }
    const std::uint64_t seq = replay_next_;
    replay_next_ = seq < history.newest_seq() ? seq + 1 : 0;
    if (auto report = core.ReportAt(*subscription_, seq, ReportScope::kReplay)) {
      v1::Envelope e;
      *e.mutable_report() = std::move(*report);
      if (auto bytes = Encode(e)) {
        Account(bytes->size(), true);
        outbox_.push_back({std::move(bytes), seq});
        ++queued_reports_;
      }
    }
  }
}

void Session::PushControl(std::shared_ptr<const std::string> bytes, bool event) {
  if (bytes == nullptr) return;
  Account(bytes->size(), true);
  outbox_.push_back({std::move(bytes), 0, event});
  ++(event ? queued_events_ : queued_controls_);
}

void Session::FillEvents(std::size_t lookahead) {
  const EventLog& log = server_.core().events();
  if (events_next_ > log.newest_seq() || queued_events_ >= lookahead) return;
  if (events_next_ < log.oldest_seq()) {
    // Expired before this client read them: say which, rather than skip them silently.
    PushControl(Encode(EventsGapEnvelope(events_next_, log.oldest_seq() - 1)), false);
    events_next_ = log.oldest_seq();
  }
  v1::Envelope e;
  for (const v1::Event* event : log.After(events_next_ - 1, lookahead - queued_events_)) {
    *e.mutable_event() = *event;
    PushControl(Encode(e), true);
    events_next_ = event->seq() + 1;
  }
}

void Session::MaybeWrite() {
  if (closed_ || !in_flight_.empty()) return;
  if (events_next_ != 0 && !closing_) FillEvents(kEventLookahead);
  if (replay_next_ != 0 && subscription_ && !closing_) FillFromReplay();
  if (gap_first_ != 0) {
    auto bytes = Encode(GapEnvelope(v1::GAP_REASON_SLOW_CLIENT, gap_first_, gap_last_,
                                    "reports dropped: the client did not read fast enough"));
    gap_first_ = gap_last_ = 0;
    if (bytes) {
      Account(bytes->size(), true);
      in_flight_.push_back({std::move(bytes), 0});
    }
  }
  std::size_t bytes = 0;
  while (!outbox_.empty() && in_flight_.size() < kMaxBatchFrames && bytes < kMaxBatchBytes) {
    bytes += outbox_.front().bytes->size();
    if (outbox_.front().seq != 0) {
      --queued_reports_;
    } else {
      --(outbox_.front().event ? queued_events_ : queued_controls_);
    }
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
  write_started_ = Now();
  stream_->AsyncWrite(
      buffers, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
        self->Guarded("a write", [&] { self->OnWrite(ec, n); });
      });
}

void Session::OnWrite(const boost::system::error_code& ec, std::size_t n) {
  if (closed_) return;
  if (ec) return Close("write_error");
  DaemonStats& stats = server_.stats();
  stats.frames_sent += in_flight_.size();
  stats.bytes_sent += n;
  last_send_ = Now();
  for (const Frame& f : in_flight_) Account(f.bytes->size(), false);
  in_flight_.clear();
  MaybeWrite();
}

void Session::CheckStuck(MonoTime now) {
  if (closed_) return;
  const ServerLimits& limits = server_.limits();
  if (limits.idle_timeout > Nanos(0) && !closing_ && now - last_receive_ > limits.idle_timeout) {
    return Fail(v1::ERROR_CODE_IDLE_TIMEOUT, "nothing received within the idle timeout", true,
                "idle_timeout");
  }
  // Welcomed, but never subscribed (a Subscribe still waiting its turn counts as one).
  if (limits.subscribe_timeout > Nanos(0) && welcomed_ && !closing_ && !subscription_ &&
      !pending_subscribe_ && now - welcomed_at_ > limits.subscribe_timeout) {
    return Fail(v1::ERROR_CODE_IDLE_TIMEOUT, "no Subscribe within the subscribe deadline", true,
                "subscribe_timeout");
  }
  if (!in_flight_.empty() && now - write_started_ > limits.write_timeout) {
    server_.LogLimited(
        LogSeverity::kWarn, "write_timeout",
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
  timer_.cancel();
  stream_->Close();
  Account(queued_bytes_, false);
  outbox_.clear();
  // in_flight_ stays: the aborted write's buffers live until its handler runs (and returns).
  server_.Remove(*this, reason);
}

}  // namespace neuronmon::daemon
