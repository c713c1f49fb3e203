#include "proto/wire/frame_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>

namespace neuronmon::wire {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;

constexpr int kMaxDepth = 64;

// Whether the parser stores a field arriving as `wire_type` in `field` itself (packed and unpacked
// repeated scalars both do), rather than keeping it aside as an unknown field.
bool Fits(const FieldDescriptor& field, WireFormatLite::WireType wire_type) {
  if (wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
    return field.type() == FieldDescriptor::TYPE_MESSAGE ||
           field.type() == FieldDescriptor::TYPE_STRING ||
           field.type() == FieldDescriptor::TYPE_BYTES || field.is_packable();
  }
  return WireFormatLite::WireTypeForFieldType(
             static_cast<WireFormatLite::FieldType>(field.type())) == wire_type;
}

// Counts into `*left` (false once it would go below zero) every field that costs an object of its
// own once parsed — each length-delimited one (message, string, packed array) and each unknown
// one, whatever its wire type, since the parser keeps those aside one entry each — descending into
// those the descriptor says are messages. Groups (a proto2 encoding no v1 message uses; parsed as
// unknown fields, each a nested set) make the message malformed.
bool Walk(google::protobuf::io::CodedInputStream& in, const google::protobuf::Descriptor& type,
          std::size_t* left, int depth) {
  if (depth > kMaxDepth) return false;
  for (;;) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) return in.ConsumedEntireMessage();
    const WireFormatLite::WireType wire_type = WireFormatLite::GetTagWireType(tag);
    if (wire_type == WireFormatLite::WIRETYPE_START_GROUP ||
        wire_type == WireFormatLite::WIRETYPE_END_GROUP) {
      return false;
    }
    const FieldDescriptor* field = type.FindFieldByNumber(WireFormatLite::GetTagFieldNumber(tag));
    const bool known = field != nullptr && Fits(*field, wire_type);
    if (!known || wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (*left == 0) return false;
      --*left;
    }
    if (wire_type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length)) return false;
    if (!known || field->type() != FieldDescriptor::TYPE_MESSAGE) {
      if (!in.Skip(static_cast<int>(length))) return false;
      continue;
    }
    const auto limit = in.PushLimit(static_cast<int>(length));
    if (!Walk(in, *field->message_type(), left, depth + 1)) return false;
    in.PopLimit(limit);
  }
}

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

bool WithinFieldBudget(std::string_view bytes, const google::protobuf::Descriptor& type,
                       std::size_t max_fields) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::size_t left = max_fields;
  return Walk(in, type, &left, 0);
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
    case DecodeError::kTooComplex:
      return "frame too complex";
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
  if (max_fields_ > 0 && !WithinFieldBudget(body, *v1::Envelope::descriptor(), max_fields_)) {
    return Fail(DecodeError::kTooComplex,
                "frame of " + std::to_string(length_) + " bytes holds more than " +
                    std::to_string(max_fields_) +
                    " messages, strings and unknown fields, or is malformed");
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
