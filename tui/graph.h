// History graphs: a time series drawn into a w x h block of glyphs, newest sample at the right.
// Braille packs 2 samples per column and 4 levels per row (UTF-8 terminals); blocks use one sample
// per column and 8 levels per row; ASCII uses one sample per column and one level per row. Pure.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace neuronmon::tui {

enum class GraphStyle { kBraille, kBlocks, kAscii };

// `h` rows of `w` glyphs each (top row first). Values are clamped to [0, max]; samples older than
// the width are not drawn; missing history on the left is blank.
std::vector<std::string> RenderGraph(std::span<const double> values, double max, int w, int h,
                                     GraphStyle style);

// The next style in the `g` key's cycle that the terminal supports.
GraphStyle NextGraphStyle(GraphStyle style, bool utf8);

}  // namespace neuronmon::tui
