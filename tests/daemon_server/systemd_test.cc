#include "daemon/server/systemd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

namespace neuronmon::daemon {
namespace {

// Sets (or, given nullopt, unsets) an environment variable and restores it on destruction.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    Apply(value);
  }
  ~ScopedEnv() { Apply(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Apply(const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name_, value->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

std::string Pid() { return std::to_string(::getpid()); }

std::filesystem::path MakeTempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "neuronmon-sd-XXXXXX").string();
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

std::uint64_t MonotonicMicros() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1'000;
}

// A unix datagram socket standing in for systemd's notify socket.
class NotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    path_ = (dir_ / "notify").string();
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(path_.size(), sizeof addr.sun_path);
    std::strcpy(addr.sun_path, path_.c_str());
    ASSERT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    env_.emplace("NOTIFY_SOCKET", path_);
  }
  void TearDown() override {
    env_.reset();
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove_all(dir_);
  }

  // The next datagram already queued, or "<none>"; never blocks.
  std::string Received() {
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    return n < 0 ? "<none>" : std::string(buf, static_cast<size_t>(n));
  }

  Notifier notifier_;
  std::filesystem::path dir_;
  std::string path_;
  int fd_ = -1;
  std::optional<ScopedEnv> env_;
};

TEST_F(NotifierTest, SendsEachStateAsOneDatagram) {
  ASSERT_TRUE(notifier_.Ready().ok());
  EXPECT_EQ(Received(), "READY=1");
  ASSERT_TRUE(notifier_.Stopping().ok());
  EXPECT_EQ(Received(), "STOPPING=1");
  ASSERT_TRUE(notifier_.Watchdog().ok());
  EXPECT_EQ(Received(), "WATCHDOG=1");
  EXPECT_EQ(Received(), "<none>");
}

TEST_F(NotifierTest, StatusSendsTheTextOnOneLine) {
  ASSERT_TRUE(notifier_.Status("3 clients, last sample 0.2 s ago").ok());
  EXPECT_EQ(Received(), "STATUS=3 clients, last sample 0.2 s ago");
  ASSERT_TRUE(notifier_.Status("oops\nREADY=1").ok());
  EXPECT_EQ(Received(), "STATUS=oops READY=1");
}

TEST_F(NotifierTest, ReloadingCarriesTheMonotonicTime) {
  const std::uint64_t before = MonotonicMicros();
  ASSERT_TRUE(notifier_.Reloading().ok());
  const std::uint64_t after = MonotonicMicros();
  const std::string datagram = Received();
  const std::string head = "RELOADING=1\nMONOTONIC_USEC=";
  ASSERT_EQ(datagram.substr(0, head.size()), head);
  const std::string digits = datagram.substr(head.size());
  ASSERT_FALSE(digits.empty());
  ASSERT_EQ(digits.find_first_not_of("0123456789"), std::string::npos) << datagram;
  const std::uint64_t usec = std::stoull(digits);
  EXPECT_GE(usec, before);
  EXPECT_LE(usec, after);
}

TEST_F(NotifierTest, UnreachableSocketIsAnIoError) {
  ScopedEnv missing("NOTIFY_SOCKET", (dir_ / "no-such-socket").string());
  const Status status = notifier_.Ready();
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("READY=1"), std::string::npos) << status.message();
}

TEST(Notifier, IsANoOpOutsideSystemd) {
  ScopedEnv unset("NOTIFY_SOCKET", std::nullopt);
  const Notifier notifier;
  EXPECT_TRUE(notifier.Ready().ok());
  EXPECT_TRUE(notifier.Status("x").ok());
  EXPECT_TRUE(notifier.Reloading().ok());
  EXPECT_TRUE(notifier.Stopping().ok());
  EXPECT_TRUE(notifier.Watchdog().ok());
}

TEST(Notifier, WatchdogIntervalComesFromWatchdogUsecForThisProcess) {
  const Notifier notifier;
  {
    ScopedEnv usec("WATCHDOG_USEC", "10000000");
    ScopedEnv pid("WATCHDOG_PID", Pid());
    EXPECT_EQ(notifier.WatchdogInterval(), std::chrono::microseconds(10'000'000));
  }
  {
    ScopedEnv usec("WATCHDOG_USEC", "2500000");
    ScopedEnv pid("WATCHDOG_PID", std::nullopt);
    EXPECT_EQ(notifier.WatchdogInterval(), std::chrono::microseconds(2'500'000));
  }
}

TEST(Notifier, WatchdogIntervalIsAbsentWhenOffForeignOrMalformed) {
  const Notifier notifier;
  {
    ScopedEnv usec("WATCHDOG_USEC", std::nullopt);
    EXPECT_EQ(notifier.WatchdogInterval(), std::nullopt);
  }
  {
    ScopedEnv usec("WATCHDOG_USEC", "10000000");
    ScopedEnv pid("WATCHDOG_PID", std::to_string(::getpid() + 1));
    EXPECT_EQ(notifier.WatchdogInterval(), std::nullopt);
  }
  {
    ScopedEnv usec("WATCHDOG_USEC", "ten seconds");
    ScopedEnv pid("WATCHDOG_PID", Pid());
    EXPECT_EQ(notifier.WatchdogInterval(), std::nullopt);
  }
}

// Lets a test put its own socket at a fixed fd number (3, 4, ...) and puts back whatever was there.
class ScopedFdSlot {
 public:
  explicit ScopedFdSlot(int slot) : slot_(slot) {
    old_flags_ = ::fcntl(slot, F_GETFD);
    if (old_flags_ >= 0) saved_ = ::fcntl(slot, F_DUPFD_CLOEXEC, 100);
  }
  ~ScopedFdSlot() {
    if (saved_ >= 0) {
      ::dup2(saved_, slot_);
      ::fcntl(slot_, F_SETFD, old_flags_);
      ::close(saved_);
    } else if (installed_) {
      ::close(slot_);
    }
  }
  ScopedFdSlot(const ScopedFdSlot&) = delete;
  ScopedFdSlot& operator=(const ScopedFdSlot&) = delete;

  // False when the slot was in use and could not be saved.
  bool usable() const { return old_flags_ < 0 || saved_ >= 0; }
  // Moves `fd` (which this takes over) to the slot.
  bool Install(int fd) {
    if (fd < 0) return false;
    installed_ = true;
    if (fd == slot_) return true;
    const bool moved = ::dup2(fd, slot_) == slot_;
    ::close(fd);
    return moved;
  }

 private:
  int slot_;
  int old_flags_ = -1;
  int saved_ = -1;
  bool installed_ = false;
};

int ListeningUnixSocket(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int ListeningTcpSocket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class ListenFdsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  ScopedEnv pid_{"LISTEN_PID", std::nullopt};
  ScopedEnv fds_{"LISTEN_FDS", std::nullopt};
  ScopedEnv names_{"LISTEN_FDNAMES", std::nullopt};
};

TEST_F(ListenFdsTest, EmptyWithoutSocketActivation) {
  Result<std::vector<ListenSocket>> sockets = ListenFds();
  ASSERT_TRUE(sockets.ok()) << sockets.status().ToString();
  EXPECT_TRUE(sockets->empty());
}

TEST_F(ListenFdsTest, EmptyWhenTheSocketsAreForAnotherProcess) {
  ScopedEnv pid("LISTEN_PID", std::to_string(::getpid() + 1));
  ScopedEnv fds("LISTEN_FDS", "1");
  Result<std::vector<ListenSocket>> sockets = ListenFds();
  ASSERT_TRUE(sockets.ok()) << sockets.status().ToString();
  EXPECT_TRUE(sockets->empty());
}

TEST_F(ListenFdsTest, MalformedVariablesAreAClearError) {
  ScopedEnv pid("LISTEN_PID", Pid());
  for (const char* bad : {"abc", "0", "-1"}) {
    ScopedEnv fds("LISTEN_FDS", bad);
    Result<std::vector<ListenSocket>> sockets = ListenFds();
    ASSERT_FALSE(sockets.ok()) << bad;
    EXPECT_EQ(sockets.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(sockets.status().message().find("LISTEN_FDS=\"" + std::string(bad) + "\""),
              std::string::npos)
        << sockets.status().message();
  }
  ScopedEnv bad_pid("LISTEN_PID", "me");
  ScopedEnv fds("LISTEN_FDS", "1");
  EXPECT_FALSE(ListenFds().ok());
}

// The inode behind `fd`, or nullopt when it is not open.
std::optional<ino_t> InodeOf(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return st.st_ino;
}

TEST_F(ListenFdsTest, ReturnsTheUnixSocketAtFd3AndTheTestRestoresFd3) {
  const std::optional<ino_t> before = InodeOf(3);
  {
    ScopedFdSlot slot(3);
    if (!slot.usable()) GTEST_SKIP() << "fd 3 is in use and cannot be saved";
    ASSERT_TRUE(slot.Install(ListeningUnixSocket(dir_ / "viewer.sock")));
    ScopedEnv pid("LISTEN_PID", Pid());
    ScopedEnv fds("LISTEN_FDS", "1");

    Result<std::vector<ListenSocket>> sockets = ListenFds();
    ASSERT_TRUE(sockets.ok()) << sockets.status().ToString();
    ASSERT_EQ(sockets->size(), 1u);
    EXPECT_EQ((*sockets)[0].fd, 3);
    EXPECT_EQ((*sockets)[0].name, "unknown");
    EXPECT_EQ((*sockets)[0].kind, ListenSocketKind::kUnixStream);
    EXPECT_NE(::fcntl(3, F_GETFD) & FD_CLOEXEC, 0);
  }
  EXPECT_EQ(InodeOf(3), before);
}

TEST_F(ListenFdsTest, NamesAndKindsOfSeveralSockets) {
  ScopedFdSlot slot3(3);
  ScopedFdSlot slot4(4);
  ScopedFdSlot slot5(5);
  if (!slot3.usable() || !slot4.usable() || !slot5.usable()) {
    GTEST_SKIP() << "fds 3-5 are in use and cannot be saved";
  }
  ASSERT_TRUE(slot3.Install(ListeningUnixSocket(dir_ / "viewer.sock")));
  const int tcp = ListeningTcpSocket();
  if (tcp < 0) GTEST_SKIP() << "no loopback TCP here";
  ASSERT_TRUE(slot4.Install(tcp));
  ASSERT_TRUE(slot5.Install(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)));
  ScopedEnv pid("LISTEN_PID", Pid());
  ScopedEnv fds("LISTEN_FDS", "3");
  ScopedEnv names("LISTEN_FDNAMES", "viewer:metrics:odd");

  Result<std::vector<ListenSocket>> sockets = ListenFds();
  ASSERT_TRUE(sockets.ok()) << sockets.status().ToString();
  ASSERT_EQ(sockets->size(), 3u);
  EXPECT_EQ((*sockets)[0].name, "viewer");
  EXPECT_EQ((*sockets)[0].kind, ListenSocketKind::kUnixStream);
  EXPECT_EQ((*sockets)[1].fd, 4);
  EXPECT_EQ((*sockets)[1].name, "metrics");
  EXPECT_EQ((*sockets)[1].kind, ListenSocketKind::kTcp);
  EXPECT_EQ((*sockets)[2].fd, 5);
  EXPECT_EQ((*sockets)[2].name, "odd");
  EXPECT_EQ((*sockets)[2].kind, ListenSocketKind::kOther);

  ScopedEnv short_names("LISTEN_FDNAMES", "viewer:metrics");
  Result<std::vector<ListenSocket>> mismatched = ListenFds();
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("LISTEN_FDNAMES=\"viewer:metrics\""),
            std::string::npos)
      << mismatched.status().message();
}

TEST(ListenSocketKindName, NamesEachKind) {
  EXPECT_STREQ(ListenSocketKindName(ListenSocketKind::kUnixStream), "unix stream");
  EXPECT_STREQ(ListenSocketKindName(ListenSocketKind::kTcp), "tcp");
  EXPECT_STREQ(ListenSocketKindName(ListenSocketKind::kOther), "other");
}

}  // namespace
}  // namespace neuronmon::daemon
