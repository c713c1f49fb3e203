// --token-file: the token is a secret, read only from a small regular file other users cannot read.
#include "client/endpoint_flags.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace neuronmon::client {
namespace {

class TokenFileTest : public ::testing::Test {
 protected:
  TokenFileTest()
      : dir_(std::filesystem::temp_directory_path() /
             ("neuronmon-token-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~TokenFileTest() override { std::filesystem::remove_all(dir_); }

  // Resolves `--connect 127.0.0.1:9414 --token-file PATH`: the token, or the error.
  Result<std::string> Token(const std::string& path) {
    EndpointFlags flags;
    flags.connect = "127.0.0.1:9414";
    flags.token_file = path;
    std::string token;
    Result<Endpoint> ep = ResolveEndpoint(flags, &token);
    if (!ep.ok()) return ep.status();
    return token;
  }

  std::string Write(const std::string& text, mode_t mode) {
    const std::string path = (dir_ / "token").string();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(TokenFileTest, ReadsTheFirstLineOfAPrivateFile) {
  Result<std::string> token = Token(Write("  s3cret \r\nsecond line\n", 0600));
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "s3cret");
  token = Token(Write("group-readable\n", 0640));
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "group-readable");
}

TEST_F(TokenFileTest, RefusesAFileEveryUserCanRead) {
  const std::string path = Write("s3cret\n", 0644);
  Result<std::string> token = Token(path);
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().message(),
            path + ": mode 0644 lets every user read the token; make it 0600 or 0640");
}

TEST_F(TokenFileTest, RefusesWhatIsNotASmallRegularFile) {
  Result<std::string> token = Token(dir_.string());
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().message(), dir_.string() + ": not a regular file");
  token = Token(Write(std::string(5000, 'x'), 0600));
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("file larger than 4 KiB"), std::string::npos)
      << token.status().message();
  token = Token(Write("\n", 0600));
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("the token file is empty"), std::string::npos);
}

}  // namespace
}  // namespace neuronmon::client
