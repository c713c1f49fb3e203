// Where and how the client connects. A connect that cannot complete — a listener whose backlog is
// full, over TCP or a unix socket — ends at the connect timeout instead of hanging; a socket in
// the per-user /tmp fallback directory is used only when that directory is the user's own and
// private, so an explicit --socket in one that others can write to is an error.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "client/client.h"
#include "proto/common/socket_path.h"

namespace neuronmon::testing {
namespace {

using client::Client;
using client::ClientOptions;
using client::Endpoint;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A listening socket nobody accepts on. With `fill`, its backlog is full: a new connection can
// only wait. Its descriptors are closed on destruction; the caller removes a unix socket's file.
class Listener {
 public:
  // TCP on 127.0.0.1 (an ephemeral port) when `unix_path` is empty, else a unix socket there.
  Listener(const std::string& unix_path, bool fill) {
    const bool tcp = unix_path.empty();
    fd_ = ::socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_storage addr = Address(unix_path);
    socklen_t len = tcp ? sizeof(sockaddr_in) : sizeof(sockaddr_un);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 0) != 0) {
      ADD_FAILURE() << "cannot listen: " << std::strerror(errno);
      return;
    }
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr_), &len);
    // A backlog of 0 holds one connection: the next ones wait (TCP: SYNs dropped; unix: EAGAIN).
    for (int i = 0; fill && i < 4; ++i) {
      const int c =
          ::socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      (void)::connect(c, reinterpret_cast<sockaddr*>(&addr_), len);
      fillers_.push_back(c);
    }
  }
  ~Listener() {
    for (int c : fillers_) ::close(c);
    ::close(fd_);
  }
  std::uint16_t port() const {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&addr_)->sin_port);
  }

 private:
  static sockaddr_storage Address(const std::string& unix_path) {
    sockaddr_storage addr{};
    if (unix_path.empty()) {
      auto* in = reinterpret_cast<sockaddr_in*>(&addr);
      in->sin_family = AF_INET;
      in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
      auto* un = reinterpret_cast<sockaddr_un*>(&addr);
      un->sun_family = AF_UNIX;
      std::strncpy(un->sun_path, unix_path.c_str(), sizeof un->sun_path - 1);
    }
    return addr;
  }

  int fd_ = -1;
  sockaddr_storage addr_{};
  std::vector<int> fillers_;
};

std::filesystem::path TempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("neuronmon-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

ClientOptions Quick(Endpoint endpoint) {
  ClientOptions o;
  o.client_name = "connect-test";
  o.endpoint = std::move(endpoint);
  o.reconnect = false;
  o.connect_timeout = milliseconds(300);
  o.handshake_timeout = seconds(2);
  return o;
}

TEST(ConnectTimeout, ATcpListenerThatCannotAcceptEndsAtTheTimeout) {
  Listener full("", true);
  Endpoint ep;
  ep.kind = Endpoint::Kind::kTcp;
  ep.host = "127.0.0.1";
  ep.port = full.port();
  const auto start = std::chrono::steady_clock::now();
  auto c = Client::Connect(Quick(ep));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "cannot connect to 127.0.0.1:" + std::to_string(full.port()) + ": timed out");
  EXPECT_LT(took, seconds(5)) << "a blocking connect waits for the kernel's SYN retries (minutes)";
}

TEST(ConnectTimeout, AUnixListenerWithAFullBacklogEndsAtTheTimeout) {
  const std::filesystem::path dir = TempDir("full-backlog");
  const std::string path = (dir / "d.sock").string();
  {
    Listener full(path, true);
    Endpoint ep;
    ep.kind = Endpoint::Kind::kUnix;
    ep.path = path;
    const auto start = std::chrono::steady_clock::now();
    auto c = Client::Connect(Quick(ep));
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().message(), "cannot connect to " + path + ": timed out");
    EXPECT_LT(took, seconds(5)) << "a blocking connect waits for room in the backlog forever";
  }
  std::filesystem::remove_all(dir);
}

// The real /tmp/neuron-monitor-<uid>, made for the test (which is skipped when it exists) with a
// listening socket in it: the client refuses the directory before connecting.
TEST(SocketDirectory, AnExplicitSocketInAFallbackDirectoryOthersCanWriteIsRefused) {
  const auto uid = static_cast<unsigned>(::geteuid());
  const std::string dir = FallbackSocketDirectory(uid);
  if (std::filesystem::exists(dir)) GTEST_SKIP() << dir << " exists; not touching it";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  const std::string path = dir + "/neuron-monitord.sock";
  Status refused = Status::Ok();
  {
    Listener listening(path, false);
    Endpoint ep;
    ep.kind = Endpoint::Kind::kUnix;
    ep.path = path;
    refused = Client::Connect(Quick(ep)).status();
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(refused.message(),
            dir + " has mode 0777, which lets other users replace the socket; it must be 0700");
}

}  // namespace
}  // namespace neuronmon::testing
