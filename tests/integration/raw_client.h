// Test helper: a blocking protocol client over a plain socket, able to send anything (garbage,
// oversized lengths, out-of-order messages) and to read frames with a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::testing {

class RawClient {
 public:
  // Connects to a unix socket; `rcvbuf` > 0 shrinks the receive buffer (a slow reader).
  explicit RawClient(const std::string& path, int rcvbuf = 0);
  explicit RawClient(int connected_fd);
  // Connects to TCP 127.0.0.1:`port`.
  struct Tcp {
    std::uint16_t port;
  };
  explicit RawClient(Tcp tcp);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  void SendBytes(std::string_view bytes);
  void Send(const v1::Envelope& e);
  void Hello(std::uint32_t version = 1, const std::string& token = "");
  void Subscribe(const v1::Subscribe& s);
  // The next frame within `timeout`; nullopt on timeout or when the connection closed.
  std::optional<v1::Envelope> Read(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Reads until a frame with the given body arrives (skipping others).
  std::optional<v1::Envelope> ReadUntil(
      v1::Envelope::BodyCase body, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // True when the daemon closed the connection within `timeout` (after draining frames).
  bool ClosedWithin(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  wire::FrameDecoder decoder_{wire::kDefaultOutboundMaxFrame};
  std::string pending_;
  bool eof_ = false;
};

}  // namespace neuronmon::testing
