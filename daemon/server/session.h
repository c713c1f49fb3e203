// Session: one client connection to the stream server. It reads and validates frames (Hello, then
// Subscribe / Heartbeat), answers with Welcome / Error / Notice, and writes reports with at most
// one write in flight. Reports wait in a bounded queue of shared, already-encoded frames; when a
// slow client's queue is full the oldest report is dropped and a gap Notice (seq range, reason)
// takes its place, and a write stuck past the write timeout disconnects the client. Nothing a
// client does — or fails to do — blocks the sampler or any other client. Lifetime: owned by
// shared_ptrs held by its pending async operations and by the server's set of sessions; Close()
// releases the server's reference. All methods run on the io_context thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/stats.h"
#include "daemon/core/subscription.h"
#include "daemon/server/asio.h"
#include "neuronmon/v1/envelope.pb.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::daemon {

class StreamServer;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(StreamServer& server, GenericSocket socket, std::uint64_t id, Transport transport,
          std::string peer, bool requires_token);

  // Starts the handshake deadline and the read loop.
  void Start();
  // Sends `error` and closes once it is written (too many clients, before Start).
  void Reject(v1::ErrorCode code, const std::string& message);

  // Offers the live report frame for `seq` (shared with other sessions).
  void Deliver(std::shared_ptr<const std::string> frame, std::uint64_t seq);
  // Sends a control message (Notice, Heartbeat); `fatal` closes after it is written.
  void Send(const v1::Envelope& envelope);
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
  bool replaying() const { return replay_next_ != 0; }
  const Subscription& subscription() const { return *subscription_; }
  std::uint64_t id() const { return id_; }
  Transport transport() const { return transport_; }
  const std::string& peer() const { return peer_; }
  MonoTime last_send() const { return last_send_; }

 private:
  struct Frame {
    std::shared_ptr<const std::string> bytes;
    std::uint64_t seq = 0;  // 0: a control frame, never dropped
  };

  void ReadSome();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  void Handle(const v1::Envelope& envelope);
  void OnHello(const v1::Hello& hello);
  void OnSubscribe(const v1::Subscribe& subscribe);
  void Fail(v1::ErrorCode code, const std::string& message, bool fatal, const std::string& reason);
  void Enqueue(Frame frame);
  void FillFromReplay();
  void MaybeWrite();
  void OnWrite(const boost::system::error_code& ec, std::size_t n);
  void Queue(const v1::Envelope& envelope);

  StreamServer& server_;
  GenericSocket socket_;
  const std::uint64_t id_;
  const Transport transport_;
  const std::string peer_;
  const bool requires_token_;
  asio::steady_timer handshake_timer_;
  wire::FrameDecoder decoder_;
  std::array<char, 16 * 1024> read_buffer_;
  bool welcomed_ = false;
  bool closing_ = false;  // no more input handled; close when the outbox drains
  bool closed_ = false;
  std::string close_reason_;
  std::optional<Subscription> subscription_;
  std::deque<Frame> outbox_;
  std::size_t queued_reports_ = 0;
  std::vector<Frame> in_flight_;
  std::uint64_t gap_first_ = 0;  // pending gap Notice (0: none)
  std::uint64_t gap_last_ = 0;
  std::uint64_t replay_next_ = 0;  // next seq to replay from history (0: not replaying)
  MonoTime last_send_;
  MonoTime last_receive_;
  MonoTime write_started_;
};

}  // namespace neuronmon::daemon
