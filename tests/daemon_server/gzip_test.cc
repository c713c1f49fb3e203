#include "daemon/server/gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace neuronmon::daemon {
namespace {

std::string Gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  return out;
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
  EXPECT_EQ(Gunzip(*gz), text);
  Result<std::string> empty = Gzip("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(Gunzip(*empty), "");
}

}  // namespace
}  // namespace neuronmon::daemon
