#include "tui/graph.h"

#include <algorithm>
#include <cmath>

namespace neuronmon::tui {
namespace {

// Appends code point `cp` as UTF-8.
void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Height of a sample in sub-levels (0 .. levels).
int Level(double v, double max, int levels) {
  if (!(max > 0) || !std::isfinite(v) || v <= 0) return 0;
  const int l = static_cast<int>(std::lround(std::min(v, max) / max * levels));
  return v > 0 && l == 0 ? 1 : l;  // any activity shows
}

// Sample for display column slot `slot` counted from the right (0 = newest); -1 when absent.
double At(std::span<const double> values, int from_right) {
  if (from_right < 0 || static_cast<std::size_t>(from_right) >= values.size()) return -1;
  return values[values.size() - 1 - static_cast<std::size_t>(from_right)];
}

std::vector<std::string> Braille(std::span<const double> values, double max, int w, int h) {
  // Dot bits: left column rows 0-3 = 0x01 0x02 0x04 0x40, right column = 0x08 0x10 0x20 0x80.
  static constexpr int kLeft[4] = {0x40, 0x04, 0x02, 0x01};  // bottom to top
  static constexpr int kRight[4] = {0x80, 0x20, 0x10, 0x08};
  std::vector<std::string> rows(static_cast<std::size_t>(h));
  for (int col = 0; col < w; ++col) {
    const int from_right = (w - 1 - col) * 2;
    const double right = At(values, from_right);
    const double left = At(values, from_right + 1);
    const int lv = left < 0 ? 0 : Level(left, max, 4 * h);
    const int rv = right < 0 ? 0 : Level(right, max, 4 * h);
    for (int r = 0; r < h; ++r) {
      const int base = (h - 1 - r) * 4;  // sub-levels below this row
      int bits = 0;
      for (int d = 0; d < 4; ++d) {
        if (lv > base + d) bits |= kLeft[d];
        if (rv > base + d) bits |= kRight[d];
      }
      AppendUtf8(rows[static_cast<std::size_t>(r)],
                 bits == 0 ? U' ' : static_cast<char32_t>(0x2800 + bits));
    }
  }
  return rows;
}

std::vector<std::string> Blocks(std::span<const double> values, double max, int w, int h) {
  static constexpr char32_t kBlocks[9] = {U' ', U'▁', U'▂', U'▃', U'▄', U'▅', U'▆', U'▇', U'█'};
  std::vector<std::string> rows(static_cast<std::size_t>(h));
  for (int col = 0; col < w; ++col) {
    const double v = At(values, w - 1 - col);
    const int level = v < 0 ? 0 : Level(v, max, 8 * h);
    for (int r = 0; r < h; ++r) {
      const int part = std::clamp(level - (h - 1 - r) * 8, 0, 8);
      AppendUtf8(rows[static_cast<std::size_t>(r)], kBlocks[part]);
    }
  }
  return rows;
}

std::vector<std::string> Ascii(std::span<const double> values, double max, int w, int h) {
  static constexpr char kLevels[] = " .:-=+*#";
  std::vector<std::string> rows(static_cast<std::size_t>(h));
  for (int col = 0; col < w; ++col) {
    const double v = At(values, w - 1 - col);
    const int level = v < 0 ? 0 : Level(v, max, 8 * h);
    for (int r = 0; r < h; ++r) {
      const int part = std::clamp(level - (h - 1 - r) * 8, 0, 8);
      rows[static_cast<std::size_t>(r)] += part >= 8 ? '#' : kLevels[part];
    }
  }
  return rows;
}

}  // namespace

std::vector<std::string> RenderGraph(std::span<const double> values, double max, int w, int h,
                                     GraphStyle style) {
  if (w <= 0 || h <= 0) return {};
  switch (style) {
    case GraphStyle::kBraille:
      return Braille(values, max, w, h);
    case GraphStyle::kBlocks:
      return Blocks(values, max, w, h);
    case GraphStyle::kAscii:
      return Ascii(values, max, w, h);
  }
  return {};
}

GraphStyle NextGraphStyle(GraphStyle style, bool utf8) {
  if (!utf8) return GraphStyle::kAscii;
  switch (style) {
    case GraphStyle::kBraille:
      return GraphStyle::kBlocks;
    case GraphStyle::kBlocks:
      return GraphStyle::kAscii;
    case GraphStyle::kAscii:
      return GraphStyle::kBraille;
  }
  return GraphStyle::kBraille;
}

}  // namespace neuronmon::tui
