// ParseDriverVersion: the one reading of /sys/module/neuron/version every layer decides by.
#include "proto/common/driver_version.h"

#include <gtest/gtest.h>

namespace neuronmon {
namespace {

TEST(DriverVersion, ReadsTheModulesVersionFile) {
  const auto v = ParseDriverVersion("2.30.2.0\n");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->parts, (std::vector<int>{2, 30, 2, 0}));
  EXPECT_TRUE(ParseDriverVersion("  2.24 ").has_value());
}

TEST(DriverVersion, AnythingElseIsNoVersion) {
  for (const char* text : {"", "2", "latest", "2.30.", ".2.30", "2..30", "2.-1", "2.+1",
                           "2.30.2.0-amzn", "1234567.1", "1.2.3.4.5.6.7.8.9", "2 .30"}) {
    EXPECT_FALSE(ParseDriverVersion(text).has_value()) << text;
  }
}

TEST(DriverVersion, ComparesNumberByNumberWithMissingPartsAsZero) {
  const DriverVersion v = *ParseDriverVersion("2.30.2.0");
  EXPECT_TRUE(v.AtLeast({2, 30, 2}));
  EXPECT_TRUE(v.AtLeast({2, 30}));
  EXPECT_TRUE(v.AtLeast({2, 9}));  // numbers, not text: 30 > 9
  EXPECT_FALSE(v.AtLeast({2, 31}));
  EXPECT_FALSE(v.AtLeast({2, 30, 2, 1}));
  EXPECT_FALSE(ParseDriverVersion("2.30")->AtLeast({2, 30, 2}));
  EXPECT_TRUE(ParseDriverVersion("3.0")->AtLeast({2, 31}));
}

}  // namespace
}  // namespace neuronmon
