// The stream server end to end over a temp unix socket: handshake, subscriptions, resume, slow
// clients, every bad-input case, max clients and shutdown — each with a well-behaved client
// alongside to show the daemon keeps serving everyone else.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <set>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/raw_client.h"

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using Body = v1::Envelope::BodyCase;

v1::Subscribe Groups(std::initializer_list<v1::Group> groups) {
  v1::Subscribe s;
  for (v1::Group g : groups) s.add_groups()->set_group(g);
  return s;
}

// Hello + Welcome + Subscribe + SUBSCRIBED notice.
void Handshake(RawClient& c, const v1::Subscribe& s) {
  c.Hello();
  auto welcome = c.ReadUntil(Body::kWelcome);
  ASSERT_TRUE(welcome.has_value());
  c.Subscribe(s);
  auto notice = c.ReadUntil(Body::kNotice);
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->notice().kind(), v1::NOTICE_KIND_SUBSCRIBED);
}

// A well-behaved client still receives reports.
void ExpectServing(const DaemonFixture& d) {
  RawClient c(d.socket_path());
  Handshake(c, Groups({v1::GROUP_NEURONCORE_COUNTERS}));
  EXPECT_TRUE(c.ReadUntil(Body::kReport).has_value());
}

TEST(Stream, HandshakeWelcomeAndSubscribe) {
  DaemonFixture d;
  struct stat st {};
  ASSERT_EQ(::stat(d.socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  RawClient c(d.socket_path());
  c.Hello();
  auto w = c.ReadUntil(Body::kWelcome);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->welcome().protocol_version(), 1u);
  EXPECT_EQ(w->welcome().inventory().instance_info().instance_type(), "trn1.2xlarge");
  EXPECT_EQ(w->welcome().inventory().devices_size(), 1);
  EXPECT_EQ(w->welcome().base_period_ns(), 50'000'000u);
  v1::Subscribe s = Groups({v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_MEMORY_INFO});
  s.mutable_groups(1)->set_period_ns(200'000'000);  // every 4th report
  c.Subscribe(s);
  auto subscribed = c.ReadUntil(Body::kNotice);
  ASSERT_TRUE(subscribed.has_value());
  EXPECT_EQ(subscribed->notice().text(), "neuroncore_counters every 50ms, memory_info every 200ms");
  // First report: every subscribed group at once. Then memory_info only when due.
  auto first = c.ReadUntil(Body::kReport);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->report().system().has_memory_info());
  int with_memory = 0;
  std::uint64_t last = first->report().seq();
  for (int i = 0; i < 8; ++i) {
    auto r = c.ReadUntil(Body::kReport);
    ASSERT_TRUE(r.has_value());
    EXPECT_GT(r->report().seq(), last);
    last = r->report().seq();
    if (r->report().system().has_memory_info()) {
      ++with_memory;
      EXPECT_EQ(r->report().seq() % 4, 0u);
    }
  }
  EXPECT_GE(with_memory, 1);
  EXPECT_LE(with_memory, 3);
}

TEST(Stream, ResumeReplaysRetainedHistory) {
  DaemonFixture d;
  std::uint64_t seen = 0;
  {
    RawClient c(d.socket_path());
    Handshake(c, Groups({v1::GROUP_NEURONCORE_COUNTERS}));
    for (int i = 0; i < 5; ++i) seen = c.ReadUntil(Body::kReport)->report().seq();
  }
  // Reconnect later, resuming after an older seq: the missed reports are replayed first, in order.
  RawClient again(d.socket_path());
  v1::Subscribe s = Groups({v1::GROUP_NEURONCORE_COUNTERS});
  s.set_resume_after_seq(seen - 3);
  Handshake(again, s);
  std::uint64_t expect = seen - 2;
  bool saw_live = false;
  for (int i = 0; i < 12; ++i) {
    auto r = again.ReadUntil(Body::kReport);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->report().seq(), expect) << "no gaps, no duplicates";
    if (!r->report().replay()) saw_live = true;
    if (r->report().seq() <= seen) {
      EXPECT_TRUE(r->report().replay());
    }
    ++expect;
  }
  EXPECT_TRUE(saw_live);
}

TEST(Stream, ResumeOlderThanRetentionReportsTheGap) {
  DaemonFixture d(
      [](daemon::DaemonConfig& c) { c.history_retention = std::chrono::milliseconds(200); });
  RawClient c(d.socket_path());
  c.Hello();
  auto w = c.ReadUntil(Body::kWelcome);
  ASSERT_TRUE(w.has_value());
  // Wait until the history has rolled over.
  RawClient watcher(d.socket_path());
  Handshake(watcher, Groups({v1::GROUP_MEMORY_INFO}));
  std::uint64_t newest = 0;
  while (newest < 12) newest = watcher.ReadUntil(Body::kReport)->report().seq();
  v1::Subscribe s = Groups({v1::GROUP_MEMORY_INFO});
  s.set_resume_after_seq(1);
  c.Subscribe(s);
  auto gap = c.ReadUntil(Body::kNotice);
  gap =
      gap && gap->notice().kind() == v1::NOTICE_KIND_SUBSCRIBED ? c.ReadUntil(Body::kNotice) : gap;
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->notice().kind(), v1::NOTICE_KIND_GAP);
  EXPECT_EQ(gap->notice().gap_reason(), v1::GAP_REASON_RETENTION);
  EXPECT_EQ(gap->notice().first_seq(), 2u);
  EXPECT_GE(gap->notice().last_seq(), 2u);
}

TEST(Stream, SlowClientGetsGapsWhileFastOneGetsEverything) {
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.stream.queue_depth = 4;
        c.stream.write_timeout = std::chrono::seconds(30);
      },
      "sim:trn2.48xlarge", "20ms");
  v1::Subscribe all;  // every group: large frames fill the slow client's socket quickly
  RawClient slow(d.socket_path(), 4096);
  Handshake(slow, all);
  RawClient fast(d.socket_path());
  Handshake(fast, all);
  std::set<std::uint64_t> fast_seqs;
  std::uint64_t first = 0, last = 0;
  for (int i = 0; i < 60; ++i) {
    auto r = fast.ReadUntil(Body::kReport);
    ASSERT_TRUE(r.has_value());
    if (first == 0) first = r->report().seq();
    last = r->report().seq();
    fast_seqs.insert(last);
  }
  EXPECT_EQ(fast_seqs.size(), last - first + 1) << "the fast client missed nothing";
  // The slow client now reads: it finds a gap notice covering what was dropped.
  std::optional<v1::Envelope> gap;
  for (int i = 0; i < 200 && !gap; ++i) {
    auto e = slow.Read();
    ASSERT_TRUE(e.has_value());
    if (e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_GAP) gap = e;
  }
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->notice().gap_reason(), v1::GAP_REASON_SLOW_CLIENT);
  EXPECT_LE(gap->notice().first_seq(), gap->notice().last_seq());
  std::uint64_t dropped = 0;
  d.OnDaemon([&](daemon::Daemon& daemon) { dropped = daemon.stats().frames_dropped; });
  EXPECT_GT(dropped, 0u);
}

TEST(Stream, StuckClientIsDisconnectedAfterTheWriteTimeout) {
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.stream.queue_depth = 2;
        c.stream.write_timeout = std::chrono::milliseconds(300);
      },
      "sim:trn2.48xlarge", "20ms");
  RawClient stuck(d.socket_path(), 4096);
  Handshake(stuck, v1::Subscribe());
  std::uint64_t disconnects = 0;
  for (int i = 0; i < 100 && disconnects == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    d.OnDaemon([&](daemon::Daemon& daemon) {
      auto it = daemon.stats().disconnects.find("write_timeout");
      disconnects = it == daemon.stats().disconnects.end() ? 0 : it->second;
    });
  }
  EXPECT_EQ(disconnects, 1u);
  ExpectServing(d);
}

struct BadInput {
  const char* name;
  std::string bytes;
  v1::ErrorCode code;
};

TEST(Stream, BadInputGetsAnErrorAndCloseWhileOthersAreServed) {
  DaemonFixture d;
  RawClient bystander(d.socket_path());
  Handshake(bystander, Groups({v1::GROUP_NEURONCORE_COUNTERS}));
  v1::Envelope subscribe;
  subscribe.mutable_subscribe();
  v1::Envelope hello_v2;
  hello_v2.mutable_hello()->set_protocol_version(2);
  v1::Envelope report;
  report.mutable_report()->set_seq(1);
  const std::vector<BadInput> cases = {
      {"garbage", std::string("\x05\xff\xff\xff\xff\xff", 6), v1::ERROR_CODE_MALFORMED_FRAME},
      {"oversized length", std::string("\xff\xff\x7f", 3), v1::ERROR_CODE_FRAME_TOO_LARGE},
      {"zero length", std::string("\x00", 1), v1::ERROR_CODE_MALFORMED_FRAME},
      {"wrong version", *wire::EncodeFrame(hello_v2), v1::ERROR_CODE_UNSUPPORTED_VERSION},
      {"subscribe before hello", std::string("\x02\x1a\x00", 3), v1::ERROR_CODE_PROTOCOL_VIOLATION},
      {"server message from client", *wire::EncodeFrame(report), v1::ERROR_CODE_PROTOCOL_VIOLATION},
  };
  for (const BadInput& c : cases) {
    RawClient bad(d.socket_path());
    bad.SendBytes(c.bytes);
    auto e = bad.ReadUntil(Body::kError);
    ASSERT_TRUE(e.has_value()) << c.name;
    EXPECT_EQ(e->error().code(), c.code) << c.name << ": " << e->error().message();
    EXPECT_TRUE(e->error().fatal()) << c.name;
    EXPECT_TRUE(bad.ClosedWithin(milliseconds(2000))) << c.name;
    EXPECT_TRUE(bystander.ReadUntil(Body::kReport).has_value()) << "after " << c.name;
  }
}

TEST(Stream, HandshakeDeadline) {
  DaemonFixture d;
  RawClient silent(d.socket_path());
  auto e = silent.ReadUntil(Body::kError, milliseconds(3000));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->error().code(), v1::ERROR_CODE_HANDSHAKE_TIMEOUT);
  EXPECT_TRUE(silent.ClosedWithin(milliseconds(2000)));
  ExpectServing(d);
}

TEST(Stream, InvalidRegexIsAnErrorButTheConnectionStays) {
  DaemonFixture d;
  RawClient c(d.socket_path());
  c.Hello();
  ASSERT_TRUE(c.ReadUntil(Body::kWelcome).has_value());
  v1::Subscribe bad;
  bad.set_tag_filter("rank[(");
  c.Subscribe(bad);
  auto e = c.ReadUntil(Body::kError);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->error().code(), v1::ERROR_CODE_INVALID_SUBSCRIPTION);
  EXPECT_FALSE(e->error().fatal());
  c.Subscribe(Groups({v1::GROUP_MEMORY_INFO}));
  EXPECT_TRUE(c.ReadUntil(Body::kReport).has_value());
}

TEST(Stream, MaxClientsEnforced) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.stream.max_clients = 2; });
  RawClient a(d.socket_path()), b(d.socket_path());
  Handshake(a, Groups({v1::GROUP_MEMORY_INFO}));
  Handshake(b, Groups({v1::GROUP_MEMORY_INFO}));
  RawClient extra(d.socket_path());
  auto e = extra.ReadUntil(Body::kError);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->error().code(), v1::ERROR_CODE_TOO_MANY_CLIENTS);
  EXPECT_TRUE(extra.ClosedWithin(milliseconds(2000)));
  EXPECT_TRUE(a.ReadUntil(Body::kReport).has_value());
}

TEST(Stream, ShutdownSendsANoticeAndRemovesTheSocket) {
  DaemonFixture d;
  RawClient c(d.socket_path());
  Handshake(c, Groups({v1::GROUP_MEMORY_INFO}));
  const std::string path = d.socket_path();
  d.Stop();
  std::optional<v1::Envelope> bye;
  while (auto e = c.Read(milliseconds(2000))) {
    if (e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_SHUTDOWN) bye = e;
  }
  ASSERT_TRUE(bye.has_value());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Stream, RefusesASecondDaemonAndReplacesAStaleSocket) {
  DaemonFixture first;
  try {
    DaemonFixture([&](daemon::DaemonConfig& c) {
      c.listeners.unix_socket.options.path = first.socket_path();
    });
    FAIL() << "a second daemon started on the same socket";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()),
              "another neuron-monitord is already listening on " + first.socket_path());
  }
  ExpectServing(first);
  // A socket file nobody listens on is replaced.
  const std::string stale = (first.dir() / "stale.sock").string();
  {
    daemon::asio::io_context io;
    daemon::asio::local::stream_protocol::acceptor a(
        io, daemon::asio::local::stream_protocol::endpoint(stale));
  }  // closed without unlink: a stale file remains
  ASSERT_TRUE(std::filesystem::exists(stale));
  DaemonFixture second(
      [&](daemon::DaemonConfig& c) { c.listeners.unix_socket.options.path = stale; });
  RawClient c(stale);
  Handshake(c, Groups({v1::GROUP_MEMORY_INFO}));
  EXPECT_TRUE(c.ReadUntil(Body::kReport).has_value());
}

TEST(Stream, HeartbeatsWhenNothingIsDue) {
  DaemonFixture d;
  RawClient c(d.socket_path());
  v1::Subscribe s = Groups({v1::GROUP_MEMORY_INFO});
  s.mutable_groups(0)->set_period_ns(3'600'000'000'000);  // hourly
  Handshake(c, s);
  EXPECT_TRUE(c.ReadUntil(Body::kHeartbeat, milliseconds(4000)).has_value());
}

}  // namespace
}  // namespace neuronmon::testing
