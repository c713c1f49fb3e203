// Golden files for the formats users parse: a test compares its output with the file byte for
// byte, and NEURONMON_UPDATE_GOLDEN=1 rewrites the file instead. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace neuronmon::test_util {

// Compares `actual` with the file at `path` (from the source root: NEURONMON_SOURCE_DIR).
inline void ExpectMatchesGolden(const std::string& actual, const std::string& path) {
  const char* update = std::getenv("NEURONMON_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << path << "; regenerate with NEURONMON_UPDATE_GOLDEN=1";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << path;
}

}  // namespace neuronmon::test_util
