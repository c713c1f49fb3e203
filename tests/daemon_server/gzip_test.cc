#include "daemon/server/gzip.h"

#include <gtest/gtest.h>

#include <string>

namespace neuronmon::daemon {
namespace {

std::string Inflated(const std::string& gz) {
  Result<std::string> text = Gunzip(gz, 16 << 20);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

TEST(Gzip, AcceptEncodingAsPrometheusAndBrowsersSendIt) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("GZIP"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip(" br ; q=1 , gzip ; q=0.001 "));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("deflate, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("*, gzip;q=0")) << "an explicit refusal wins over *";
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=nonsense")) << "a malformed q-value counts as 0";
  EXPECT_FALSE(AcceptsGzip("gzip;q=2"));
  // Only the first 64 codings are looked at.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "br, ";
  EXPECT_FALSE(AcceptsGzip(many + "gzip"));
}

TEST(Gzip, RoundTripsAndShrinksAnExposition) {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += "neuron_execution_latency_seconds_bucket{le=\"0.01\",neuron_device=\"" +
            std::to_string(i % 16) + "\"} " + std::to_string(i * 7) + "\n";
  }
  Result<std::string> gz = Gzip(text);
  ASSERT_TRUE(gz.ok()) << gz.status().message();
  EXPECT_LT(gz->size(), text.size() / 10);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
  EXPECT_EQ(Inflated(*gz), text);
  Result<std::string> empty = Gzip("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(Inflated(*empty), "");
  // Truncated, garbage, or a bomb: errors, never more than asked.
  EXPECT_FALSE(Gunzip(gz->substr(0, gz->size() / 2), 16 << 20).ok());
  EXPECT_FALSE(Gunzip("not gzip at all", 16 << 20).ok());
  Result<std::string> bomb = Gunzip(*gz, text.size() - 1);
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.status().message().find("inflates beyond"), std::string::npos);
}

}  // namespace
}  // namespace neuronmon::daemon
