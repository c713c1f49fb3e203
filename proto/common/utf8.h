// UTF-8 decoding, the one place every output that must emit valid UTF-8 (JSON, Prometheus labels,
// text for a terminal) asks what a byte sequence is. Validity is Go's (utf8 acceptRanges): no
// overlong forms, no surrogates, nothing above U+10FFFF — exactly the bytes Go would replace with
// U+FFFD are invalid. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace neuronmon {

// The length (1 to 4) of the valid UTF-8 sequence starting at s[i], or 0 when it is not one.
// REQUIRES: i < s.size().
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i);

// As Utf8SequenceLength, and the code point it encodes in `*code_point` when valid.
std::size_t DecodeUtf8(std::string_view s, std::size_t i, char32_t* code_point);

// The replacement character, U+FFFD, in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

}  // namespace neuronmon
