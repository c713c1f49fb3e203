#include "proto/common/terminal_text.h"

#include <gtest/gtest.h>

namespace neuronmon {
namespace {

TEST(SanitizeForTerminal, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(SanitizeForTerminal("llama-8b rank 3"), "llama-8b rank 3");
  EXPECT_EQ(SanitizeForTerminal("modèle — ◀ 模型"), "modèle — ◀ 模型");
  EXPECT_TRUE(IsTerminalSafe("modèle — ◀ 模型"));
}

TEST(SanitizeForTerminal, RemovesEscapeSequencesWhole) {
  EXPECT_EQ(SanitizeForTerminal("\x1b[31mred\x1b[0m"), "red");
  EXPECT_EQ(SanitizeForTerminal("a\x1b[2J\x1b[Hb"), "ab");               // clear screen, home
  EXPECT_EQ(SanitizeForTerminal("\x1b]0;pwned\x07title"), "title");      // OSC window title
  EXPECT_EQ(SanitizeForTerminal("\x1b]8;;http://x\x1b\\link"), "link");  // OSC 8 hyperlink
  EXPECT_EQ(SanitizeForTerminal("\x1bPq#0;2;0;0;0\x1b\\x"), "x");        // DCS (sixel)
  EXPECT_EQ(SanitizeForTerminal("a\x1b"
                                "cb"),
            "ab");                                   // RIS, full reset
  EXPECT_EQ(SanitizeForTerminal("a\x1b(Bb"), "ab");  // charset designation
  EXPECT_EQ(SanitizeForTerminal("unterminated\x1b]0;title"), "unterminated");
  EXPECT_EQ(SanitizeForTerminal("trailing\x1b"), "trailing");
}

TEST(SanitizeForTerminal, RemovesControlCharacters) {
  EXPECT_EQ(SanitizeForTerminal("a\tb\nc\rd"), "a b c d");
  EXPECT_EQ(SanitizeForTerminal(std::string("a\0b\x07"
                                            "c\x08"
                                            "d\x7f",
                                            8)),
            "abcd");
  EXPECT_EQ(SanitizeForTerminal("a\xc2\x9b"
                                "31mb"),
            "a31mb");  // C1 CSI, U+009B
  EXPECT_EQ(SanitizeForTerminal("a\xc2\x85"
                                "b"),
            "ab");  // C1 NEL
  EXPECT_EQ(SanitizeForTerminal("abc\xe2\x80\xae"
                                "fed"),
            "abcfed");                                     // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(SanitizeForTerminal("x\xe2\x81\xa6y"), "xy");  // LEFT-TO-RIGHT ISOLATE
  EXPECT_FALSE(IsTerminalSafe("a\tb"));
}

TEST(SanitizeForTerminal, ReplacesInvalidUtf8) {
  EXPECT_EQ(SanitizeForTerminal("a\xff"
                                "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeForTerminal("\xc3"), "\xEF\xBF\xBD");                  // truncated sequence
  EXPECT_EQ(SanitizeForTerminal("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(SanitizeForTerminal("\xed\xa0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

}  // namespace
}  // namespace neuronmon
