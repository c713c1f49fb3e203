#include "proto/common/secret.h"

#include <gtest/gtest.h>

#include <string>

namespace neuronmon {
namespace {

TEST(SecretsEqual, ComparesWholeSecrets) {
  EXPECT_TRUE(SecretsEqual("abc", "abc"));
  EXPECT_FALSE(SecretsEqual("abc", "abd"));
  EXPECT_FALSE(SecretsEqual("abc", "abcd"));
  EXPECT_FALSE(SecretsEqual("", "a"));
  EXPECT_TRUE(SecretsEqual("", ""));
}

TEST(SecretsEqual, APrefixOrAnExtensionIsNotTheSecret) {
  EXPECT_FALSE(SecretsEqual("s3cret-token", "s3cret"));
  EXPECT_FALSE(SecretsEqual("s3cret", "s3cret-token"));
  EXPECT_FALSE(SecretsEqual("Abc", "abc")) << "secrets are case-sensitive";
  // A shorter guess padded with NULs must not match: the lengths differ.
  EXPECT_FALSE(SecretsEqual(std::string("abc\0", 4), "abc"));
  EXPECT_TRUE(SecretsEqual(std::string("a\0b", 3), std::string("a\0b", 3)));
}

}  // namespace
}  // namespace neuronmon
