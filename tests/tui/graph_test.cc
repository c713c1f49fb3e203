// History graphs in braille, blocks and ASCII.
#include "tui/graph.h"

#include <gtest/gtest.h>

#include "tui/canvas.h"

namespace neuronmon::tui {
namespace {

TEST(Graph, BrailleBlocksAndAscii) {
  const std::vector<double> ramp = {0, 25, 50, 75, 100, 100};
  const auto braille = RenderGraph(ramp, 100, 3, 1, GraphStyle::kBraille);
  ASSERT_EQ(braille.size(), 1u);
  EXPECT_EQ(TextWidth(braille[0]), 3);
  EXPECT_EQ(braille[0], "⢀⣴⣿");  // 25 | 0, 75 | 50, 100 | 100 in 2x4 dots
  EXPECT_EQ(RenderGraph(ramp, 100, 6, 1, GraphStyle::kBlocks)[0], " ▂▄▆██");
  EXPECT_EQ(RenderGraph(ramp, 100, 6, 1, GraphStyle::kAscii)[0], " :=*##");
  // Two rows: the top row only fills above half.
  const std::vector<double> two_values = {100, 40};
  const auto two = RenderGraph(two_values, 100, 2, 2, GraphStyle::kBlocks);
  EXPECT_EQ(two[0], "█ ");
  EXPECT_EQ(two[1], "█▆");
  // Short history leaves the left blank; the newest sample is at the right.
  const std::vector<double> one = {100};
  EXPECT_EQ(RenderGraph(one, 100, 4, 1, GraphStyle::kAscii)[0], "   #");
  EXPECT_EQ(NextGraphStyle(GraphStyle::kBraille, true), GraphStyle::kBlocks);
  EXPECT_EQ(NextGraphStyle(GraphStyle::kBraille, false), GraphStyle::kAscii);
}

}  // namespace
}  // namespace neuronmon::tui
