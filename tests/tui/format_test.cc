// Figures as neuron-top prints them, and window dimensions from the environment.
#include "tui/format.h"

#include <gtest/gtest.h>

namespace neuronmon::tui {
namespace {

TEST(Format, AsAwsNeuronTopShowsThem) {
  EXPECT_EQ(Percent(56.814), "56.81%");
  EXPECT_EQ(Percent(100), "  100%");
  EXPECT_EQ(Percent(0), " 0.00%");
  EXPECT_EQ(Tflops(10.004e12), "  10.004TF");
  EXPECT_EQ(Tflops(1e8), "       0TF");
  EXPECT_EQ(Bytes(0), "0.0B");
  EXPECT_EQ(Bytes(256 * 1024), "256.0KB");
  EXPECT_EQ(Bytes(17.5 * 1024 * 1024 * 1024), "17.5GB");
  EXPECT_EQ(BytesPerSecond(1.21e12), "1.2TB/s");
  EXPECT_EQ(Latency(612e-6), "612us");
  EXPECT_EQ(Latency(0.0043), "4.3ms");
  EXPECT_EQ(Latency(0), "-");
  EXPECT_EQ(Count(120), "120/s");
  EXPECT_EQ(Count(4500), "4.5k/s");
}

TEST(Format, DimensionsFromTheEnvironment) {
  EXPECT_EQ(DimensionFromEnv(nullptr, 120, 20, 1000), 120);
  EXPECT_EQ(DimensionFromEnv("80", 120, 20, 1000), 80);
  for (const char* bad : {"", "abc", "0", "-5", "80x", " 80"})
    EXPECT_EQ(DimensionFromEnv(bad, 120, 20, 1000), 120) << bad;
  EXPECT_EQ(DimensionFromEnv("5", 120, 20, 1000), 20);
  EXPECT_EQ(DimensionFromEnv("100000", 120, 20, 1000), 1000);
  EXPECT_EQ(DimensionFromEnv("99999999999999999999", 120, 20, 1000), 1000);
}

}  // namespace
}  // namespace neuronmon::tui
