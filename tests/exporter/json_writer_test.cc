#include "exporter/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>

namespace neuronmon::exporter {
namespace {

std::string DoubleText(double value) {
  std::string out;
  AppendJsonDouble(out, value);
  return out;
}

std::string StringText(std::string_view value) {
  std::string out;
  AppendJsonString(out, value);
  return out;
}

TEST(AppendJsonDouble, WholeNumbersPrintWithoutFraction) {
  EXPECT_EQ(DoubleText(0), "0");
  EXPECT_EQ(DoubleText(-0.0), "-0");
  EXPECT_EQ(DoubleText(100), "100");
  EXPECT_EQ(DoubleText(-42), "-42");
  EXPECT_EQ(DoubleText(875590474948), "875590474948");
  EXPECT_EQ(DoubleText(1e20), "100000000000000000000");
}

TEST(AppendJsonDouble, ShortestRoundTripDigits) {
  EXPECT_EQ(DoubleText(0.1), "0.1");
  EXPECT_EQ(DoubleText(4.9997283150000005), "4.9997283150000005");
  EXPECT_EQ(DoubleText(89.01827638996558), "89.01827638996558");
  EXPECT_EQ(DoubleText(26.32), "26.32");
  EXPECT_EQ(DoubleText(0.00047258), "0.00047258");
  EXPECT_EQ(DoubleText(-1.5), "-1.5");
  EXPECT_EQ(DoubleText(0.1 + 0.2), "0.30000000000000004");
}

TEST(AppendJsonDouble, LargeIntegersUseShortestDigitsPaddedWithZeros) {
  // Go pads the 17 shortest digits with zeros; the exact binary value is 123456789012345677824.
  EXPECT_EQ(DoubleText(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(DoubleText(9007199254740993.0), "9007199254740992");
}

TEST(AppendJsonDouble, ExponentFormBelowOneMillionthAndFrom1e21) {
  EXPECT_EQ(DoubleText(0.000001), "0.000001");
  EXPECT_EQ(DoubleText(1e-7), "1e-7");
  EXPECT_EQ(DoubleText(-1e-7), "-1e-7");
  EXPECT_EQ(DoubleText(std::nextafter(1e-6, 0.0)), "9.999999999999997e-7");
  EXPECT_EQ(DoubleText(9.99e-7), "9.99e-7");
  EXPECT_EQ(DoubleText(1.25e-10), "1.25e-10");
  EXPECT_EQ(DoubleText(5e-324), "5e-324");
  EXPECT_EQ(DoubleText(1e21), "1e+21");
  EXPECT_EQ(DoubleText(std::nextafter(1e21, 0.0)), "999999999999999900000");
  EXPECT_EQ(DoubleText(123456789012345678901234.0), "1.2345678901234569e+23");
  EXPECT_EQ(DoubleText(1.5e300), "1.5e+300");
  EXPECT_EQ(DoubleText(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
}

TEST(AppendJsonDouble, NonFiniteIsNull) {
  EXPECT_EQ(DoubleText(std::nan("")), "null");
  EXPECT_EQ(DoubleText(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(DoubleText(-std::numeric_limits<double>::infinity()), "null");
}

TEST(AppendJsonString, EscapesQuoteBackslashAndWhitespace) {
  EXPECT_EQ(StringText(""), R"("")");
  EXPECT_EQ(StringText("plain text"), R"("plain text")");
  EXPECT_EQ(StringText("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(StringText("C:\\dir"), R"("C:\\dir")");
  EXPECT_EQ(StringText("a\nb\rc\td"), R"("a\nb\rc\td")");
}

TEST(AppendJsonString, OtherControlBytesAsLowercaseHex) {
  EXPECT_EQ(StringText(std::string_view("\0", 1)), R"("\u0000")");
  EXPECT_EQ(StringText("\x01\x08\x0c\x1b\x1f"), R"("\u0001\u0008\u000c\u001b\u001f")");
  EXPECT_EQ(StringText("\x7f"), "\"\x7f\"");  // DEL is not escaped by Go
}

TEST(AppendJsonString, HtmlCharactersEscaped) {
  EXPECT_EQ(StringText("<b> & </b>"), R"("\u003cb\u003e \u0026 \u003c/b\u003e")");
  EXPECT_EQ(StringText("python train.py && echo done > log"),
            R"("python train.py \u0026\u0026 echo done \u003e log")");
}

TEST(AppendJsonString, ValidUtf8PassesThrough) {
  EXPECT_EQ(StringText("µs ◄––► 日本 😀"), "\"µs ◄––► 日本 😀\"");
  EXPECT_EQ(StringText("\xEF\xBF\xBD"), "\"\xEF\xBF\xBD\"");  // a real U+FFFD stays as is
}

TEST(AppendJsonString, LineAndParagraphSeparatorsEscaped) {
  EXPECT_EQ(StringText("a\u2028b\u2029c"), R"("a\u2028b\u2029c")");
}

TEST(AppendJsonString, EachInvalidUtf8ByteBecomesReplacement) {
  EXPECT_EQ(StringText("a\xFF"
                       "b"),
            R"("a\ufffdb")");
  EXPECT_EQ(StringText("\xC3"), R"("\ufffd")");                      // truncated 2-byte sequence
  EXPECT_EQ(StringText("\xE2\x82"), R"("\ufffd\ufffd")");            // truncated 3-byte sequence
  EXPECT_EQ(StringText("\xC0\xAF"), R"("\ufffd\ufffd")");            // overlong '/'
  EXPECT_EQ(StringText("\xED\xA0\x80"), R"("\ufffd\ufffd\ufffd")");  // UTF-16 surrogate
  EXPECT_EQ(StringText("\xF4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // > U+10FFFF
  EXPECT_EQ(StringText("\x80"
                       "ok"),
            R"("\ufffdok")");  // stray continuation byte
}

TEST(JsonWriter, CompactObjectWithEveryValueType) {
  std::string out;
  JsonWriter json(out);
  json.BeginObject();
  json.Key("s");
  json.String("x");
  json.Key("d");
  json.Double(4.5);
  json.Key("i");
  json.Int(-7);
  json.Key("u");
  json.Uint(18446744073709551615u);
  json.Key("t");
  json.Bool(true);
  json.Key("f");
  json.Bool(false);
  json.Key("n");
  json.Null();
  json.EndObject();
  EXPECT_EQ(out,
            R"({"s":"x","d":4.5,"i":-7,"u":18446744073709551615,"t":true,"f":false,"n":null})");
}

TEST(JsonWriter, CompactNestingAndEmptyContainers) {
  std::string out = "prefix:";
  JsonWriter json(out);
  json.BeginArray();
  json.BeginObject();
  json.EndObject();
  json.BeginArray();
  json.EndArray();
  json.BeginObject();
  json.Key("a");
  json.BeginArray();
  json.Int(1);
  json.Int(2);
  json.EndArray();
  json.Key("b");
  json.BeginObject();
  json.Key("c");
  json.Int(3);
  json.EndObject();
  json.EndObject();
  json.Int(std::numeric_limits<std::int64_t>::min());
  json.EndArray();
  EXPECT_EQ(out, R"(prefix:[{},[],{"a":[1,2],"b":{"c":3}},-9223372036854775808])");
}

TEST(JsonWriter, KeysAreEscapedLikeStrings) {
  std::string out;
  JsonWriter json(out);
  json.BeginObject();
  json.Key("a<b\"");
  json.Int(1);
  json.EndObject();
  EXPECT_EQ(out, R"({"a\u003cb\"":1})");
}

TEST(JsonWriter, IndentedMatchesMarshalIndent) {
  std::string out;
  JsonWriter json(out, JsonWriter::Style::kIndented);
  json.BeginArray();
  json.BeginObject();
  json.Key("ids");
  json.BeginArray();
  json.Uint(0);
  json.Uint(1);
  json.EndArray();
  json.Key("none");
  json.BeginArray();
  json.EndArray();
  json.Key("empty");
  json.BeginObject();
  json.EndObject();
  json.Key("null");
  json.Null();
  json.EndObject();
  json.EndArray();
  EXPECT_EQ(out,
            "[\n"
            "    {\n"
            "        \"ids\": [\n"
            "            0,\n"
            "            1\n"
            "        ],\n"
            "        \"none\": [],\n"
            "        \"empty\": {},\n"
            "        \"null\": null\n"
            "    }\n"
            "]");
}

TEST(JsonWriter, IndentedEmptyTopLevelArray) {
  std::string out;
  JsonWriter json(out, JsonWriter::Style::kIndented);
  json.BeginArray();
  json.EndArray();
  EXPECT_EQ(out, "[]");
}

}  // namespace
}  // namespace neuronmon::exporter
