#include "proto/common/tag_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace neuronmon {
namespace {

bool Match(std::string_view pattern, std::string_view tag) {
  auto f = TagFilter::Compile(pattern, kDefaultMaxTagFilterBytes);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() && (*f)->Matches(tag);
}

// Searched anywhere in the tag, as Go's regexp.MatchString (what AWS's configs are written for).
TEST(TagFilter, MatchesAnywhereLikeGo) {
  EXPECT_TRUE(Match("llama", "my-llama-8b"));
  EXPECT_FALSE(Match("^llama", "my-llama-8b"));
  EXPECT_TRUE(Match("^rank-[0-9]+$", "rank-12"));
  EXPECT_TRUE(Match("(?i)LLAMA", "llama"));
  EXPECT_FALSE(Match("bert|gpt", "llama"));
}

// std::regex took ~2 s per tag on (.*)*X and over 30 s on (.*)*(.*)*X, and ~22,000 nested groups
// overflowed its stack. RE2 answers in linear time, and the nesting is refused by length.
TEST(TagFilter, PathologicalPatternsStayCheap) {
  const std::string tag(200, 'a');
  EXPECT_FALSE(Match("(.*)*(.*)*X", tag));
  EXPECT_FALSE(Match("(a*)*b", tag));
  // RE2 parses without recursion: deep nesting compiles (or is refused) and never crashes.
  const std::string nested = std::string(22000, '(') + "a" + std::string(22000, ')');
  auto f = TagFilter::Compile(nested, 65536);
  if (f.ok()) {
    EXPECT_TRUE((*f)->Matches("xax"));
  } else {
    EXPECT_LT(f.status().message().size(), 200u);
  }
}

TEST(TagFilter, ErrorsNameTheProblemWithoutEchoingTheWholePattern) {
  auto bad = TagFilter::Compile("llama[(", kDefaultMaxTagFilterBytes);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "\"llama[(\" is not a valid regular expression: missing ]: [(");
  auto long_one = TagFilter::Compile(std::string(70000, 'x'), 256);
  ASSERT_FALSE(long_one.ok());
  EXPECT_EQ(long_one.status().message(), "is 70000 bytes long; the limit is 256 bytes");
  auto cut = TagFilter::Compile(std::string(100, 'x') + "[", 256);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message().substr(0, 48), "\"" + std::string(40, 'x') + "...\" is");
  // A pattern that needs more memory than a filter may take.
  auto huge = TagFilter::Compile("((((a{100}){100}){100}){100})", 256);
  ASSERT_FALSE(huge.ok());
}

// Results are cached per tag, and the cache is bounded however many tags pass through.
TEST(TagFilter, CachesResultsPerTag) {
  auto f = TagFilter::Compile("^a", kDefaultMaxTagFilterBytes);
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ((*f)->Matches((i % 2 ? "a" : "b") + std::to_string(i)), i % 2 == 1);
  }
  EXPECT_TRUE((*f)->Matches("a"));
  EXPECT_FALSE((*f)->Matches("b"));
}

TEST(QuoteForMessage, CutsAtACharacterBoundary) {
  EXPECT_EQ(QuoteForMessage("short"), "\"short\"");
  EXPECT_EQ(QuoteForMessage(std::string(39, 'a') + "é", 40), "\"" + std::string(39, 'a') + "...\"");
}

}  // namespace
}  // namespace neuronmon
