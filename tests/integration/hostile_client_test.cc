// The clients against a daemon they cannot trust (HostileDaemon): an inventory too large to be
// real, a frame built to blow up when parsed, escape sequences in every string, garbage after the
// Welcome, a stream that goes silent, a flood the caller does not read, a resume point it says is
// not its own. The client library, neuron-ls, neuron-monitor and neuron-top must refuse, recover
// or show the text harmlessly — never allocate without bound, hang or pass escapes to a terminal.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/client.h"
#include "proto/common/socket_path.h"
#include "tests/integration/client_events.h"
#include "tests/integration/hostile_daemon.h"

namespace neuronmon::testing {
namespace {

using client::Client;
using client::ClientOptions;
using client::Endpoint;
using client::Event;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Talk = HostileDaemon::Conversation;

// Every terminal-hostile form at once: OSC title, clear screen, CR, C1 CSI, bidi override.
const std::string kEvil =
    "ok\x1b]0;pwned\x07\x1b[2J\r\xc2\x9b"
    "31m\xe2\x80\xae"
    "end";

ClientOptions Options(const HostileDaemon& d) {
  ClientOptions o;
  o.client_name = "hostile-test";
  o.endpoint.kind = Endpoint::Kind::kUnix;
  o.endpoint.path = d.socket_path();
  o.subscribe.add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
  o.initial_backoff = milliseconds(20);
  o.max_backoff = milliseconds(100);
  o.handshake_timeout = seconds(2);
  return o;
}

v1::Report SmallReport(std::uint64_t seq, const std::string& tag) {
  v1::Report r;
  r.set_seq(seq);
  r.add_groups(v1::GROUP_NEURONCORE_COUNTERS);
  v1::RuntimeReport* rt = r.add_runtimes();
  rt->set_pid(42);
  rt->set_tag(tag);
  rt->set_error(tag);
  v1::CoreCounters* c = rt->mutable_neuroncore_counters()->add_cores();
  c->set_index(0);
  c->set_utilization_percent(50);
  return r;
}

TEST(HostileDaemon, AnInventoryTooLargeToBeRealIsRefused) {
  HostileDaemon d([](Talk& t) {
    v1::Inventory inv = HostileDaemon::SmallInventory();
    for (int i = 1; i < 100000; ++i) inv.add_devices()->set_index(static_cast<std::uint32_t>(i));
    t.send(HostileDaemon::WelcomeFrame(inv));
  });
  auto c = Client::Connect(Options(d));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("the daemon's inventory lists 100000 devices (at most 4096"),
            std::string::npos)
      << c.status().message();
}

// 8 MiB of empty devices: four million sub-messages, gigabytes once parsed. Refused on the wire.
TEST(HostileDaemon, AFrameThatWouldExplodeWhenParsedIsRefusedUnparsed) {
  HostileDaemon d([](Talk& t) {
    std::string devices;
    for (int i = 0; i < 4 * 1024 * 1024; ++i) devices += std::string("\x1a\x00", 2);  // field 3
    std::string welcome;
    // Envelope.welcome (2) { Welcome.inventory (3) { devices... } }
    auto varint = [](std::size_t v) {
      std::string out;
      while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
      }
      out.push_back(static_cast<char>(v));
      return out;
    };
    welcome = "\x1a" + varint(devices.size()) + devices;
    const std::string envelope = "\x12" + varint(welcome.size()) + welcome;
    t.send(varint(envelope.size()) + envelope);
  });
  ClientOptions o = Options(d);
  o.handshake_timeout = seconds(20);  // 8 MiB through a sanitized build on a busy machine
  auto c = Client::Connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "unix:" + d.socket_path() +
                                      ": frame of 8388618 bytes holds more than 200000 messages, "
                                      "strings and unknown fields, or is malformed");
}

TEST(HostileDaemon, GarbageAfterTheWelcomeIsACorruptStreamThenAReconnect) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
    if (t.connection == 0) {
      t.send(std::string("\xff\xff\xff\xff\xff\xff garbage", 14));
    } else {
      t.send(HostileDaemon::ReportFrame(SmallReport(1, "fine")));
    }
  });
  auto c = Client::Connect(Options(d));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto lost = NextOf(**c, Event::Kind::kDisconnected);
  ASSERT_TRUE(lost.has_value());
  EXPECT_NE(lost->text.find("corrupt stream from unix:"), std::string::npos) << lost->text;
  auto report = NextOf(**c, Event::Kind::kReport);
  ASSERT_TRUE(report.has_value()) << "reconnected to the daemon";
  EXPECT_EQ(report->report.runtimes(0).tag(), "fine");
}

// A daemon that completes the handshake and then sends nothing — no reports, no heartbeats — is
// treated as lost once the stall timeout passes.
TEST(HostileDaemon, ASilentStreamIsDetected) {
  HostileDaemon d(
      [](Talk& t) { t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory())); });
  ClientOptions o = Options(d);
  o.stall_timeout = milliseconds(400);
  const auto t0 = std::chrono::steady_clock::now();
  auto c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto lost = NextOf(**c, Event::Kind::kDisconnected, seconds(5));
  ASSERT_TRUE(lost.has_value());
  EXPECT_NE(lost->text.find("nothing from unix:" + d.socket_path() + " for "), std::string::npos)
      << lost->text;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(400));
}

// The caller stops taking events: the client stops reading at max_queued_events instead of
// queueing the flood in its own memory.
TEST(HostileDaemon, AFloodTheCallerDoesNotReadIsNotQueued) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
    std::string burst;
    for (std::uint64_t seq = 1; seq <= 5000; ++seq) {
      burst += HostileDaemon::ReportFrame(SmallReport(seq, "flood"));
    }
    t.send(burst);  // blocks once the socket buffers are full, until the client reads again
  });
  ClientOptions o = Options(d);
  o.max_queued_events = 16;
  auto c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::this_thread::sleep_for(milliseconds(500));  // the reader fills the queue and waits
  EXPECT_EQ((*c)->queued_events(), 16u);
  // Taking events lets it read on.
  int more = 0;
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (more < 100 && std::chrono::steady_clock::now() < deadline) {
    if ((*c)->Next(milliseconds(50)).has_value()) ++more;
  }
  EXPECT_EQ(more, 100);
}

// A caller that stops taking events for longer than the stall timeout (a slow stdout, a long
// redraw) while the daemon streams steadily: the client waited for room, the daemon was never
// silent, and nothing is lost or reconnected.
TEST(HostileDaemon, ACallerThatFallsBehindIsNotTakenForASilentDaemon) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
    for (std::uint64_t seq = 1; seq <= 400; ++seq) {
      t.send(HostileDaemon::ReportFrame(SmallReport(seq, "steady")));
      std::this_thread::sleep_for(milliseconds(5));
    }
  });
  ClientOptions o = Options(d);
  o.max_queued_events = 8;
  o.stall_timeout = milliseconds(500);
  auto c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::this_thread::sleep_for(milliseconds(1500));  // the queue fills; the reader waits for room
  for (int taken = 0; taken < 150; ++taken) {
    std::optional<Event> e = (*c)->Next(seconds(5));
    ASSERT_TRUE(e.has_value()) << "after " << taken << " events";
    ASSERT_NE(e->kind, Event::Kind::kDisconnected) << e->text;
  }
}

// Connect queues its own events (kConnected, a notice) before the caller can take any: even a cap
// below that does not block it.
TEST(HostileDaemon, ConnectNeedsNoRoomInTheQueue) {
  HostileDaemon d(
      [](Talk& t) { t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory())); });
  ClientOptions o = Options(d);
  o.max_queued_events = 0;
  auto c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(NextOf(**c, Event::Kind::kConnected).has_value());
}

// A Resubscribe while the daemon is away is kept for the next connection; it does not end the
// backoff, which would turn reconnecting into a busy loop against a daemon that keeps failing.
TEST(HostileDaemon, AResubscribeWhileReconnectingKeepsTheBackoff) {
  std::atomic<int> connections{0};
  HostileDaemon d([&](Talk& t) {
    ++connections;
    if (t.connection == 0) {
      t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
      std::this_thread::sleep_for(milliseconds(100));
    }
    t.hang_up = true;  // later connections: closed during the handshake
  });
  ClientOptions o = Options(d);
  o.initial_backoff = o.max_backoff = milliseconds(200);
  auto c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(NextOf(**c, Event::Kind::kDisconnected).has_value());
  v1::Subscribe memory;
  memory.add_groups()->set_group(v1::GROUP_MEMORY_INFO);
  (*c)->Resubscribe(memory);
  const int before = connections;
  std::this_thread::sleep_for(seconds(1));
  EXPECT_LE(connections - before, 12) << "attempts 100-200 ms apart, not back to back";
}

// Large reports are capped by bytes too: a stalled caller does not make the client hold
// max_queued_events of them.
TEST(HostileDaemon, AFloodOfLargeReportsIsCappedInBytes) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
    v1::Report big = SmallReport(1, std::string(100 * 1024, 'x'));  // ~200 KB: tag and error
    for (std::uint64_t seq = 1; seq <= 200; ++seq) {
      big.set_seq(seq);
      t.send(HostileDaemon::ReportFrame(big));
    }
  });
  ClientOptions o = Options(d);
  o.max_queued_bytes = 1 << 20;
  auto c = Client::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::this_thread::sleep_for(milliseconds(500));  // the reader fills the queue and waits
  const std::size_t queued = (*c)->queued_events();
  EXPECT_GE(queued, 3u);
  EXPECT_LE(queued, 7u) << "about 1 MiB of 200 KB reports, plus the connect's own events";
}

// A resume point the daemon says is ahead of anything it produced is forgotten: the next
// connection does not ask to resume from it again.
TEST(HostileDaemon, ResumeAheadResetsTheResumePoint) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
    if (t.connection == 0) {
      t.send(HostileDaemon::ReportFrame(SmallReport(1000, "a")));
      v1::Envelope gap;
      gap.mutable_notice()->set_kind(v1::NOTICE_KIND_GAP);
      gap.mutable_notice()->set_gap_reason(v1::GAP_REASON_RESUME_AHEAD);
      gap.mutable_notice()->set_first_seq(11);
      gap.mutable_notice()->set_last_seq(1000);
      t.send(HostileDaemon::Frame(gap));
      std::this_thread::sleep_for(milliseconds(100));
      t.hang_up = true;
    }
  });
  auto c = Client::Connect(Options(d));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(NextOf(**c, Event::Kind::kDisconnected).has_value());
  ASSERT_TRUE(NextOf(**c, Event::Kind::kConnected).has_value());
  std::this_thread::sleep_for(milliseconds(200));
  const std::vector<v1::Subscribe> subs = d.subscribes();
  ASSERT_GE(subs.size(), 1u);
  EXPECT_FALSE(subs.back().has_resume_after_seq())
      << "asked to resume after " << subs.back().resume_after_seq();
}

// ---- The programs, as a user runs them against such a daemon.

struct Output {
  int status = -1;
  std::string out, err;
};

// Runs `argv` (no shell) with a deadline, capturing stdout and stderr.
Output RunProgram(const std::vector<std::string>& args, const std::string& env = "") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-hc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string command = "timeout 20 env " + env;
  for (const std::string& a : args) command += " '" + a + "'";
  command += " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  Output o;
  const int rc = std::system(command.c_str());
  o.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::stringstream out, err;
  out << std::ifstream(dir / "out").rdbuf();
  err << std::ifstream(dir / "err").rdbuf();
  o.out = out.str();
  o.err = err.str();
  std::filesystem::remove_all(dir);
  return o;
}

bool HasControlBytes(const std::string& text) {
  for (unsigned char ch : text) {
    if (ch == 0x1b || ch == '\r' || ch == 0x07) return true;
  }
  return text.find("\xc2\x9b") != std::string::npos ||
         text.find("\xe2\x80\xae") != std::string::npos;
}

v1::Inventory EvilInventory() {
  v1::Inventory inv = HostileDaemon::SmallInventory();
  inv.mutable_instance_info()->set_instance_type(kEvil);
  inv.mutable_instance_info()->set_instance_id(kEvil);
  inv.mutable_hardware_info()->set_neuron_device_type(kEvil);
  inv.mutable_devices(0)->set_pci_bdf(kEvil);
  v1::Process* p = inv.add_processes();
  p->set_pid(42);
  p->set_tag(kEvil);
  p->set_command(kEvil);
  p->set_runtime_version(kEvil);
  p->add_device_indices(0);
  p->add_core_ids(0);
  return inv;
}

TEST(HostileDaemon, NeuronLsShowsEscapeSequencesHarmlessly) {
  HostileDaemon d([](Talk& t) { t.send(HostileDaemon::WelcomeFrame(EvilInventory())); });
  const Output table = RunProgram({NEURONMON_LS_BINARY, "--socket", d.socket_path(), "-a"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("instance-type: ok"), std::string::npos) << table.out;
  EXPECT_FALSE(HasControlBytes(table.out)) << table.out;
  const Output json = RunProgram({NEURONMON_LS_BINARY, "--socket", d.socket_path(), "-j"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("ok\\u001b]0;pwned\\u0007"), std::string::npos)
      << "the JSON keeps the text, escaped: " << json.out;
  HostileDaemon huge([](Talk& t) {
    v1::Inventory inv = HostileDaemon::SmallInventory();
    for (int i = 1; i < 100000; ++i) inv.add_devices()->set_index(static_cast<std::uint32_t>(i));
    t.send(HostileDaemon::WelcomeFrame(inv));
  });
  const Output refused = RunProgram({NEURONMON_LS_BINARY, "--socket", huge.socket_path()});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("lists 100000 devices"), std::string::npos) << refused.err;
}

TEST(HostileDaemon, NeuronMonitorKeepsEscapesOutOfStderr) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(EvilInventory()));
    v1::Envelope error;
    error.mutable_error()->set_code(v1::ERROR_CODE_INVALID_SUBSCRIPTION);
    error.mutable_error()->set_message(kEvil);
    t.send(HostileDaemon::Frame(error));
    v1::Envelope bye;
    bye.mutable_notice()->set_kind(v1::NOTICE_KIND_SHUTDOWN);
    bye.mutable_notice()->set_text(kEvil);
    t.send(HostileDaemon::Frame(bye));
    t.send(HostileDaemon::ReportFrame(SmallReport(1, kEvil)));  // then --count 1 ends it
  });
  const Output o =
      RunProgram({NEURONMON_MONITOR_BINARY, "--socket", d.socket_path(), "--count", "1"});
  EXPECT_NE(o.err.find("the daemon refused: ok"), std::string::npos) << o.err;
  EXPECT_FALSE(HasControlBytes(o.err)) << o.err;
  EXPECT_NE(o.out.find("\\u001b]0;pwned"), std::string::npos) << "stdout JSON, escaped: " << o.out;
}

// A report whose strings are not UTF-8 fails to parse: the client says so once and reconnects.
// libprotobuf's own "[libprotobuf ERROR ...]" line for it (one per bad frame, as often as the
// daemon sends them) must not reach the programs' stderr or neuron-top's screen (neuron-top and
// neuron-ls silence it as neuron-monitor does, in main).
TEST(HostileDaemon, ProtobufsOwnParseErrorsStayOffStderr) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(HostileDaemon::SmallInventory()));
    if (t.connection == 0) {
      std::string frame = HostileDaemon::ReportFrame(SmallReport(1, "tag-XY"));
      const std::size_t at = frame.find("tag-XY");
      frame[at + 4] = '\xff';  // the tag is no longer UTF-8
      frame[at + 5] = '\xfe';
      t.send(frame);
    } else {
      t.send(HostileDaemon::ReportFrame(SmallReport(2, "fine")));
    }
  });
  const Output monitor =
      RunProgram({NEURONMON_MONITOR_BINARY, "--socket", d.socket_path(), "--count", "1"});
  EXPECT_EQ(monitor.status, 0) << monitor.err;
  EXPECT_NE(monitor.out.find("\"fine\""), std::string::npos) << monitor.out;
  EXPECT_EQ(monitor.err.find("libprotobuf"), std::string::npos) << monitor.err;
  EXPECT_NE(monitor.err.find("is not a neuronmon.v1.Envelope; reconnecting"), std::string::npos)
      << monitor.err;
}

TEST(HostileDaemon, NeuronTopDrawsEscapeSequencesHarmlessly) {
  HostileDaemon d([](Talk& t) {
    t.send(HostileDaemon::WelcomeFrame(EvilInventory()));
    v1::Report r = SmallReport(1, kEvil);
    r.add_groups(v1::GROUP_BOTTLENECK_ANALYSIS);
    v1::Finding* f = r.mutable_runtimes(0)->add_findings();
    f->set_kind(v1::FINDING_KIND_ERRORS);
    f->set_summary(kEvil);
    f->set_advice(kEvil);
    t.send(HostileDaemon::ReportFrame(r));
  });
  const Output o = RunProgram({NEURONMON_TOP_BINARY, "--once", "--socket", d.socket_path()},
                              "COLUMNS=120 LANG=C.UTF-8");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("ok"), std::string::npos) << o.out;
  EXPECT_FALSE(HasControlBytes(o.out)) << o.out;
  EXPECT_FALSE(HasControlBytes(o.err)) << o.err;
}

// ---- Who serves the socket, and where it is.

// Nobody's fallback directory, made first by another user (root here) with a socket in it: when
// nobody runs neuron-ls without $XDG_RUNTIME_DIR, that socket is skipped with a notice saying why,
// and neuron-ls falls back to the in-process simulator.
TEST(DaemonTrust, AnAutoDiscoveredSocketInADirectoryOfAnotherUserIsSkipped) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  const std::string dir = FallbackSocketDirectory(65534);
  if (std::filesystem::exists(kSystemSocketPath) || std::filesystem::exists(dir)) {
    GTEST_SKIP() << "a daemon socket or " << dir << " exists here";
  }
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/neuron-monitord.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  const Output o = RunProgram({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                               "-u", "XDG_RUNTIME_DIR", NEURONMON_LS_BINARY});
  ::close(fd);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("ignored " + path + ": " + dir + " is owned by uid 0, not 65534"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("running the simulator in-process"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("instance-type: "), std::string::npos) << o.out;
}

TEST(DaemonTrust, OnlyRootTheUserOrTheServiceUserIsTrusted) {
  EXPECT_TRUE(TrustedDaemonUid(0, 1000, std::nullopt));
  EXPECT_TRUE(TrustedDaemonUid(1000, 1000, std::nullopt));
  EXPECT_TRUE(TrustedDaemonUid(998, 1000, 998u));
  EXPECT_FALSE(TrustedDaemonUid(1001, 1000, 998u));
  EXPECT_FALSE(TrustedDaemonUid(998, 1000, std::nullopt));
}

// A socket served by another user (here: nobody) is refused before the token is sent.
TEST(DaemonTrust, ASocketServedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to serve a socket as another user";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-trust-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 0777);
  const std::string path = (dir / "d.sock").string();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t server = ::fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0)
      ::_exit(3);
    (void)!::write(ready[1], "x", 1);
    const int peer = ::accept(fd, nullptr, nullptr);
    char buf[256];
    const ssize_t n = peer >= 0 ? ::read(peer, buf, sizeof buf) : -1;
    ::_exit(n > 0 ? 4 : 0);  // 4: the client sent something (its Hello, its token)
  }
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ClientOptions o;
  o.endpoint.kind = Endpoint::Kind::kUnix;
  o.endpoint.path = path;
  o.token = "secret";
  auto c = Client::Connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "refusing the daemon at " + path +
                                      ": it runs as uid 65534, not root, you or the "
                                      "neuron-monitor user");
  int status = 0;
  ::waitpid(server, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the client sent it something";
  ::close(ready[0]);
  ::close(ready[1]);
  std::filesystem::remove_all(dir);
}

TEST(PrivateDirectory, OnlyARealDirectoryOfTheUsersOwnWithNoOtherAccess) {
  const std::filesystem::path base =
      std::filesystem::temp_directory_path() / ("neuronmon-private-" + std::to_string(::getpid()));
  std::filesystem::create_directories(base);
  const auto uid = static_cast<unsigned>(::geteuid());
  const std::string fresh = (base / "fresh").string();
  ASSERT_TRUE(EnsurePrivateDirectory(fresh, uid).ok());
  struct stat st {};
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(CheckPrivateDirectory(fresh, uid).ok());
  const std::string open = (base / "open").string();
  ::mkdir(open.c_str(), 0700);
  ::chmod(open.c_str(), 0777);
  EXPECT_EQ(EnsurePrivateDirectory(open, uid).message(),
            open + " has mode 0777, which lets other users replace the socket; it must be 0700");
  const std::string link = (base / "link").string();
  ASSERT_EQ(::symlink(fresh.c_str(), link.c_str()), 0);
  EXPECT_EQ(CheckPrivateDirectory(link, uid).message(), link + " is a symbolic link");
  EXPECT_EQ(CheckPrivateDirectory(fresh, uid + 1).message(),
            fresh + " is owned by uid " + std::to_string(uid) + ", not " + std::to_string(uid + 1));
  EXPECT_EQ(CheckPrivateDirectory((base / "none").string(), uid).code(), StatusCode::kNotFound);
  EXPECT_EQ(FallbackSocketDirectory(1000), "/tmp/neuron-monitor-1000");
  std::filesystem::remove_all(base);
}

TEST(ClientPolicy, BackoffIsJitteredIntoTheUpperHalf) {
  EXPECT_EQ(client::JitteredBackoff(seconds(2), 0.0), seconds(1));
  EXPECT_EQ(client::JitteredBackoff(seconds(2), 0.5), milliseconds(1500));
  EXPECT_EQ(client::JitteredBackoff(seconds(2), 1.0), seconds(2));
}

TEST(ClientPolicy, InventoriesWithinRealBoundsPass) {
  v1::Inventory inv = HostileDaemon::SmallInventory();
  EXPECT_TRUE(client::CheckInventory(inv).ok());
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(256);
  EXPECT_TRUE(client::CheckInventory(inv).ok());
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(257);
  EXPECT_EQ(client::CheckInventory(inv).message(),
            "the daemon's inventory lists 257 NeuronCores per device (at most 256 are "
            "possible); refusing it");
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(2);
  for (std::uint32_t core = 2; core < 300; ++core) inv.mutable_devices(0)->add_core_ids(core);
  EXPECT_EQ(client::CheckInventory(inv).message(),
            "the daemon's inventory lists 300 NeuronCores on one device (at most 256 are "
            "possible); refusing it");
}

}  // namespace
}  // namespace neuronmon::testing
