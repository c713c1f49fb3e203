// Small text helpers every folder shares: trimming and ASCII case. HTTP's tokens, media types and
// parameter names compare case-insensitively in ASCII only (RFC 9110 §5.6.2), and so does
// everything else here: nothing consults the C locale, so a client that calls setlocale() reads
// the same bytes the same way as the daemon. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace neuronmon {

// HTTP's optional whitespace (RFC 9110 §5.6.3, OWS): spaces and horizontal tabs.
inline constexpr std::string_view kOptionalWhitespace = " \t";
// Spaces, tabs and the '\r' a file written on Windows leaves at the end of each line.
inline constexpr std::string_view kLineBlanks = " \t\r";

// `text` without its leading and trailing characters that are in `chars` (by default spaces and
// tabs); a view into `text`, empty when every character is one of `chars`.
std::string_view Trim(std::string_view text, std::string_view chars = kOptionalWhitespace);

// `text` with 'A'..'Z' turned into 'a'..'z'; every other byte as it is.
std::string ToLowerAscii(std::string_view text);

// Whether `a` and `b` are equal but for the case of ASCII letters.
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

// `value` with `digits` digits after the point ("3.14", "42"), as printf's "%.*f" writes it in the
// C locale — whatever locale the program set.
std::string FormatFixed(double value, int digits);

}  // namespace neuronmon
