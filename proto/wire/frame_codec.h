// Frame codec for the neuronmon stream: each frame is a varint32 length followed by that many
// bytes of one serialized neuronmon.v1.Envelope (protobuf "delimited" framing, so any language's
// parseDelimitedFrom reads it). See proto/FORMAT.md. No I/O: callers move bytes, this code only
// turns envelopes into bytes and bytes into envelopes, with every length bounded before anything
// is allocated. Not thread-safe; one FrameDecoder per connection direction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/status.h"

namespace neuronmon::wire {

inline constexpr std::size_t kDefaultInboundMaxFrame = 64 * 1024;          // client -> daemon
inline constexpr std::size_t kDefaultOutboundMaxFrame = 16 * 1024 * 1024;  // daemon -> client
inline constexpr std::size_t kMaxVarintBytes = 5;
// Fields a client accepts in one frame (counted as WithinFieldBudget does): the largest real report
// (every group of a 64-device trn2 UltraServer, 146 KB, ~450 KB parsed) holds 6,791
// (tests/daemon/frame_budget_test.cc), so a legitimate daemon has a 29-fold margin, and a hostile
// one can make one parsed frame cost at most ~25 MB in objects (200,000 empty sub-messages) or
// 64 MB in a packed array (16 MiB of one-byte varints, 4 bytes each) — not gigabytes.
inline constexpr std::size_t kDefaultMaxFields = 200'000;

// Whether `bytes`, read as a serialized `type`, holds at most `max_fields` fields that cost an
// object each once parsed — length-delimited ones (messages, strings, packed arrays) and unknown
// ones of any wire type, which the parser keeps aside one entry each — counted at every depth,
// nesting at most 64 deep, and is well-formed enough to walk. Groups (a proto2 encoding no v1
// message uses) count as malformed. Pure.
bool WithinFieldBudget(std::string_view bytes, const google::protobuf::Descriptor& type,
                       std::size_t max_fields);

// Appends the frame for `envelope` to `out`. Fails (kInvalidArgument) for an empty envelope, which
// would encode as a zero-length frame, and (kOutOfRange) when the message is over `max_frame`.
Status AppendFrame(const v1::Envelope& envelope, std::string& out,
                   std::size_t max_frame = kDefaultOutboundMaxFrame);

// Same, returning a new string. Errors as AppendFrame.
Result<std::string> EncodeFrame(const v1::Envelope& envelope,
                                std::size_t max_frame = kDefaultOutboundMaxFrame);

enum class DecodeError {
  kNone,
  kFrameTooLarge,  // declared length over the decoder's maximum
  kVarintTooLong,  // length prefix longer than 5 bytes or over 32 bits
  kZeroLength,     // a frame must hold a non-empty Envelope
  kUnparsable,     // the bytes are not an Envelope
  kTooComplex,     // more messages, strings and unknown fields than the decoder allows, or groups
};

const char* DecodeErrorName(DecodeError error);

// Incremental decoder, fed arbitrary byte chunks. After an error it stays in the error state: the
// stream cannot be resynchronised, so the connection must be closed.
class FrameDecoder {
 public:
  enum class Outcome { kNeedMore, kFrame, kError };

  // `max_fields` > 0 bounds the fields a frame may hold that cost an object each once parsed
  // (sub-messages, strings, unknown fields: see WithinFieldBudget), counted on the wire before it
  // is parsed, so a frame of empty sub-messages (2 bytes each) cannot grow ~100-fold in memory —
  // 16 MiB into gigabytes. Clients set it (kDefaultMaxFields); 0 means no bound.
  explicit FrameDecoder(std::size_t max_frame = kDefaultInboundMaxFrame, std::size_t max_fields = 0)
      : max_frame_(max_frame), max_fields_(max_fields) {}

  // Consumes bytes from the front of `input` until one frame is complete (kFrame: `envelope` holds
  // it; the rest of `input` is untouched), the input runs out (kNeedMore: all of it was consumed
  // and buffered), or the stream is invalid (kError: see error()).
  Outcome Decode(std::string_view& input, v1::Envelope& envelope);

  DecodeError error() const { return error_; }
  // A sentence for logs and Error frames, e.g. "frame of 70000 bytes exceeds the 65536-byte limit".
  const std::string& error_message() const { return error_message_; }
  // Bytes of a partial frame held inside the decoder (never more than 5 + max_frame).
  std::size_t buffered_bytes() const { return header_size_ + body_.size(); }

 private:
  Outcome Fail(DecodeError error, std::string message);

  std::size_t max_frame_;
  std::size_t max_fields_;
  unsigned char header_[kMaxVarintBytes] = {};
  std::size_t header_size_ = 0;
  bool have_length_ = false;
  std::size_t length_ = 0;
  std::string body_;
  DecodeError error_ = DecodeError::kNone;
  std::string error_message_;
};

}  // namespace neuronmon::wire
