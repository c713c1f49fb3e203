// Session: one client connection to the stream server. It reads and validates frames (Hello, then
// Subscribe / Heartbeat), answers with Welcome / Error / Notice, and writes reports with at most
// one write in flight. Everything queued for the client — reports, and the Notices, Errors and
// acknowledgements it has not read — counts against its budget (ServerLimits): when a slow
// client's reports exceed queue_depth or max_queue_bytes, or all clients' queues together exceed
// max_queued_bytes_total, the oldest report is dropped and a gap Notice (seq range, reason) takes
// its place; a client with more than max_control_frames control frames unread is disconnected,
// and so is one whose write stays stuck past the write timeout. Subscribes are applied at most once
// per subscribe_interval (the latest wins), and a new tag filter is compiled only within its user's
// budget (SessionContext::AdmitFilterCompile), so flooding them costs at most one check, one
// compile and one report build per interval. Deadlines: the Hello within handshake_timeout, the
// first Subscribe within subscribe_timeout (checked by CheckStuck). Nothing a client does — or
// fails to do — blocks the sampler or any other client, and no exception escapes a handler: a
// session whose handler throws is closed and logged. Lifetime: owned by shared_ptrs held by its
// pending async operations and by the server's set of sessions; Close() releases the server's
// reference. All methods run on the io_context thread.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/report/subscription.h"
#include "daemon/core/stats.h"
#include "daemon/server/asio.h"
#include "daemon/server/byte_stream.h"
#include "neuronmon/v1/envelope.pb.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::daemon {

class SessionContext;

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `peer_key` groups connections for the per-user limit ("uid 1000", "tcp 127.0.0.1"); empty
  // for connections that are not limited (the in-process embedding).
  Session(SessionContext& server, std::unique_ptr<ByteStream> stream, std::uint64_t id,
          Transport transport, std::string peer, std::string peer_key, bool requires_token);

  // Starts the handshake deadline, the TLS handshake (a TLS stream; a client certificate it
  // verifies stands in for the token) and the read loop.
  void Start();
  // Sends `error` and closes once it is written (too many clients, before Start).
  void Reject(v1::ErrorCode code, const std::string& message, const std::string& reason);

  // Offers the live report frame for `seq` (shared with other sessions).
  void Deliver(std::shared_ptr<const std::string> frame, std::uint64_t seq);
  // Offers the snapshot records for `seq` (Subscribe.snapshots); queued and dropped as reports are.
  void DeliverRecords(std::shared_ptr<const std::string> frames, std::uint64_t seq);
  // Sends a control message (Notice, Heartbeat).
  void Send(const v1::Envelope& envelope);
  // Continues a replay held back by the all-clients byte budget, and sends the events logged since
  // the last call (Subscribe.events).
  void Pump();
  // The daemon is stopping: a shutdown Notice, then close once written.
  void Shutdown();
  // Closes now, counting the disconnect under `reason`.
  void Close(const std::string& reason);
  // Disconnects when a write has been in flight for longer than the write timeout, or when the
  // client has sent nothing for the idle timeout (when one is configured). Called from the
  // server's periodic sweep rather than a timer per write: arming a timer for each of 1,000
  // clients' writes every tick costs more than the writes themselves.
  void CheckStuck(MonoTime now);

  bool subscribed() const { return subscription_.has_value() && !closing_; }
  bool welcomed() const { return welcomed_; }
  bool replaying() const { return replay_next_ != 0; }
  // Subscribed to reports (not to events only).
  bool wants_reports() const { return subscribed() && reports_; }
  // Subscribed to events (Subscribe.events): no health or incident notices then.
  bool wants_events() const { return events_next_ != 0 && !closing_; }
  const Subscription& subscription() const { return *subscription_; }
  // Whether this client got its first snapshot records (DaemonCore::RecordFrames' full form).
  bool records_started() const { return records_started_; }
  std::uint64_t id() const { return id_; }
  Transport transport() const { return transport_; }
  const std::string& peer() const { return peer_; }
  const std::string& peer_key() const { return peer_key_; }
  MonoTime last_send() const { return last_send_; }
  // Bytes of frames queued or being written.
  std::size_t queued_bytes() const { return queued_bytes_; }

 private:
  struct Frame {
    std::shared_ptr<const std::string> bytes;
    std::uint64_t seq = 0;  // 0: a control frame or an event, never dropped
    bool event = false;     // an event (counted in queued_events_, not queued_controls_)
  };

  void OnTlsHandshake(const boost::system::error_code& ec);
  void ReadSome();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  void Handle(const v1::Envelope& envelope);
  void OnHello(const v1::Hello& hello);
  void OnSubscribe(const v1::Subscribe& subscribe);
  void OnJobMark(const v1::JobMark& request);
  void TryPendingSubscribe(MonoTime now);
  void ApplySubscribe(const v1::Subscribe& subscribe, Subscription sub, MonoTime now);
  void StartReplay(std::uint64_t after);
  void ArmTimer(Nanos after, void (Session::*on_expiry)());
  void OnHandshakeDeadline();
  void OnPendingSubscribe();
  void Fail(v1::ErrorCode code, const std::string& message, bool fatal, const std::string& reason);
  void Enqueue(Frame frame);
  bool DropOldestReport();
  bool OverReportBudget(std::size_t incoming) const;
  void FillFromReplay();
  // Queues the next events while fewer than `lookahead` are queued.
  void FillEvents(std::size_t lookahead);
  void PushControl(std::shared_ptr<const std::string> bytes, bool event);
  void MaybeWrite();
  void OnWrite(const boost::system::error_code& ec, std::size_t n);
  void Queue(const v1::Envelope& envelope);
  void Account(std::size_t bytes, bool add);
  template <typename Fn>
  void Guarded(const char* what, Fn&& fn);

  SessionContext& server_;  // the StreamServer that owns this session
  std::unique_ptr<ByteStream> stream_;
  const std::uint64_t id_;
  const Transport transport_;
  const std::string peer_;
  const std::string peer_key_;
  bool requires_token_;  // until a verified client certificate says who it is
  // One deadline at a time: the Hello, then a Subscribe waiting its turn.
  asio::steady_timer timer_;
  wire::FrameDecoder decoder_;
  std::array<char, 16 * 1024> read_buffer_;
  bool stream_ready_ = false;  // the TLS handshake (if any) is done
  bool welcomed_ = false;
  bool closing_ = false;  // no more input handled; close when the outbox drains
  bool closed_ = false;
  std::string close_reason_;
  std::optional<Subscription> subscription_;
  // The latest Subscribe not yet applied, waiting for subscribe_interval to pass (or for its
  // user's tag-filter compile budget); `timer_` is armed for it while `pending_armed_`.
  std::optional<v1::Subscribe> pending_subscribe_;
  bool pending_armed_ = false;
  std::optional<MonoTime> last_subscribe_;  // when a Subscribe was last handled
  std::deque<Frame> outbox_;
  std::size_t queued_reports_ = 0;
  std::size_t queued_controls_ = 0;
  std::size_t queued_bytes_ = 0;  // outbox and in flight
  std::vector<Frame> in_flight_;
  std::uint64_t gap_first_ = 0;  // pending gap Notice (0: none)
  std::uint64_t gap_last_ = 0;
  std::uint64_t replay_next_ = 0;  // next seq to replay from history (0: not replaying)
  std::uint64_t events_next_ = 0;  // next event seq to send (0: not subscribed to events)
  std::size_t queued_events_ = 0;
  bool reports_ = true;  // false: Subscribe.events.only
  bool records_started_ = false;
  MonoTime last_send_;
  MonoTime last_receive_;
  MonoTime welcomed_at_;
  MonoTime write_started_;
};

}  // namespace neuronmon::daemon
