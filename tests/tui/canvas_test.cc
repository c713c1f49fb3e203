// The text canvas: clipping, UTF-8 glyphs, styles and the ASCII fold.
#include "tui/canvas.h"

#include <gtest/gtest.h>

namespace neuronmon::tui {
namespace {

TEST(TextCanvas, ClipsAndKeepsUtf8Glyphs) {
  TextCanvas c(6, 2);
  c.Put(-2, 0, "abcdefgh", Role::kValue);
  c.Put(4, 1, "─●◀", Role::kWarning);
  EXPECT_EQ(c.Text(), "cdefgh\n    ─●\n");
  EXPECT_EQ(c.Styles(), "vvvvvv\n....WW\n");
  c.Put(0, 5, "off canvas", Role::kNormal);
  c.Paint(1, 0, 2, Role::kSelected);
  EXPECT_EQ(c.RoleAt(2, 0), Role::kSelected);
  EXPECT_EQ(TextWidth("ND◀ x"), 5);
  EXPECT_EQ(TakeColumns("a─b", 2), "a─");
}

TEST(TextCanvas, FoldToAsciiKeepsOneColumnPerCodePoint) {
  const std::string text =
      "idle 61% \u2014 feed \u201cfaster\u201d \u25cf ND5\u25c0 5\u00b5s \u2801\u2588 \u4e2d";
  const std::string folded = FoldToAscii(text);
  EXPECT_EQ(folded, "idle 61% - feed \"faster\" * ND5< 5us :# ?");
  EXPECT_EQ(static_cast<int>(folded.size()), TextWidth(text));
  EXPECT_EQ(FoldToAscii("plain [12.34%]"), "plain [12.34%]");
  EXPECT_EQ(FoldToAscii("\xff\x80x"), "??x");  // stray bytes, not a crash
}

// Bytes that are not UTF-8 (a truncated sequence, a surrogate) take one column each and are drawn
// as '?', so the columns after them hold and nothing invalid reaches the terminal.
TEST(TextCanvas, InvalidUtf8IsOneQuestionMarkPerByte) {
  EXPECT_EQ(TextWidth("\xe2\x82x"), 3);
  EXPECT_EQ(TextWidth("\xed\xa0\x80"), 3);
  EXPECT_EQ(TakeColumns("\xe2\x82xyz", 3), "\xe2\x82x");
  TextCanvas c(5, 1);
  c.Put(0, 0, "\xe2\x82x\xe2\x94\x80", Role::kValue);
  EXPECT_EQ(c.Text(), "??x\xe2\x94\x80\n");
}

}  // namespace
}  // namespace neuronmon::tui
