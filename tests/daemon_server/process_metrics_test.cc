// The daemon's own process_* figures for /metrics: the open-descriptor count, taken with one
// poll() over the descriptor table rather than a listing of /proc/self/fd, agrees with the listing.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <vector>

#include "daemon/server/metrics_handler.h"

namespace neuronmon::daemon {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

std::uint64_t ListedFds() {
  std::uint64_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++n;
  }
  return n - 1;  // the listing's own descriptor
}

std::uint64_t OpenFds() {
  Result<HostConstants> host = ReadHostConstants();
  EXPECT_TRUE(host.ok()) << host.status().message();
  Result<ProcessMetrics> m = ReadProcessMetrics(*host);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m->open_fds : 0;
}

TEST(ProcessMetrics, OpenDescriptorsMatchTheListingOfProcSelfFd) {
  EXPECT_EQ(OpenFds(), ListedFds());
  std::vector<std::array<int, 2>> pipes(300);
  for (auto& p : pipes) ASSERT_EQ(::pipe(p.data()), 0);
  EXPECT_EQ(OpenFds(), ListedFds());
  // Close every other one: holes in the table are not counted.
  const std::uint64_t with_all = OpenFds();
  for (std::size_t i = 0; i < pipes.size(); i += 2) ::close(pipes[i][0]);
  EXPECT_EQ(OpenFds(), with_all - 150);
  EXPECT_EQ(OpenFds(), ListedFds());
  for (std::size_t i = 0; i < pipes.size(); ++i) {
    if (i % 2 != 0) ::close(pipes[i][0]);
    ::close(pipes[i][1]);
  }
}

// process_max_fds is the soft RLIMIT_NOFILE, as every Prometheus client library exports it.
TEST(ProcessMetrics, MaxDescriptorsIsTheSoftLimit) {
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit lower = before;
  lower.rlim_cur = 4000;
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max < lower.rlim_cur) lower.rlim_cur = 100;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lower), 0);
  Result<HostConstants> host = ReadHostConstants();
  ASSERT_TRUE(host.ok());
  Result<ProcessMetrics> m = ReadProcessMetrics(*host);
  ::setrlimit(RLIMIT_NOFILE, &before);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->max_fds, std::optional<std::uint64_t>(lower.rlim_cur));
}

}  // namespace
}  // namespace neuronmon::daemon
