#include "proto/wire/frame_codec.h"

#include <algorithm>

namespace neuronmon::wire {
namespace {

void AppendVarint32(std::uint32_t value, std::string& out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

}  // namespace

Status AppendFrame(const v1::Envelope& envelope, std::string& out, std::size_t max_frame) {
  const std::size_t size = envelope.ByteSizeLong();
  if (size == 0) return Status::InvalidArgument("refusing to encode an empty Envelope");
  if (size > max_frame) {
    return Status::OutOfRange("frame of " + std::to_string(size) + " bytes exceeds the " +
                              std::to_string(max_frame) + "-byte limit");
  }
  AppendVarint32(static_cast<std::uint32_t>(size), out);
  const std::size_t offset = out.size();
  out.resize(offset + size);
  if (!envelope.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(&out[offset]))) {
    out.resize(offset);
    return Status::Internal("protobuf serialization failed");
  }
  return Status::Ok();
}

Result<std::string> EncodeFrame(const v1::Envelope& envelope, std::size_t max_frame) {
  std::string out;
  Status status = AppendFrame(envelope, out, max_frame);
  if (!status.ok()) return status;
  return out;
}

const char* DecodeErrorName(DecodeError error) {
  switch (error) {
    case DecodeError::kNone:
      return "none";
    case DecodeError::kFrameTooLarge:
      return "frame too large";
    case DecodeError::kVarintTooLong:
      return "malformed length prefix";
    case DecodeError::kZeroLength:
      return "zero-length frame";
    case DecodeError::kUnparsable:
      return "unparsable frame";
  }
  return "unknown";
}

FrameDecoder::Outcome FrameDecoder::Fail(DecodeError error, std::string message) {
  error_ = error;
  error_message_ = std::move(message);
  body_.clear();
  body_.shrink_to_fit();
  return Outcome::kError;
}

FrameDecoder::Outcome FrameDecoder::Decode(std::string_view& input, v1::Envelope& envelope) {
  if (error_ != DecodeError::kNone) return Outcome::kError;
  while (!have_length_) {
    if (input.empty()) return Outcome::kNeedMore;
    const auto byte = static_cast<unsigned char>(input.front());
    input.remove_prefix(1);
    header_[header_size_++] = byte;
    if (byte & 0x80) {
      if (header_size_ == kMaxVarintBytes) {
        return Fail(DecodeError::kVarintTooLong, "length prefix longer than 5 bytes");
      }
      continue;
    }
    if (header_size_ == kMaxVarintBytes && byte > 0x0F) {
      return Fail(DecodeError::kVarintTooLong, "length prefix does not fit in 32 bits");
    }
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < header_size_; ++i) {
      length |= static_cast<std::uint64_t>(header_[i] & 0x7F) << (7 * i);
    }
    if (length == 0) return Fail(DecodeError::kZeroLength, "zero-length frame");
    if (length > max_frame_) {
      return Fail(DecodeError::kFrameTooLarge, "frame of " + std::to_string(length) +
                                                   " bytes exceeds the " +
                                                   std::to_string(max_frame_) + "-byte limit");
    }
    length_ = static_cast<std::size_t>(length);
    have_length_ = true;
  }

  std::string_view body;
  if (body_.empty() && input.size() >= length_) {
    body = input.substr(0, length_);  // whole frame in this chunk: parse in place
    input.remove_prefix(length_);
  } else {
    if (body_.empty()) body_.reserve(length_);
    const std::size_t take = std::min(length_ - body_.size(), input.size());
    body_.append(input.substr(0, take));
    input.remove_prefix(take);
    if (body_.size() < length_) return Outcome::kNeedMore;
    body = body_;
  }
  const bool parsed = envelope.ParseFromArray(body.data(), static_cast<int>(body.size()));
  header_size_ = 0;
  have_length_ = false;
  body_.clear();
  if (!parsed) {
    return Fail(DecodeError::kUnparsable,
                "frame of " + std::to_string(length_) + " bytes is not a neuronmon.v1.Envelope");
  }
  // An Envelope whose body is a message newer than this build parses with BODY_NOT_SET; it is
  // returned so the caller can skip it (forward compatibility).
  return Outcome::kFrame;
}

}  // namespace neuronmon::wire
