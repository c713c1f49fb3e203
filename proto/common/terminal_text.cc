#include "proto/common/terminal_text.h"

#include <algorithm>
#include <cstdint>

#include "proto/common/utf8.h"

namespace neuronmon {
namespace {

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
      out += kReplacementCharacter;
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
