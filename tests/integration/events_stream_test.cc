// Events on the protobuf stream: a client that subscribes to them gets every retained event from
// its resume point, then each new one as it happens — the daemon's "stopping" before the shutdown
// notice — and, asking for events only, no reports; one that does not subscribe gets no events.
// A slow reader's events wait in the daemon's log rather than its queue, and an expired resume
// point is told as an events gap.
#include <gtest/gtest.h>

#include "daemon/core/events.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/integration/raw_client.h"

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using Body = v1::Envelope::BodyCase;

v1::Subscribe EventsOnly(std::optional<std::uint64_t> after) {
  v1::Subscribe s;
  s.mutable_events()->set_only(true);
  if (after) s.mutable_events()->set_after_seq(*after);
  return s;
}

// Hello, Welcome, Subscribe, SUBSCRIBED; returns the Welcome.
v1::Welcome Handshake(RawClient& c, const v1::Subscribe& s) {
  c.Hello();
  auto welcome = c.ReadUntil(Body::kWelcome);
  EXPECT_TRUE(welcome.has_value());
  c.Subscribe(s);
  auto subscribed = c.ReadUntil(Body::kNotice);
  EXPECT_TRUE(subscribed.has_value());
  if (subscribed) {
    EXPECT_EQ(subscribed->notice().kind(), v1::NOTICE_KIND_SUBSCRIBED);
  }
  return welcome ? welcome->welcome() : v1::Welcome();
}

// Every frame until the shutdown notice (which is included).
std::vector<v1::Envelope> UntilShutdown(RawClient& c) {
  std::vector<v1::Envelope> frames;
  while (auto e = c.Read(milliseconds(5000))) {
    frames.push_back(*e);
    if (e->has_notice() && e->notice().kind() == v1::NOTICE_KIND_SHUTDOWN) break;
  }
  return frames;
}

TEST(EventsStream, RetainedThenNewEventsAndNoReportsWhenOnlyEventsAreAsked) {
  DaemonFixture d;
  RawClient events(d.socket_path());
  const v1::Welcome welcome = Handshake(events, EventsOnly(0));
  EXPECT_GE(welcome.newest_event_seq(), 1u);
  RawClient reports(d.socket_path());
  v1::Subscribe groups;
  groups.add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
  Handshake(reports, groups);
  ASSERT_TRUE(reports.ReadUntil(Body::kReport).has_value());
  d.Stop();
  std::vector<v1::Envelope> got = UntilShutdown(events);
  std::vector<std::string> states;
  for (const v1::Envelope& e : got) {
    EXPECT_FALSE(e.has_report() || e.has_record()) << "events only: " << e.DebugString();
    if (e.has_event()) {
      EXPECT_EQ(e.event().kind(), v1::EVENT_KIND_DAEMON);
      states.push_back(e.event().after());
    }
  }
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().notice().kind(), v1::NOTICE_KIND_SHUTDOWN);
  EXPECT_EQ(states, (std::vector<std::string>{"started", "stopping"}));
  for (const v1::Envelope& e : UntilShutdown(reports)) {
    EXPECT_FALSE(e.has_event()) << "not subscribed to events";
  }
}

TEST(EventsStream, ResumesAfterTheSeqItSaw) {
  DaemonFixture d;
  RawClient first(d.socket_path());
  Handshake(first, EventsOnly(0));
  auto started = first.ReadUntil(Body::kEvent);  // logged after the daemon's first sample
  ASSERT_TRUE(started.has_value());
  ASSERT_EQ(started->event().seq(), 1u);
  RawClient c(d.socket_path());
  Handshake(c, EventsOnly(1));
  d.Stop();
  std::vector<std::uint64_t> seqs;
  for (const v1::Envelope& e : UntilShutdown(c)) {
    if (e.has_event()) seqs.push_back(e.event().seq());
  }
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{2}));
}

TEST(EventsStream, AnExpiredResumePointIsAnEventsGap) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.events.max_events = 2; });
  for (int i = 0; i < 4; ++i) {
    d.OnDaemon([i](daemon::Daemon& daemon) {
      daemon.AddEvent(daemon::DaemonEvent("reloaded", "test " + std::to_string(i)));
    });
  }
  RawClient c(d.socket_path());
  Handshake(c, EventsOnly(0));
  auto gap = c.ReadUntil(Body::kNotice);
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->notice().kind(), v1::NOTICE_KIND_EVENTS_GAP);
  EXPECT_EQ(gap->notice().first_seq(), 1u);
  EXPECT_EQ(gap->notice().last_seq(), 3u);
  auto first = c.ReadUntil(Body::kEvent);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->event().seq(), 4u);
  EXPECT_EQ(first->event().summary(), "test 2");
}

TEST(EventsStream, ASlowReaderLosesNoEvent) {
  DaemonFixture d;
  // Many events while a client with a tiny receive buffer is not reading.
  RawClient slow(d.socket_path(), 4096);
  Handshake(slow, EventsOnly(std::nullopt));
  constexpr int kEvents = 3000;
  d.OnDaemon([](daemon::Daemon& daemon) {
    for (int i = 0; i < kEvents; ++i) {
      daemon.AddEvent(
          daemon::DaemonEvent("reloaded", "event " + std::to_string(i) + std::string(200, 'x')));
    }
  });
  std::uint64_t expect = 0;
  int got = 0;
  while (got < kEvents) {
    auto e = slow.ReadUntil(Body::kEvent);
    ASSERT_TRUE(e.has_value()) << "after " << got << " events";
    if (expect != 0) {
      EXPECT_EQ(e->event().seq(), expect) << "in order, none lost";
    }
    expect = e->event().seq() + 1;
    ++got;
  }
}

}  // namespace
}  // namespace neuronmon::testing
