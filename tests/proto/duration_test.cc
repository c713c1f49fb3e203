#include "proto/common/duration.h"

#include <gtest/gtest.h>

namespace neuronmon {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

Nanos Parse(std::string_view text) {
  Result<Nanos> r = ParseDuration(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
  return r.ok() ? *r : Nanos(-1);
}

std::string ErrorOf(std::string_view text) {
  Result<Nanos> r = ParseDuration(text);
  EXPECT_FALSE(r.ok()) << text << " parsed as " << (r.ok() ? r->count() : 0);
  return r.ok() ? "" : r.status().message();
}

TEST(ParseDuration, AcceptsNeuronMonitorConfigStrings) {
  EXPECT_EQ(Parse("1s"), seconds(1));
  EXPECT_EQ(Parse("500ms"), milliseconds(500));
  EXPECT_EQ(Parse("1m30s"), seconds(90));
  EXPECT_EQ(Parse("2h"), hours(2));
  EXPECT_EQ(Parse("2h45m"), hours(2) + minutes(45));
  EXPECT_EQ(Parse("1.5s"), milliseconds(1500));
  EXPECT_EQ(Parse("0.25h"), minutes(15));
  EXPECT_EQ(Parse("250us"), microseconds(250));
  EXPECT_EQ(Parse("250\xc2\xb5s"), microseconds(250));
  EXPECT_EQ(Parse("7ns"), Nanos(7));
  EXPECT_EQ(Parse("10ms"), milliseconds(10));
  EXPECT_EQ(Parse("0s"), Nanos(0));
  EXPECT_EQ(Parse(".5s"), milliseconds(500));
  EXPECT_EQ(Parse("1h0m0.001s"), hours(1) + milliseconds(1));
}

TEST(ParseDuration, RejectsBareNumber) {
  EXPECT_EQ(ErrorOf("5"), "\"5\": missing unit (use e.g. \"5s\")");
}

TEST(ParseDuration, RejectsNegative) { EXPECT_EQ(ErrorOf("-1s"), "\"-1s\": negative duration"); }

TEST(ParseDuration, RejectsUnknownUnit) {
  EXPECT_EQ(ErrorOf("1x"), "\"1x\": unknown unit \"x\" (use ns, us, ms, s, m or h)");
  EXPECT_EQ(ErrorOf("1sec"), "\"1sec\": unknown unit \"sec\" (use ns, us, ms, s, m or h)");
  EXPECT_EQ(ErrorOf("1 s"), "\"1 s\": unknown unit \" s\" (use ns, us, ms, s, m or h)");
}

TEST(ParseDuration, RejectsOverflow) {
  EXPECT_EQ(ErrorOf("2562048h"), "\"2562048h\": duration too large");
  EXPECT_EQ(ErrorOf("99999999999999999999999s"),
            "\"99999999999999999999999s\": duration too large");
  EXPECT_EQ(ErrorOf("2562047h2562047h"), "\"2562047h2562047h\": duration too large");
  EXPECT_EQ(Parse("2562047h"), hours(2562047));  // just fits in int64 nanoseconds
}

TEST(ParseDuration, RejectsMalformed) {
  EXPECT_EQ(ErrorOf(""), "\"\": empty duration (use e.g. \"5s\")");
  EXPECT_EQ(ErrorOf("s"), "\"s\": expected a number before the unit");
  EXPECT_EQ(ErrorOf(".s"), "\".s\": expected a number before the unit");
  EXPECT_EQ(ErrorOf("+1s"), "\"+1s\": unexpected sign (use e.g. \"5s\")");
  EXPECT_EQ(ErrorOf("1s5"), "\"1s5\": missing unit (use e.g. \"5s\")");
}

TEST(FormatDuration, RoundTripsThroughParse) {
  EXPECT_EQ(FormatDuration(seconds(1)), "1s");
  EXPECT_EQ(FormatDuration(seconds(90)), "1m30s");
  EXPECT_EQ(FormatDuration(hours(2)), "2h");
  EXPECT_EQ(FormatDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(microseconds(3)), "3us");
  EXPECT_EQ(FormatDuration(Nanos(0)), "0s");
  for (Nanos d : {Nanos(1), Nanos(1234567), Nanos(86'400'000'000'000), Nanos(1'000'000'007)}) {
    EXPECT_EQ(Parse(FormatDuration(d)), d) << FormatDuration(d);
  }
}

}  // namespace
// A stalled read's "3855147795ns" reads as "3.9s": measured durations are rounded for people.
TEST(FormatElapsed, RoundsToWhatPeopleRead) {
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  EXPECT_EQ(FormatElapsed(nanoseconds(3855147795)), "3.9s");
  EXPECT_EQ(FormatElapsed(nanoseconds(850'400)), "850us");
  EXPECT_EQ(FormatElapsed(nanoseconds(3'240'000)), "3.2ms");
  EXPECT_EQ(FormatElapsed(milliseconds(120)), "120ms");
  EXPECT_EQ(FormatElapsed(milliseconds(999'600)), "16m40s");
  EXPECT_EQ(FormatElapsed(milliseconds(59'990)), "1m");
  EXPECT_EQ(FormatElapsed(std::chrono::seconds(3725)), "1h2m");
  EXPECT_EQ(FormatElapsed(nanoseconds(-5)), "0us");
}

}  // namespace neuronmon
