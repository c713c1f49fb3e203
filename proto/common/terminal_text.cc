#include "proto/common/terminal_text.h"

#include <algorithm>
#include <cstdint>

namespace neuronmon {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at `s[i]` and its code point, or 0 when invalid.
std::size_t DecodeUtf8(std::string_view s, std::size_t i, char32_t* cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  std::size_t len = 0;
  char32_t min = 0;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, *cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, *cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, *cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (byte(i + k) & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

bool IsDropped(char32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// Where the escape sequence starting with ESC at `s[i]` ends (one past its last byte).
std::size_t SkipEscape(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size()) return s.size();
  const char kind = s[i + 1];
  std::size_t k = i + 2;
  if (kind == '[') {  // CSI: parameter and intermediate bytes, then one final byte 0x40..0x7E
    while (k < s.size() && (s[k] < 0x40 || s[k] > 0x7E) && s[k] >= 0x20) ++k;
    return k < s.size() && s[k] >= 0x40 ? k + 1 : k;
  }
  if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
    // A string sequence ends at BEL or ST (ESC \); an unterminated one swallows the rest.
    for (; k < s.size(); ++k) {
      if (s[k] == '\a') return k + 1;
      if (s[k] == '\x1b') return k + 1 < s.size() && s[k + 1] == '\\' ? k + 2 : k;
    }
    return s.size();
  }
  // Two-byte sequences (ESC c, ESC 7, ...) and ESC with intermediates (ESC ( B).
  while (k - 1 < s.size() && s[k - 1] >= 0x20 && s[k - 1] <= 0x2F) ++k;
  return std::min(k, s.size());
}

}  // namespace

bool IsTerminalSafe(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0 || IsDropped(cp)) return false;
    i += len;
  }
  return true;
}

std::string SanitizeForTerminal(std::string_view text) {
  if (IsTerminalSafe(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      i = SkipEscape(text, i);
      continue;
    }
    char32_t cp = 0;
    const std::size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (cp == '\t' || cp == '\n' || cp == '\r') {
      out += ' ';
    } else if (!IsDropped(cp)) {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace neuronmon
