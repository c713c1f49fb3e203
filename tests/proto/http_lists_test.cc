#include "proto/common/http_lists.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace neuronmon {
namespace {

std::vector<std::string_view> Values(const std::vector<WeightedMember>& members) {
  std::vector<std::string_view> out;
  for (const WeightedMember& m : members) out.push_back(m.value);
  return out;
}

// The weight of the only member of `header`.
double WeightOf(std::string_view header, WeightSyntax syntax) {
  const std::vector<WeightedMember> members = ParseWeightedList(header, syntax);
  EXPECT_EQ(members.size(), 1u) << header;
  return members.empty() ? -1 : members[0].weight;
}

TEST(ParseWeightedList, SplitsMembersAndTrimsTheirValues) {
  for (WeightSyntax syntax : {WeightSyntax::kStrict, WeightSyntax::kLenient}) {
    EXPECT_EQ(Values(ParseWeightedList(" gzip , deflate;q=0.5,br ", syntax)),
              (std::vector<std::string_view>{"gzip", "deflate", "br"}));
    EXPECT_EQ(Values(ParseWeightedList(",gzip,,", syntax)),
              (std::vector<std::string_view>{"", "gzip", ""}))
        << "empty members count; a trailing ',' adds none";
    EXPECT_TRUE(ParseWeightedList("", syntax).empty());
  }
}

TEST(ParseWeightedList, StopsAfterMaxMembers) {
  std::string many;
  for (int i = 0; i < 70; ++i) many += "identity,";
  many += "gzip";
  EXPECT_EQ(ParseWeightedList(many, WeightSyntax::kStrict, 64).size(), 64u);
  EXPECT_EQ(ParseWeightedList(many, WeightSyntax::kStrict).size(), 71u);
  EXPECT_EQ(ParseWeightedList(",,,", WeightSyntax::kStrict, 2).size(), 2u)
      << "empty members count towards the bound";
}

TEST(ParseWeightedList, AWeightIsOneWhenAbsent) {
  for (WeightSyntax syntax : {WeightSyntax::kStrict, WeightSyntax::kLenient}) {
    EXPECT_EQ(WeightOf("gzip", syntax), 1);
    EXPECT_EQ(WeightOf("gzip;", syntax), 1);
    EXPECT_EQ(WeightOf("text/plain;version=0.0.4", syntax), 1);
    EXPECT_EQ(WeightOf("gzip;level", syntax), 1) << "a parameter without '=' is skipped";
  }
}

TEST(ParseWeightedList, BothSyntaxesAgreeOnWhatConformingClientsSend) {
  for (std::string_view header : {"gzip;q=0.5", "gzip; q=0.5", "gzip ; Q=0.5 ", "x;q=0.500"}) {
    EXPECT_DOUBLE_EQ(WeightOf(header, WeightSyntax::kStrict), 0.5) << header;
    EXPECT_DOUBLE_EQ(WeightOf(header, WeightSyntax::kLenient), 0.5) << header;
  }
  for (std::string_view header : {"x;q=0", "x;q=0.000", "x;q=1", "x;q=1.000", "x;q=0.001"}) {
    EXPECT_DOUBLE_EQ(WeightOf(header, WeightSyntax::kStrict),
                     WeightOf(header, WeightSyntax::kLenient))
        << header;
  }
}

TEST(ParseWeightedList, StrictReadsQvaluesToTheLetter) {
  const WeightSyntax strict = WeightSyntax::kStrict;
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=0.001", strict), 0.001);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=0.", strict), 0);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=1.5", strict), 1) << "above 1 counts as 1";
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=2", strict), 0);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=0.0001", strict), 0) << "at most three decimals";
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=0.5x", strict), 0);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=nonsense", strict), 0);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=", strict), 0);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q= 0.5", strict), 0);
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=\"0.5\"", strict), 0) << "a qvalue is never quoted";
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q =0.5", strict), 1) << "\"q \" is not q: no weight given";
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=0.2;q=0.9", strict), 0.2) << "the first q counts";
  EXPECT_DOUBLE_EQ(WeightOf("gzip;q=bad;q=0.9", strict), 0) << "even when it is malformed";
}

TEST(ParseWeightedList, LenientReadsWeightsAsClientGolangDoes) {
  const WeightSyntax lenient = WeightSyntax::kLenient;
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q = 0.5", lenient), 0.5);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=\"0.5\"", lenient), 0.5);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=2", lenient), 2);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=0.5x", lenient), 0.5);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=0.0001", lenient), 0.0001);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=-1", lenient), -1);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=abc", lenient), 0);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=", lenient), 0);
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=1e999", lenient), 0) << "out of range";
  EXPECT_DOUBLE_EQ(WeightOf("text/plain;q=0.2;q=0.9", lenient), 0.9) << "the last q counts";
}

TEST(ParseWeightedList, KeepsEveryParameterInOrder) {
  const std::vector<WeightedMember> strict = ParseWeightedList(
      "application/openmetrics-text; version = \"1.0.0\" ;q=0.5;x", WeightSyntax::kStrict);
  ASSERT_EQ(strict.size(), 1u);
  ASSERT_EQ(strict[0].parameters.size(), 2u);
  EXPECT_EQ(strict[0].parameters[0].name, "version ");
  EXPECT_EQ(strict[0].parameters[0].value, " \"1.0.0\"");
  EXPECT_EQ(strict[0].parameters[1].name, "q");
  EXPECT_EQ(strict[0].parameters[1].value, "0.5");

  const std::vector<WeightedMember> lenient = ParseWeightedList(
      "application/openmetrics-text; Version = \"1.0.0\" ;q=0.5;x", WeightSyntax::kLenient);
  ASSERT_EQ(lenient.size(), 1u);
  EXPECT_EQ(lenient[0].value, "application/openmetrics-text");
  EXPECT_DOUBLE_EQ(lenient[0].weight, 0.5);
  ASSERT_EQ(lenient[0].parameters.size(), 2u);
  EXPECT_EQ(lenient[0].parameters[0].name, "Version");
  EXPECT_EQ(lenient[0].parameters[0].value, "1.0.0");
  EXPECT_EQ(lenient[0].parameters[1].name, "q");
}

TEST(ParseWeightedList, SurvivesPunctuationSoup) {
  for (WeightSyntax syntax : {WeightSyntax::kStrict, WeightSyntax::kLenient}) {
    const std::vector<WeightedMember> members = ParseWeightedList(";;,,=;q=,\"\",a;;\"", syntax);
    EXPECT_EQ(Values(members), (std::vector<std::string_view>{"", "", "=", "\"\"", "a"}));
    EXPECT_DOUBLE_EQ(members[2].weight, 0) << "\"q=\" weighs nothing";
    for (const WeightedMember& m : members) EXPECT_FALSE(std::isnan(m.weight));
  }
}

}  // namespace
}  // namespace neuronmon
