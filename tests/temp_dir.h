// TempDir: a fresh directory of its own under the test's temporary directory (mkdtemp), removed
// with everything in it when the object goes. For tests that write files.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace neuronmon::test_util {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "neuronmon") {
    std::string pattern = ::testing::TempDir() + prefix + "_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp " << pattern;
  }
  ~TempDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace neuronmon::test_util
