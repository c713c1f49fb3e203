// The stream server under abuse: pathological tag filters, floods of Subscribes and of unread
// errors, hoarded connection slots, resume points at the edges, a replay outrun by the history,
// loopback TCP around a restricted unix socket, a server destroyed with clients connected. Each
// test ends by showing that a well-behaved client is still served.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"
#include "tests/integration/raw_client.h"

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Body = v1::Envelope::BodyCase;

v1::Subscribe Groups(std::initializer_list<v1::Group> groups, std::string tag_filter = "") {
  v1::Subscribe s;
  for (v1::Group g : groups) s.add_groups()->set_group(g);
  s.set_tag_filter(std::move(tag_filter));
  return s;
}

void Welcome(RawClient& c) {
  c.Hello();
  ASSERT_TRUE(c.ReadUntil(Body::kWelcome).has_value());
}

// A well-behaved client gets its Welcome and a report promptly.
void ExpectServing(const DaemonFixture& d, milliseconds within = milliseconds(2000)) {
  const auto t0 = std::chrono::steady_clock::now();
  RawClient c(d.socket_path());
  c.Hello();
  ASSERT_TRUE(c.ReadUntil(Body::kWelcome, within).has_value());
  c.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS}));
  ASSERT_TRUE(c.ReadUntil(Body::kReport, within).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, within);
}

std::string Frames(const std::vector<v1::Envelope>& envelopes) {
  std::string out;
  for (const v1::Envelope& e : envelopes)
    out += *wire::EncodeFrame(e, wire::kDefaultInboundMaxFrame);
  return out;
}

v1::Envelope SubscribeEnvelope(const v1::Subscribe& s) {
  v1::Envelope e;
  *e.mutable_subscribe() = s;
  return e;
}

// The texts of the SUBSCRIBED notices `c` receives within `window`.
std::vector<std::string> SubscribedNotices(RawClient& c, milliseconds window) {
  std::vector<std::string> texts;
  const auto deadline = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < deadline) {
    auto e = c.Read(milliseconds(100));
    if (e && e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_SUBSCRIBED) {
      texts.push_back(e->notice().text());
    }
  }
  return texts;
}

// std::regex backtracked on (.*)*(.*)*X for over 30 s per tag, blocking every other client.
TEST(StreamAbuse, PathologicalTagFilterDoesNotStallOthers) {
  DaemonFixture d;
  RawClient bad(d.socket_path());
  Welcome(bad);
  bad.Subscribe(
      Groups({v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_EXECUTION_STATS}, "(.*)*(.*)*(.*)*X"));
  auto notice = bad.ReadUntil(Body::kNotice);
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->notice().kind(), v1::NOTICE_KIND_SUBSCRIBED);
  ASSERT_TRUE(bad.ReadUntil(Body::kReport).has_value());
  ExpectServing(d);
}

// ~22,000 nested parentheses crashed the daemon (SIGSEGV in std::regex's recursive compiler).
TEST(StreamAbuse, OverlongTagFilterIsOneClearError) {
  DaemonFixture d;
  RawClient c(d.socket_path());
  Welcome(c);
  c.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS},
                     std::string(22000, '(') + "a" + std::string(22000, ')')));
  auto error = c.ReadUntil(Body::kError);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->error().code(), v1::ERROR_CODE_INVALID_SUBSCRIPTION);
  EXPECT_FALSE(error->error().fatal());
  EXPECT_EQ(error->error().message(), "tag_filter is 44001 bytes long; the limit is 256 bytes");
  // The connection stays usable.
  c.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS}, "[invalid"));
  error = c.ReadUntil(Body::kError);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->error().message(),
            "tag_filter \"[invalid\" is not a valid regular expression: missing ]: [invalid");
  ExpectServing(d);
}

// A hundred Subscribes in one burst are applied as two: the first at once, the last when the
// interval has passed. Each used to build (and queue) a report of its own.
TEST(StreamAbuse, SubscribeFloodIsCoalescedToOnePerInterval) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.stream.subscribe_interval = milliseconds(300); });
  RawClient c(d.socket_path());
  Welcome(c);
  std::vector<v1::Envelope> burst;
  for (int i = 1; i <= 100; ++i) {
    v1::Subscribe s = Groups({v1::GROUP_NEURONCORE_COUNTERS});
    s.mutable_groups(0)->set_period_ns(static_cast<std::uint64_t>(i) * 50'000'000);
    burst.push_back(SubscribeEnvelope(s));
  }
  c.SendBytes(Frames(burst));
  const std::vector<std::string> subscribed = SubscribedNotices(c, seconds(2));
  ASSERT_EQ(subscribed.size(), 2u);
  EXPECT_EQ(subscribed[0], "neuroncore_counters every 50ms");
  EXPECT_EQ(subscribed[1], "neuroncore_counters every 5s");  // the last request wins
  ExpectServing(d);
}

// Compiling a new tag filter costs up to a few ms: one user gets filter_compiles_per_second of
// them, and the rest of a burst waits its turn (the latest request winning). A filter already
// compiled, by anyone, is free.
TEST(StreamAbuse, NewTagFiltersAreCompiledWithinTheUsersBudget) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.stream.subscribe_interval = Nanos::zero();
    c.stream.filter_compiles_per_second = 2;
  });
  RawClient c(d.socket_path());
  Welcome(c);
  std::vector<v1::Envelope> burst;
  for (int i = 0; i < 50; ++i) {
    burst.push_back(SubscribeEnvelope(
        Groups({v1::GROUP_NEURONCORE_COUNTERS}, "^worker-[0-9]+-" + std::to_string(i))));
  }
  c.SendBytes(Frames(burst));
  const std::vector<std::string> subscribed = SubscribedNotices(c, milliseconds(1200));
  ASSERT_GE(subscribed.size(), 3u);
  EXPECT_LE(subscribed.size(), 5u) << "2 at once, then 2 a second";
  EXPECT_EQ(subscribed.back(), "neuroncore_counters every 50ms; tags /^worker-[0-9]+-49/");
  // The budget is spent, but filters compiled before are free.
  c.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS}, "^worker-[0-9]+-0"));
  auto notice = c.ReadUntil(Body::kNotice, milliseconds(200));
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->notice().text(), "neuroncore_counters every 50ms; tags /^worker-[0-9]+-0/");
}

// A client that sends requests whose answers it never reads is disconnected once the answers
// it left unread pass max_control_frames, instead of growing the daemon's memory.
TEST(StreamAbuse, UnreadErrorsDisconnectTheClient) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.stream.max_control_frames = 8;
    c.stream.subscribe_interval = Nanos::zero();  // else the burst is coalesced to one error
  });
  RawClient c(d.socket_path(), /*rcvbuf=*/1024);
  Welcome(c);
  std::vector<v1::Envelope> burst;
  for (int i = 0; i < 2000; ++i) {
    burst.push_back(SubscribeEnvelope(Groups({v1::GROUP_NEURONCORE_COUNTERS}, "[bad")));
  }
  c.SendBytes(Frames(burst));
  EXPECT_TRUE(c.ClosedWithin(seconds(5)));
  std::map<std::string, std::uint64_t> disconnects;
  d.OnDaemon([&](daemon::Daemon& daemon) { disconnects = daemon.stats().disconnects; });
  EXPECT_EQ(disconnects["control_budget"], 1u);
  ExpectServing(d);
}

// Idle connections cannot hold the handshake slots: the oldest makes room for a newcomer.
TEST(StreamAbuse, IdleConnectionsCannotHoardHandshakeSlots) {
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.stream.max_handshaking = 3;
    c.stream.handshake_timeout = seconds(30);
  });
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<RawClient>(d.socket_path()));
    // Let the daemon accept them in order.
    ASSERT_FALSE(idle.back()->Read(milliseconds(50)).has_value());
  }
  ExpectServing(d);
  EXPECT_TRUE(idle[0]->ClosedWithin(seconds(2))) << "the oldest idle connection made room";
  EXPECT_FALSE(idle[2]->ClosedWithin(milliseconds(100)));
}

// One user (uid, by SO_PEERCRED) may hold at most max_clients_per_uid connections.
TEST(StreamAbuse, ConnectionsPerUidAreLimited) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.stream.max_clients_per_uid = 2; });
  RawClient a(d.socket_path()), b(d.socket_path());
  Welcome(a);
  Welcome(b);
  RawClient third(d.socket_path());
  auto error = third.ReadUntil(Body::kError);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->error().code(), v1::ERROR_CODE_TOO_MANY_CLIENTS);
  EXPECT_EQ(error->error().message(), "too many clients from uid " + std::to_string(::geteuid()) +
                                          " (limit 2 per uid or address)");
  EXPECT_TRUE(third.ClosedWithin(seconds(2)));
}

// Another user who opens hundreds of connections holds only their share of the slots:
// neuron-top, run by someone else, still gets in. (Needs root, to be that other user.)
TEST(StreamAbuse, OneUsersConnectionsCannotLockOthersOut) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  DaemonFixture d([](daemon::DaemonConfig& c) {
    c.listeners.unix_socket.options.mode = 0666;  // so that user may connect at all
    c.stream.max_clients = 64;
    c.stream.max_clients_per_uid = 16;
  });
  ::chmod(d.dir().c_str(), 0755);
  ::chmod((d.dir() / "run").c_str(), 0755);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t hog = ::fork();
  ASSERT_GE(hog, 0);
  if (hog == 0) {  // the other user: nobody
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    int opened = 0;
    for (int i = 0; i < 200; ++i) {
      const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, d.socket_path().c_str(), sizeof addr.sun_path - 1);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) ++opened;
    }
    const char byte = opened > 0 ? 1 : 0;
    (void)!::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  EXPECT_EQ(byte, 1) << "the other user could not connect at all";
  std::this_thread::sleep_for(milliseconds(300));  // the daemon has refused the excess
  ExpectServing(d);
  ::kill(hog, SIGKILL);
  ::waitpid(hog, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

// A client that says Hello but never subscribes is reclaimed.
TEST(StreamAbuse, ClientsThatNeverSubscribeAreReclaimed) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.stream.subscribe_timeout = milliseconds(300); });
  RawClient c(d.socket_path());
  Welcome(c);
  auto error = c.ReadUntil(Body::kError, seconds(3));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->error().code(), v1::ERROR_CODE_IDLE_TIMEOUT);
  EXPECT_EQ(error->error().message(), "no Subscribe within the subscribe deadline");
  EXPECT_TRUE(c.ClosedWithin(seconds(2)));
  // One that subscribes in time stays.
  RawClient ok(d.socket_path());
  Welcome(ok);
  ok.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS}));
  EXPECT_FALSE(ok.ClosedWithin(milliseconds(600)));
}

// Subscribes with resume_after_seq = `after`, returning the frames of the first `window`.
std::vector<v1::Envelope> Resume(const DaemonFixture& d, std::uint64_t after,
                                 milliseconds window = milliseconds(400)) {
  RawClient c(d.socket_path());
  c.Hello();
  auto welcome = c.ReadUntil(Body::kWelcome);
  EXPECT_TRUE(welcome.has_value());
  v1::Subscribe s = Groups({v1::GROUP_NEURONCORE_COUNTERS});
  s.set_resume_after_seq(after);
  c.Subscribe(s);
  std::vector<v1::Envelope> frames;
  const auto deadline = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto e = c.Read(milliseconds(50))) frames.push_back(*e);
  }
  return frames;
}

const v1::Notice* FirstGap(const std::vector<v1::Envelope>& frames) {
  for (const v1::Envelope& e : frames) {
    if (e.has_notice() && e.notice().kind() == v1::NOTICE_KIND_GAP) return &e.notice();
  }
  return nullptr;
}

// UINT64_MAX used to overflow to 0 and replay the whole history as if the client had nothing; a
// seq from the future (another daemon instance) was skipped silently with no report at all.
TEST(StreamAbuse, ResumeAfterTheNewestReportSaysSo) {
  DaemonFixture d;
  ExpectServing(d);
  for (std::uint64_t after : {std::numeric_limits<std::uint64_t>::max(), std::uint64_t{1} << 40}) {
    const std::vector<v1::Envelope> frames = Resume(d, after);
    const v1::Notice* gap = FirstGap(frames);
    ASSERT_NE(gap, nullptr) << after;
    EXPECT_EQ(gap->gap_reason(), v1::GAP_REASON_RESUME_AHEAD);
    EXPECT_EQ(gap->last_seq(), after);
    EXPECT_LT(gap->first_seq(), 1000u);
    int reports = 0, replayed = 0;
    for (const v1::Envelope& e : frames) {
      if (!e.has_report()) continue;
      ++reports;
      replayed += e.report().replay() ? 1 : 0;
    }
    EXPECT_GE(reports, 1) << "streaming continues from the newest";
    EXPECT_EQ(replayed, 0) << "nothing of this daemon's history is replayed";
  }
}

// resume_after_seq = 0: everything retained is replayed, from the first seq on.
TEST(StreamAbuse, ResumeFromZeroReplaysTheRetainedHistory) {
  DaemonFixture d;
  ExpectServing(d);
  std::this_thread::sleep_for(milliseconds(300));  // a few more snapshots at 50 ms
  const std::vector<v1::Envelope> frames = Resume(d, 0);
  EXPECT_EQ(FirstGap(frames), nullptr) << "seq 1 is still retained";
  std::uint64_t expected = 1;
  int replayed = 0;
  for (const v1::Envelope& e : frames) {
    if (!e.has_report()) continue;
    EXPECT_EQ(e.report().seq(), expected) << "replayed in order from seq 1, none skipped";
    expected = e.report().seq() + 1;
    replayed += e.report().replay() ? 1 : 0;
  }
  EXPECT_GE(replayed, 2);
}

// A replay that a slow client cannot keep up with is outrun by the history's eviction: the
// evicted reports are named in a RETENTION gap notice instead of being skipped silently.
TEST(StreamAbuse, ReplayOutrunByEvictionReportsTheGap) {
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.history_retention = seconds(2);
        c.stream.write_timeout = seconds(30);
      },
      "sim:trn2.48xlarge");
  ExpectServing(d);
  std::this_thread::sleep_for(seconds(2));  // fill the history: 40 snapshots of ~20 KB
  RawClient c(d.socket_path(), /*rcvbuf=*/4096);
  c.Hello();
  auto welcome = c.ReadUntil(Body::kWelcome);
  ASSERT_TRUE(welcome.has_value());
  const std::uint64_t from = welcome->welcome().oldest_seq();
  v1::Subscribe s;  // every group: big frames, so the socket buffers hold only a few
  s.set_resume_after_seq(from);
  c.Subscribe(s);
  std::this_thread::sleep_for(seconds(3));  // the history moves on past the stalled replay
  std::uint64_t next = from + 1;
  std::uint64_t retention_gaps = 0;
  bool live = false;
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (!live && std::chrono::steady_clock::now() < deadline) {
    auto e = c.Read(milliseconds(500));
    ASSERT_TRUE(e.has_value());
    if (e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_GAP) {
      EXPECT_EQ(e->notice().first_seq(), next) << "a gap starts where the reports stopped";
      retention_gaps += e->notice().gap_reason() == v1::GAP_REASON_RETENTION ? 1 : 0;
      next = e->notice().last_seq() + 1;
    } else if (e->has_report()) {
      EXPECT_EQ(e->report().seq(), next) << "no report skipped without a gap notice";
      next = e->report().seq() + 1;
      live = !e->report().replay();
    }
  }
  EXPECT_TRUE(live) << "the replay caught up with the live stream";
  EXPECT_GE(retention_gaps, 1u);
}

// Loopback TCP would let every local user around the unix socket's group: it asks for the token.
TEST(StreamAbuse, LoopbackTcpAsksForTheTokenWhenTheSocketIsRestricted) {
  const std::uint16_t port = FreePort();
  const std::string token_path =
      (std::filesystem::temp_directory_path() / ("neuronmon-token-" + std::to_string(::getpid())))
          .string();
  std::ofstream(token_path) << "s3cret\n";
  ::chmod(token_path.c_str(), 0600);
  DaemonFixture d([&](daemon::DaemonConfig& c) {
    c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", port};
    c.auth_token_file = token_path;
  });
  for (const char* token : {"", "s3cre", "s3cret!"}) {
    RawClient c(RawClient::Tcp{port});
    c.Hello(1, token);
    auto error = c.ReadUntil(Body::kError);
    ASSERT_TRUE(error.has_value()) << token;
    EXPECT_EQ(error->error().code(), v1::ERROR_CODE_UNAUTHENTICATED);
  }
  RawClient good(RawClient::Tcp{port});
  good.Hello(1, "s3cret");
  EXPECT_TRUE(good.ReadUntil(Body::kWelcome).has_value());
  std::filesystem::remove(token_path);
}

// A token file others may read is refused at start, naming its mode.
TEST(StreamAbuse, WorldReadableTokenFileIsRefused) {
  const std::string token_path =
      (std::filesystem::temp_directory_path() / ("neuronmon-token-" + std::to_string(::getpid())))
          .string();
  std::ofstream(token_path) << "s3cret\n";
  ::chmod(token_path.c_str(), 0644);
  try {
    DaemonFixture d([&](daemon::DaemonConfig& c) { c.auth_token_file = token_path; });
    ADD_FAILURE() << "the daemon started";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              token_path + ": mode 0644 lets every user read the token; make it 0600 or 0640");
  }
  std::filesystem::remove(token_path);
}

// An exception while building one client's report (std::bad_alloc, say) closes that client only:
// it used to reach std::terminate and take the daemon down with everyone on it.
TEST(StreamAbuse, AnExceptionBuildingOneClientsReportLosesThatClientOnly) {
  std::atomic<int> calls{0};  // outlives the daemon, whose annotator counts in it
  DaemonFixture d;
  d.OnDaemon([&](daemon::Daemon& daemon) {
    daemon.core().SetAnnotator([&](const daemon::Subscription& sub, v1::Report&) {
      // The first report (built when it subscribes) passes; its first live report throws.
      if (sub.key().tag_filter == "boom" && calls++ == 1) throw std::bad_alloc();
    });
  });
  RawClient victim(d.socket_path());
  Welcome(victim);
  victim.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS}, "boom"));
  EXPECT_TRUE(victim.ClosedWithin(seconds(3)));
  EXPECT_GE(calls.load(), 2);
  std::map<std::string, std::uint64_t> disconnects;
  d.OnDaemon([&](daemon::Daemon& daemon) { disconnects = daemon.stats().disconnects; });
  EXPECT_EQ(disconnects["internal_error"], 1u);
  ExpectServing(d);
  // And when the very first report throws, inside the Subscribe's handling.
  calls = 1;
  RawClient second(d.socket_path());
  Welcome(second);
  second.Subscribe(Groups({v1::GROUP_NEURONCORE_COUNTERS}, "boom"));
  EXPECT_TRUE(second.ClosedWithin(seconds(3)));
  ExpectServing(d);
}

// ~StreamServer closed each session while iterating over the map Close() erases from.
TEST(StreamAbuse, DestroyingTheDaemonWithClientsConnectedIsClean) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-destroy-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  daemon::CommandLine cli;
  cli.config_path = (dir / "absent.json").string();
  cli.simulate.device = "sim:trn1.2xlarge";
  cli.simulate.period = "50ms";
  cli.socket = (dir / "d.sock").string();
  cli.metrics_listen = "off";
  cli.record = "off";  // nothing on disk outside the temp dir
  std::vector<std::string> problems;
  Result<daemon::DaemonConfig> config = daemon::ResolveConfig(cli, &problems);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  daemon::LoggerOptions log_options;
  log_options.fd = null_fd;
  daemon::Logger log(log_options);
  daemon::asio::io_context io;
  auto server = std::make_unique<daemon::Daemon>(io, cli, std::move(*config), log,
                                                 daemon::DaemonMode{true, false, false});
  ASSERT_TRUE(server->Start().ok());
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<RawClient>(cli.socket.value()));
    if (i % 2 == 0) clients.back()->Hello();
  }
  io.run_for(milliseconds(300));
  server.reset();  // no Stop(): the destructors close every session
  for (auto& c : clients) EXPECT_TRUE(c->ClosedWithin(seconds(2)));
  ::close(null_fd);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neuronmon::testing
