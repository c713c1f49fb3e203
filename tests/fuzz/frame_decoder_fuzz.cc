// Fuzzes FrameDecoder with arbitrary bytes fed in arbitrary chunk sizes. The first input byte picks
// the chunk size and the decoder's maximum frame size, so splits and limits are explored too.
// Invariants: no crash or sanitizer report, the decoder never buffers more than 5 + max bytes, and
// every frame it returns re-encodes and decodes to an equal message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/wire/frame_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using neuronmon::wire::FrameDecoder;
  if (size == 0) return 0;
  const std::size_t chunk = 1 + (data[0] & 0x3F);
  const std::size_t max_frame = (data[0] & 0x40) ? 64 : 64 * 1024;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  FrameDecoder decoder(max_frame);
  while (!input.empty()) {
    std::string_view piece = input.substr(0, chunk);
    input.remove_prefix(piece.size());
    for (;;) {
      neuronmon::v1::Envelope envelope;
      const FrameDecoder::Outcome outcome = decoder.Decode(piece, envelope);
      if (decoder.buffered_bytes() > 5 + max_frame) std::abort();
      if (outcome == FrameDecoder::Outcome::kError) return 0;
      if (outcome == FrameDecoder::Outcome::kNeedMore) break;
      if (envelope.ByteSizeLong() == 0) continue;  // only unknown fields survived
      auto frame = neuronmon::wire::EncodeFrame(envelope);
      if (!frame.ok()) std::abort();
      FrameDecoder again(neuronmon::wire::kDefaultOutboundMaxFrame);
      std::string_view bytes(*frame);
      neuronmon::v1::Envelope copy;
      if (again.Decode(bytes, copy) != FrameDecoder::Outcome::kFrame) std::abort();
      if (copy.SerializeAsString() != envelope.SerializeAsString()) std::abort();
    }
  }
  return 0;
}
