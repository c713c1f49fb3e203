// A device read that never returns — a real host's sysfs file stuck in the driver, say — must not
// stall the daemon: clients and scrapers keep being served from the history, are told the figures
// are stale, and sampling resumes when the read returns. A daemon stopped while a read is stuck
// stops at once.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <regex>

#include "daemon/core/backend.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"
#include "tests/integration/raw_client.h"

namespace neuronmon::testing {
namespace {

using std::chrono::milliseconds;
using Body = v1::Envelope::BodyCase;

// Once closed, holds reads back until opened again.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool closed = false;
  int waiting = 0;

  void Pass() {
    std::unique_lock lock(mutex);
    if (!closed) return;
    ++waiting;
    changed.notify_all();
    changed.wait(lock, [&] { return !closed; });
    --waiting;
  }
  void Close() {
    std::lock_guard lock(mutex);
    closed = true;
  }
  void Open() {
    std::lock_guard lock(mutex);
    closed = false;
    changed.notify_all();
  }
  bool WaitForAReader(milliseconds timeout) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] { return waiting > 0; });
  }
};

// The simulator, whose reads wait at `gate` while it is closed.
class GatedBackend final : public daemon::Backend {
 public:
  GatedBackend(std::unique_ptr<daemon::Backend> inner, std::shared_ptr<Gate> gate)
      : inner_(std::move(inner)), gate_(std::move(gate)) {}
  v1::Inventory Inventory(MonoTime now) override { return inner_->Inventory(now); }
  Snapshot Read(MonoTime now) override {
    gate_->Pass();
    return inner_->Read(now);
  }
  std::string Describe() const override { return "gated " + inner_->Describe(); }

 private:
  std::unique_ptr<daemon::Backend> inner_;
  std::shared_ptr<Gate> gate_;
};

daemon::BackendFactory Gated(std::shared_ptr<Gate> gate) {
  return [gate](const daemon::BackendOptions& options,
                MonoTime start) -> Result<std::unique_ptr<daemon::Backend>> {
    auto inner = daemon::MakeBackend(options, start);
    if (!inner.ok()) return inner.status();
    return std::unique_ptr<daemon::Backend>(
        std::make_unique<GatedBackend>(std::move(*inner), gate));
  };
}

v1::Subscribe CoreCounters() {
  v1::Subscribe s;
  s.add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
  return s;
}

// Hello, Welcome, Subscribe, SUBSCRIBED; returns the Welcome's newest seq.
std::uint64_t Handshake(RawClient& c) {
  c.Hello();
  auto welcome = c.ReadUntil(Body::kWelcome);
  EXPECT_TRUE(welcome.has_value());
  c.Subscribe(CoreCounters());
  auto subscribed = c.ReadUntil(Body::kNotice);
  EXPECT_TRUE(subscribed.has_value());
  return welcome ? welcome->welcome().newest_seq() : 0;
}

// The next notice whose text contains `needle`.
std::optional<v1::Notice> NoticeWith(RawClient& c, const std::string& needle) {
  for (int i = 0; i < 200; ++i) {
    auto e = c.ReadUntil(Body::kNotice);
    if (!e) return std::nullopt;
    if (e->notice().text().find(needle) != std::string::npos) return e->notice();
  }
  return std::nullopt;
}

TEST(StalledRead, ClientsAndScrapersAreServedAndToldUntilTheReadReturns) {
  auto gate = std::make_shared<Gate>();
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
      },
      "sim:trn1.2xlarge", "50ms", Gated(gate));
  RawClient watcher(d.socket_path());
  Handshake(watcher);
  // A client subscribed to events hears of it as events, not as health notices.
  RawClient told(d.socket_path());
  told.Hello();
  ASSERT_TRUE(told.ReadUntil(Body::kWelcome).has_value());
  v1::Subscribe with_events = CoreCounters();
  with_events.mutable_events();
  told.Subscribe(with_events);
  gate->Close();  // the next read hangs
  ASSERT_TRUE(gate->WaitForAReader(milliseconds(5000)));

  const auto stale = NoticeWith(watcher, "has not returned");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->kind(), v1::NOTICE_KIND_HEALTH);
  EXPECT_NE(stale->text().find("gated sim:trn1.2xlarge"), std::string::npos) << stale->text();
  EXPECT_NE(stale->text().find("figures are stale"), std::string::npos) << stale->text();
  // The duration reads as people read one ("for 3.9s"), not as a count of nanoseconds.
  EXPECT_TRUE(std::regex_search(stale->text(), std::regex(R"(for [0-9.]+(us|ms|s); figures)")))
      << stale->text();

  // A new client is welcomed and gets its first report from the history; a scrape answers and
  // says how long the read has been pending.
  RawClient late(d.socket_path());
  const std::uint64_t newest = Handshake(late);
  auto first = late.ReadUntil(Body::kReport);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->report().seq(), newest);
  const std::optional<std::uint16_t> port = d.metrics_port();
  ASSERT_TRUE(port.has_value());
  auto scrape = Fetch(*port, "/metrics");
  ASSERT_TRUE(scrape.has_value());
  EXPECT_EQ(scrape->status, 200);
  const std::string gauge = "\nneuron_monitord_read_pending_seconds ";
  const auto at = scrape->body.find(gauge);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stod(scrape->body.substr(at + gauge.size(), 20)), 0.1);

  gate->Open();
  ASSERT_TRUE(NoticeWith(watcher, "resumed after").has_value());
  std::vector<std::string> states;
  while (states.size() < 2) {
    auto e = told.Read();
    ASSERT_TRUE(e.has_value()) << "events so far: " << states.size();
    if (e->has_notice()) {
      EXPECT_NE(e->notice().kind(), v1::NOTICE_KIND_HEALTH) << e->DebugString();
    }
    if (e->has_event() && e->event().kind() == v1::EVENT_KIND_DAEMON) {
      states.push_back(e->event().after());
    }
  }
  EXPECT_EQ(states, (std::vector<std::string>{"stale", "current"}));
  for (;;) {
    auto r = late.ReadUntil(Body::kReport);
    ASSERT_TRUE(r.has_value());
    if (r->report().seq() > newest) break;
  }
}

TEST(StalledRead, StopDoesNotWaitForAStuckRead) {
  auto gate = std::make_shared<Gate>();
  {
    DaemonFixture d(nullptr, "sim:trn1.2xlarge", "50ms", Gated(gate));
    gate->Close();
    ASSERT_TRUE(gate->WaitForAReader(milliseconds(5000)));
    RawClient c(d.socket_path());
    c.Hello();
    ASSERT_TRUE(c.ReadUntil(Body::kWelcome).has_value());
    d.Stop();  // returns although the read never does
    auto bye = c.ReadUntil(Body::kNotice);
    ASSERT_TRUE(bye.has_value());
    EXPECT_EQ(bye->notice().kind(), v1::NOTICE_KIND_SHUTDOWN);
  }
  gate->Open();  // the detached reader finishes and frees the backend
}

}  // namespace
}  // namespace neuronmon::testing
