// neuron-monitord as a process: the real binary with a temp config and socket, a test
// NOTIFY_SOCKET receiving its sd_notify messages, SIGHUP with a good and a bad config, SIGTERM.
// Every process started is waited for (and killed if a check fails).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/integration/child_process.h"
#include "tests/integration/raw_client.h"

extern char** environ;

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using Body = v1::Envelope::BodyCase;
namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Receives sd_notify datagrams.
class NotifySocket {
 public:
  explicit NotifySocket(const fs::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  ~NotifySocket() { ::close(fd_); }
  // Waits for a datagram containing `text`; returns everything received meanwhile.
  bool WaitFor(const std::string& text, milliseconds timeout, std::string* seen = nullptr) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      const std::string msg(buf, static_cast<std::size_t>(n));
      if (seen) *seen += msg + "\n";
      if (msg.find(text) != std::string::npos) return true;
    }
  }
  std::string env() const { return "NOTIFY_SOCKET=" + path_.string(); }

 private:
  fs::path path_;
  int fd_ = -1;
};

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("neuronmon-proc-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void WriteConfig(const fs::path& file, const fs::path& socket, const std::string& period) {
  std::ofstream(file) << "// test config\n{\n  \"device\": \"sim:trn1.2xlarge\",\n  \"period\": \""
                      << period << "\",\n  \"listeners\": {\"unix\": {\"path\": \""
                      << socket.string() << "\"}, \"metrics\": {\"address\": \"\"}},\n"
                      << "  \"recorder\": {\"directory\": \""
                      << (socket.parent_path().parent_path() / "archive").string() << "\"},\n"
                      << "  \"incidents\": {\"directory\": \""
                      << (socket.parent_path().parent_path() / "incidents").string() << "\"}\n}\n";
}

TEST(DaemonProcess, ReadyReloadAndStopUnderATestNotifySocket) {
  TempDir dir;
  const fs::path config = dir.path / "neuron-monitord.json";
  const fs::path socket = dir.path / "run" / "d.sock";
  WriteConfig(config, socket, "100ms");
  NotifySocket notify(dir.path / "notify.sock");
  Process daemon({NEURONMON_DAEMON_BINARY, "--config", config.string()}, {notify.env()},
                 dir.path / "daemon.log");
  ASSERT_GT(daemon.pid(), 0);
  std::string seen;
  ASSERT_TRUE(notify.WaitFor("READY=1", milliseconds(10000), &seen))
      << Slurp(dir.path / "daemon.log");
  ASSERT_TRUE(fs::exists(socket)) << "READY=1 only once listening";

  RawClient client(socket.string());
  client.Hello();
  ASSERT_TRUE(client.ReadUntil(Body::kWelcome).has_value());
  v1::Subscribe s;
  s.add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
  client.Subscribe(s);
  ASSERT_TRUE(client.ReadUntil(Body::kReport).has_value());
  EXPECT_TRUE(notify.WaitFor("STATUS=sampling sim:trn1.2xlarge", milliseconds(3000), &seen))
      << seen;

  // SIGHUP with a good config: RELOADING=1, READY=1, a RELOADED notice, the new period in force.
  WriteConfig(config, socket, "200ms");
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(notify.WaitFor("RELOADING=1", milliseconds(5000), &seen)) << seen;
  EXPECT_NE(seen.find("MONOTONIC_USEC="), std::string::npos);
  EXPECT_TRUE(notify.WaitFor("READY=1", milliseconds(5000), &seen));
  std::optional<v1::Envelope> reloaded;
  while (!reloaded) {
    auto e = client.Read(milliseconds(5000));
    ASSERT_TRUE(e.has_value());
    if (e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_RELOADED) reloaded = e;
  }
  EXPECT_NE(reloaded->notice().text().find("every 200ms"), std::string::npos);
  auto report = client.ReadUntil(Body::kReport);
  ASSERT_TRUE(report.has_value());
  const double period_ms =
      static_cast<double>(report->report().runtimes(0).neuroncore_counters().period_ns()) / 1e6;
  // The old period was 100 ms: at least the new one's (less its jitter) is in force. A loaded
  // machine may sample late, so no upper bound.
  EXPECT_GE(period_ms, 150);

  // SIGHUP with a broken config: reported, the old one kept, clients keep their stream.
  std::ofstream(config) << "{ \"period\": \"5\" ";
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(notify.WaitFor("READY=1", milliseconds(5000), &seen));
  EXPECT_TRUE(client.ReadUntil(Body::kReport).has_value());
  for (int i = 0;
       i < 100 && Slurp(dir.path / "daemon.log").find("keeping the previous") == std::string::npos;
       ++i) {
    ::usleep(20000);
  }
  const std::string log = Slurp(dir.path / "daemon.log");
  EXPECT_NE(log.find(config.string() + ": parse error"), std::string::npos) << log;
  EXPECT_NE(log.find("configuration not reloaded; keeping the previous one"), std::string::npos);

  // A number out of a double's range used to throw out of the reload, leaving the daemon deaf to
  // every later signal: it is one more rejected file.
  std::ofstream(config) << "{ \"period\": 1e400 }";
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(notify.WaitFor("READY=1", milliseconds(5000), &seen));
  EXPECT_TRUE(client.ReadUntil(Body::kReport).has_value());

  // SIGTERM: STOPPING=1, a shutdown notice, exit 0 within 2 s, the socket removed.
  const auto stop_at = std::chrono::steady_clock::now();
  daemon.Signal(SIGTERM);
  EXPECT_TRUE(notify.WaitFor("STOPPING=1", milliseconds(2000), &seen));
  std::optional<v1::Envelope> bye;
  while (auto e = client.Read(milliseconds(2000))) {
    if (e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_SHUTDOWN) bye = e;
  }
  EXPECT_TRUE(bye.has_value());
  const std::optional<int> status = daemon.Wait(milliseconds(2000));
  ASSERT_TRUE(status.has_value()) << "still running 2 s after SIGTERM";
  EXPECT_EQ(*status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, std::chrono::seconds(2));
  EXPECT_FALSE(fs::exists(socket));
}

TEST(DaemonProcess, CheckConfigListsEveryProblem) {
  TempDir dir;
  const fs::path config = dir.path / "bad.json";
  std::ofstream(config) << R"({"period": "1ms", "limits": {"queue_depth": 0}, "colour": "blue"})";
  Process check({NEURONMON_DAEMON_BINARY, "--config", config.string(), "--check-config"}, {},
                dir.path / "out.txt");
  EXPECT_EQ(check.Wait(milliseconds(10000)), 1);
  const std::string out = Slurp(dir.path / "out.txt");
  EXPECT_NE(out.find(config.string() + ": colour: unknown field"), std::string::npos) << out;
  EXPECT_NE(out.find(config.string() + ": period: "), std::string::npos) << out;
  EXPECT_NE(out.find(config.string() + ": limits.queue_depth: "), std::string::npos) << out;

  WriteConfig(config, dir.path / "d.sock", "1s");
  Process good({NEURONMON_DAEMON_BINARY, "--config", config.string(), "--check-config"}, {},
               dir.path / "out2.txt");
  EXPECT_EQ(good.Wait(milliseconds(10000)), 0);
  EXPECT_EQ(Slurp(dir.path / "out2.txt"), config.string() + ": configuration is valid\n");
}

TEST(DaemonProcess, PrintDefaultConfigIsValidConfig) {
  TempDir dir;
  Process print({NEURONMON_DAEMON_BINARY, "--print-default-config"}, {}, dir.path / "default.json");
  ASSERT_EQ(print.Wait(milliseconds(10000)), 0);
  Process check(
      {NEURONMON_DAEMON_BINARY, "--config", (dir.path / "default.json").string(), "--check-config"},
      {}, dir.path / "out.txt");
  EXPECT_EQ(check.Wait(milliseconds(10000)), 0) << Slurp(dir.path / "out.txt");
}

// A frame protobuf cannot parse (a string field with invalid UTF-8) is the daemon's error to
// report, once, to that client; libprotobuf's own "[libprotobuf ERROR ...]" line per frame, which a
// peer could make flood the journal, is not written.
TEST(DaemonProcess, UnparsableFramesDoNotFloodTheLog) {
  TempDir dir;
  const fs::path config = dir.path / "neuron-monitord.json";
  const fs::path socket = dir.path / "run" / "d.sock";
  WriteConfig(config, socket, "100ms");
  Process daemon({NEURONMON_DAEMON_BINARY, "--config", config.string()}, {},
                 dir.path / "daemon.log");
  ASSERT_GT(daemon.pid(), 0);
  for (int i = 0; i < 200 && !fs::exists(socket); ++i) ::usleep(20000);
  for (int i = 0; i < 5; ++i) {
    RawClient client(socket.string());
    client.Hello();
    ASSERT_TRUE(client.ReadUntil(Body::kWelcome).has_value());
    // Envelope{subscribe: Subscribe{tag_filter: "\xff"}}, which proto3 refuses to parse.
    client.SendBytes(std::string("\x05\x1a\x03\x12\x01\xff", 6));
    auto error = client.ReadUntil(Body::kError);
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->error().code(), v1::ERROR_CODE_MALFORMED_FRAME);
  }
  const std::string log = Slurp(dir.path / "daemon.log");
  EXPECT_EQ(log.find("libprotobuf"), std::string::npos) << log;
}

// CPU time (user + system) the process has used so far.
double CpuSeconds(pid_t pid) {
  std::istringstream stat(Slurp("/proc/" + std::to_string(pid) + "/stat"));
  std::string field;
  // Fields 14 and 15 are utime and stime, after "pid (comm) state ...". comm has no spaces here.
  for (int i = 1; i <= 13; ++i) stat >> field;
  double utime = 0, stime = 0;
  stat >> utime >> stime;
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Out of descriptors, the listening socket stays readable: the daemon used to retry accept at
// once, spinning a core and logging every failure. It backs off and logs once per interval, and
// accepts again as soon as descriptors are free.
TEST(DaemonProcess, AcceptBacksOffWhenOutOfDescriptors) {
  TempDir dir;
  const fs::path config = dir.path / "neuron-monitord.json";
  const fs::path socket = dir.path / "run" / "d.sock";
  WriteConfig(config, socket, "100ms");
  Process daemon({"/usr/bin/prlimit", "--nofile=48:48", "--", NEURONMON_DAEMON_BINARY, "--config",
                  config.string()},
                 {}, dir.path / "daemon.log");
  ASSERT_GT(daemon.pid(), 0);
  for (int i = 0; i < 200 && !fs::exists(socket); ++i) ::usleep(20000);
  ASSERT_TRUE(fs::exists(socket)) << Slurp(dir.path / "daemon.log");
  std::vector<std::unique_ptr<RawClient>> hogs;
  for (int i = 0; i < 80; ++i) hogs.push_back(std::make_unique<RawClient>(socket.string()));
  ::usleep(300000);  // the daemon has run out of descriptors
  const double cpu_before = CpuSeconds(daemon.pid());
  ::usleep(1500000);
  const double cpu = CpuSeconds(daemon.pid()) - cpu_before;
  const std::string log = Slurp(dir.path / "daemon.log");
  EXPECT_GE(Count(log, "failed: Too many open files"), 1u) << log.substr(0, 2000);
  EXPECT_LE(Count(log, "failed: Too many open files"), 2u) << "rate-limited";
  EXPECT_LT(cpu, 0.5) << "spinning on accept";
  hogs.clear();
  RawClient client(socket.string());
  client.Hello();
  EXPECT_TRUE(client.ReadUntil(Body::kWelcome, milliseconds(5000)).has_value())
      << "accepting again once descriptors are free" << Slurp(dir.path / "daemon.log");
}

}  // namespace
}  // namespace neuronmon::testing
