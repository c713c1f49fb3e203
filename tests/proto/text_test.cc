#include "proto/common/text.h"

#include <gtest/gtest.h>

namespace neuronmon {
namespace {

TEST(Trim, RemovesSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(Trim("  gzip\t"), "gzip");
  EXPECT_EQ(Trim("\t text/plain ; q=1 "), "text/plain ; q=1") << "inner blanks stay";
  EXPECT_EQ(Trim("gzip"), "gzip");
  EXPECT_EQ(Trim(" \t \t"), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" gzip\r\n"), "gzip\r\n") << "HTTP's OWS is spaces and tabs only";
}

TEST(Trim, TakesTheCharactersToRemove) {
  EXPECT_EQ(Trim(" host:9 \r", kLineBlanks), "host:9");
  EXPECT_EQ(Trim("\r\n", kLineBlanks), "\n");
  EXPECT_EQ(Trim("  token\t ", " "), "token\t");
  EXPECT_EQ(Trim("xxaxx", "x"), "a");
}

TEST(Trim, ReturnsAViewIntoItsArgument) {
  const std::string_view text = "  abc  ";
  const std::string_view trimmed = Trim(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 3u);
}

TEST(ToLowerAscii, LowersAsciiLettersOnly) {
  EXPECT_EQ(ToLowerAscii("Application/OpenMetrics-Text"), "application/openmetrics-text");
  EXPECT_EQ(ToLowerAscii("Q=0.5"), "q=0.5");
  EXPECT_EQ(ToLowerAscii("ÉTÉ"), "\xC3\x89t\xC3\x89") << "UTF-8 bytes are left alone";
  EXPECT_EQ(ToLowerAscii(""), "");
}

TEST(EqualsIgnoringCase, ComparesAsciiCaseInsensitively) {
  EXPECT_TRUE(EqualsIgnoringCase("GZIP", "gzip"));
  EXPECT_TRUE(EqualsIgnoringCase("Bearer ", "bEARER "));
  EXPECT_TRUE(EqualsIgnoringCase("", ""));
  EXPECT_FALSE(EqualsIgnoringCase("gzip", "gzi"));
  EXPECT_FALSE(EqualsIgnoringCase("gzip", "x-gzip"));
  EXPECT_FALSE(EqualsIgnoringCase("\xC3\x89", "\xC3\xA9")) << "É and é differ beyond ASCII";
  EXPECT_FALSE(EqualsIgnoringCase("[", "{")) << "only letters fold";
}

// As printf's "%.*f" in the C locale: the digits asked for, rounded, no exponent.
TEST(FormatFixed, PrintsTheDigitsAskedFor) {
  EXPECT_EQ(FormatFixed(3.14159, 2), "3.14");
  EXPECT_EQ(FormatFixed(41.6, 0), "42");
  EXPECT_EQ(FormatFixed(0.04, 1), "0.0");
  EXPECT_EQ(FormatFixed(-2.25, 1), "-2.2");  // 2.25 is exact in binary: half to even, as printf
  EXPECT_EQ(FormatFixed(1e21, 0), "1000000000000000000000");
  EXPECT_EQ(FormatFixed(5, -3), "5");
}

}  // namespace
}  // namespace neuronmon
