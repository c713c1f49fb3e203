// The per-user fallback socket directory under /tmp: which socket paths lie in it, and when a
// directory there may be trusted (the daemon creates it, clients check it).
#include "proto/common/socket_path.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace neuronmon {
namespace {

TEST(InFallbackSocketDirectory, OnlyPathsDirectlyInTheUsersOwnDirectory) {
  EXPECT_TRUE(InFallbackSocketDirectory("/tmp/neuron-monitor-1000/neuron-monitord.sock", 1000));
  EXPECT_TRUE(InFallbackSocketDirectory("/tmp/neuron-monitor-1000/other.sock", 1000));
  // Spelled differently, the same directory.
  EXPECT_TRUE(InFallbackSocketDirectory("/tmp//neuron-monitor-1000/./d.sock", 1000));
  EXPECT_TRUE(InFallbackSocketDirectory("/tmp/x/../neuron-monitor-1000/d.sock", 1000));
  EXPECT_FALSE(InFallbackSocketDirectory("/tmp/neuron-monitor-1001/d.sock", 1000));
  EXPECT_FALSE(InFallbackSocketDirectory("/tmp/neuron-monitor-1000/sub/d.sock", 1000));
  EXPECT_FALSE(InFallbackSocketDirectory("/run/neuron-monitor/neuron-monitord.sock", 1000));
  EXPECT_FALSE(InFallbackSocketDirectory("/run/user/1000/neuron-monitor/neuron-monitord.sock", 0));
}

TEST(InFallbackSocketDirectory, RelativePathsAreResolvedFromTheWorkingDirectory) {
  const std::filesystem::path saved = std::filesystem::current_path();
  std::filesystem::current_path("/tmp");
  const bool in = InFallbackSocketDirectory("neuron-monitor-1000/d.sock", 1000);
  std::filesystem::current_path(saved);
  EXPECT_TRUE(in);
}

// CI runs as root: a directory given to nobody is another user's.
TEST(CheckPrivateDirectory, NamesTheUserWhoOwnsADirectoryOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-owned-" + std::to_string(::getpid()));
  ASSERT_TRUE(EnsurePrivateDirectory(dir.string(), 0).ok());
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  EXPECT_EQ(CheckPrivateDirectory(dir.string(), 0).message(),
            dir.string() + " is owned by uid 65534, not 0");
  EXPECT_EQ(EnsurePrivateDirectory(dir.string(), 0).message(),
            dir.string() + " is owned by uid 65534, not 0");
  EXPECT_TRUE(CheckPrivateDirectory(dir.string(), 65534).ok());
  std::filesystem::remove_all(dir);
}

TEST(CheckPrivateDirectory, RefusesAFileAndGroupAccess) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-modes-" + std::to_string(::getpid()));
  const auto uid = static_cast<unsigned>(::geteuid());
  ASSERT_TRUE(EnsurePrivateDirectory(dir.string(), uid).ok());
  ::chmod(dir.c_str(), 0750);
  EXPECT_EQ(
      CheckPrivateDirectory(dir.string(), uid).message(),
      dir.string() + " has mode 0750, which lets other users replace the socket; it must be 0700");
  ::chmod(dir.c_str(), 0700);
  EXPECT_TRUE(CheckPrivateDirectory(dir.string(), uid).ok());
  const std::string file = (dir / "file").string();
  ASSERT_EQ(::close(::creat(file.c_str(), 0600)), 0);
  EXPECT_EQ(CheckPrivateDirectory(file, uid).message(), file + " is not a directory");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neuronmon
