#include "tui/canvas.h"

#include <algorithm>
#include <cstring>

#include "proto/common/utf8.h"

namespace neuronmon::tui {
namespace {

// The length of the UTF-8 sequence at s[i], 0 when invalid; ASCII (most of every frame) inline.
std::size_t SequenceAt(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) < 0x80 ? 1 : Utf8SequenceLength(s, i);
}

// Bytes of the character at s[i]: an invalid byte is one character (one column) of its own.
std::size_t Step(std::string_view s, std::size_t i) {
  return std::max<std::size_t>(1, SequenceAt(s, i));
}

}  // namespace

int TextWidth(std::string_view utf8) {
  int n = 0;
  for (std::size_t i = 0; i < utf8.size(); i += Step(utf8, i)) ++n;
  return n;
}

std::vector<std::string> WrapWords(const std::string& text, int first, int rest) {
  std::vector<std::string> lines;
  std::string line;
  int width = 0, limit = std::max(1, first);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, end - i);
    const int w = TextWidth(word);
    if (width > 0 && width + 1 + w > limit) {
      lines.push_back(line);
      line.clear();
      width = 0;
      limit = std::max(1, rest);
    }
    if (width > 0) line += ' ', ++width;
    line += word;
    width += w;
    i = end + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string_view TakeColumns(std::string_view utf8, int columns) {
  std::size_t i = 0;
  for (int c = 0; c < columns && i < utf8.size(); ++c) {
    i += Step(utf8, i);
  }
  return utf8.substr(0, std::min(i, utf8.size()));
}

std::string FoldToAscii(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) {
    char32_t cp = 0;
    const std::size_t n = DecodeUtf8(utf8, i, &cp);
    i += std::max<std::size_t>(1, n);
    if (n == 1) {
      out += static_cast<char>(cp);
      continue;
    }
    char c = '?';  // anything else, and malformed bytes (one '?' each)
    if (cp == 0x2013 || cp == 0x2014 || cp == 0x2212 || cp == 0x2500 || cp == 0x2015) {
      c = '-';
    } else if (cp == 0x2018 || cp == 0x2019) {
      c = '\'';
    } else if (cp == 0x201c || cp == 0x201d) {
      c = '"';
    } else if (cp == 0x2022 || cp == 0x25cf || cp == 0x25cb || cp == 0x00b7) {
      c = '*';
    } else if (cp == 0x25c0 || cp == 0x25c4 || cp == 0x2190 || cp == 0x2264) {
      c = '<';
    } else if (cp == 0x25b6 || cp == 0x25ba || cp == 0x2192 || cp == 0x2265) {
      c = '>';
    } else if (cp == 0x25bc || cp == 0x2193) {
      c = 'v';
    } else if (cp == 0x25b2 || cp == 0x2191) {
      c = '^';
    } else if (cp == 0x2502 || cp == 0x2503) {
      c = '|';
    } else if (cp == 0x2026) {
      c = '.';
    } else if (cp == 0x00b5 || cp == 0x03bc) {
      c = 'u';
    } else if (cp == 0x00d7) {
      c = 'x';
    } else if (cp == 0x00a0) {
      c = ' ';
    } else if (cp >= 0x2580 && cp <= 0x259f) {
      c = '#';  // block elements
    } else if (cp >= 0x2800 && cp <= 0x28ff) {
      c = cp == 0x2800 ? ' ' : ':';  // braille
    } else if (cp >= 0x250c && cp <= 0x257f) {
      c = '+';  // box corners and joins
    }
    out += c;
  }
  return out;
}

char RoleLetter(Role role) {
  static constexpr char kLetters[] = ".TSHdvurfxAtheWCgB";
  static_assert(sizeof kLetters - 1 == static_cast<int>(Role::kCount));
  return kLetters[static_cast<int>(role)];
}

TextCanvas::TextCanvas(int width, int height)
    : width_(std::max(0, width)),
      height_(std::max(0, height)),
      cells_(static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_)) {}

void TextCanvas::Clear() { std::fill(cells_.begin(), cells_.end(), Cell{}); }

void TextCanvas::Put(int x, int y, std::string_view text, Role role) {
  if (y < 0 || y >= height_) return;
  std::size_t i = 0;
  for (int col = x; i < text.size() && col < width_; ++col) {
    const std::size_t n = SequenceAt(text, i);
    if (col >= 0) {
      Cell& cell = cells_[static_cast<std::size_t>(y * width_ + col)];
      std::memset(cell.glyph, 0, sizeof cell.glyph);
      if (n == 0) {
        cell.glyph[0] = '?';  // a byte that is not UTF-8 never reaches the terminal
      } else {
        std::memcpy(cell.glyph, text.data() + i, n);
      }
      if (static_cast<unsigned char>(cell.glyph[0]) < 0x20) cell.glyph[0] = ' ';
      cell.role = role;
    }
    i += std::max<std::size_t>(1, n);
  }
}

void TextCanvas::Paint(int x, int y, int count, Role role) {
  if (y < 0 || y >= height_) return;
  for (int col = std::max(0, x); col < std::min(width_, x + count); ++col) {
    cells_[static_cast<std::size_t>(y * width_ + col)].role = role;
  }
}

std::string TextCanvas::Text() const {
  std::string out;
  for (int y = 0; y < height_; ++y) {
    std::string line;
    for (int x = 0; x < width_; ++x) line += cells_[static_cast<std::size_t>(y * width_ + x)].glyph;
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string TextCanvas::Styles() const {
  std::string out;
  for (int y = 0; y < height_; ++y) {
    std::string line;
    for (int x = 0; x < width_; ++x)
      line += RoleLetter(cells_[static_cast<std::size_t>(y * width_ + x)].role);
    line.erase(line.find_last_not_of('.') + 1);
    out += line + "\n";
  }
  return out;
}

std::string_view TextCanvas::Glyph(int x, int y) const {
  return cells_[static_cast<std::size_t>(y * width_ + x)].glyph;
}

Role TextCanvas::RoleAt(int x, int y) const {
  return cells_[static_cast<std::size_t>(y * width_ + x)].role;
}

}  // namespace neuronmon::tui
