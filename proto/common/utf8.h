// UTF-8 decoding, the one place every output that must emit valid UTF-8 (JSON, Prometheus labels,
// text for a terminal) asks what a byte sequence is. Validity is Go's (utf8 acceptRanges): no
// overlong forms, no surrogates, nothing above U+10FFFF — exactly the bytes Go would replace with
// U+FFFD are invalid. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace neuronmon {

// The length (1 to 4) of the valid UTF-8 sequence starting at s[i], or 0 when it is not one, and
// the code point it encodes in `*code_point` when valid. REQUIRES: i < s.size(). (Inline: the
// terminal canvas and the JSON and exposition writers call it per character.)
inline std::size_t DecodeUtf8(std::string_view s, std::size_t i, char32_t* code_point) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = at(i);
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  std::size_t length = 0;
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, cp = lead & 0x0F;
    low = lead == 0xE0 ? 0xA0 : low;    // no overlong forms
    high = lead == 0xED ? 0x9F : high;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, cp = lead & 0x07;
    low = lead == 0xF0 ? 0x90 : low;
    high = lead == 0xF4 ? 0x8F : high;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > s.size() || at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (at(i + k) & 0x3F);
  }
  *code_point = cp;
  return length;
}

// As DecodeUtf8, without the code point.
inline std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  char32_t ignored = 0;
  return DecodeUtf8(s, i, &ignored);
}

// The replacement character, U+FFFD, in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

}  // namespace neuronmon
