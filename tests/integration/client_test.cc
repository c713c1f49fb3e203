// The client library against a real daemon: a temp unix socket, the in-process embedding over a
// socketpair, reconnecting after the daemon restarts, and the automatic standalone fallback.
#include "client/client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "client/embedded_simulator.h"
#include "tests/integration/client_events.h"
#include "tests/integration/daemon_fixture.h"

namespace neuronmon::testing {
namespace {

using client::Client;
using client::ClientOptions;
using client::EmbeddedSimulator;
using client::Endpoint;
using client::Event;
using client::LocalDaemonStarter;
using client::SimulatorOptions;
using std::chrono::milliseconds;
using std::chrono::seconds;

ClientOptions Options(Endpoint endpoint) {
  ClientOptions o;
  o.client_name = "client-test";
  o.endpoint = std::move(endpoint);
  o.endpoint.start_local = EmbeddedSimulator();
  o.subscribe.add_groups()->set_group(v1::GROUP_NEURONCORE_COUNTERS);
  o.initial_backoff = milliseconds(20);
  o.max_backoff = milliseconds(200);
  return o;
}

TEST(Client, UnixSocketHandshakeAndReports) {
  DaemonFixture d;
  Endpoint ep;
  ep.kind = Endpoint::Kind::kUnix;
  ep.path = d.socket_path();
  auto c = Client::Connect(Options(ep));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto connected = NextOf(**c, Event::Kind::kConnected);
  ASSERT_TRUE(connected.has_value());
  EXPECT_EQ(connected->welcome.inventory().instance_info().instance_type(), "trn1.2xlarge");
  auto report = NextOf(**c, Event::Kind::kReport);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->report.runtimes_size(), 1);
  EXPECT_EQ((*c)->endpoint_description(), "unix:" + d.socket_path());
  EXPECT_FALSE((*c)->standalone());
}

TEST(Client, ExplicitSocketWithoutDaemonIsAnError) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::kUnix;
  ep.path = "/nonexistent/neuron-monitord.sock";
  auto c = Client::Connect(Options(ep));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cannot connect to /nonexistent/neuron-monitord.sock"),
            std::string::npos);
}

TEST(Client, StandaloneRunsTheDaemonInProcess) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::kStandalone;
  ep.standalone.device = "sim:inf2.48xlarge";
  ep.standalone.scenario = "inference-serving";
  ep.standalone.period = "50ms";
  auto c = Client::Connect(Options(ep));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE((*c)->standalone());
  auto connected = NextOf(**c, Event::Kind::kConnected);
  ASSERT_TRUE(connected.has_value());
  EXPECT_EQ(connected->welcome.inventory().devices_size(), 12);
  EXPECT_TRUE(NextOf(**c, Event::Kind::kReport).has_value());
}

// Two clients of one program share one in-process daemon: the second is handed the first's.
TEST(Client, ClientsShareOneInProcessDaemon) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::kStandalone;
  ep.standalone.period = "50ms";
  int started = 0;
  const LocalDaemonStarter simulator = EmbeddedSimulator();
  ClientOptions first = Options(ep);
  first.endpoint.start_local = [&](const SimulatorOptions& o) {
    ++started;
    return simulator(o);
  };
  auto a = Client::Connect(first);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_NE((*a)->local_daemon(), nullptr);
  ClientOptions second = first;
  second.endpoint.local = (*a)->local_daemon();
  auto b = Client::Connect(second);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(started, 1);
  EXPECT_EQ((*b)->local_daemon(), (*a)->local_daemon());
  EXPECT_TRUE(NextOf(**b, Event::Kind::kReport).has_value());
}

// The client library runs no daemon of its own: without a starter, --standalone is an error.
TEST(Client, StandaloneWithoutAStarterIsAnError) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::kStandalone;
  ClientOptions o = Options(ep);
  o.endpoint.start_local = nullptr;
  auto c = Client::Connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "this program cannot run a daemon in-process");
}

TEST(Client, StandaloneReportsBadDeviceOptions) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::kStandalone;
  ep.standalone.device = "sim:trn9";
  auto c = Client::Connect(Options(ep));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown instance preset \"trn9\""), std::string::npos);
}

TEST(Client, ReconnectsAndResumesAfterTheDaemonRestarts) {
  auto d = std::make_unique<DaemonFixture>();
  const std::string path = d->socket_path();
  Endpoint ep;
  ep.kind = Endpoint::Kind::kUnix;
  ep.path = path;
  auto c = Client::Connect(Options(ep));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(NextOf(**c, Event::Kind::kReport).has_value());
  d->Stop();
  EXPECT_TRUE(NextOf(**c, Event::Kind::kDisconnected).has_value());
  // A new daemon on the same path (the old fixture's directory is reused).
  auto restarted = std::make_unique<DaemonFixture>(
      [&](daemon::DaemonConfig& cfg) { cfg.listeners.unix_socket.options.path = path; });
  auto again = NextOf(**c, Event::Kind::kConnected, seconds(10));
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(NextOf(**c, Event::Kind::kReport).has_value());
}

TEST(Client, ResubscribeChangesWhatArrives) {
  DaemonFixture d;
  Endpoint ep;
  ep.kind = Endpoint::Kind::kUnix;
  ep.path = d.socket_path();
  auto c = Client::Connect(Options(ep));
  ASSERT_TRUE(c.ok());
  v1::Subscribe memory;
  memory.add_groups()->set_group(v1::GROUP_MEMORY_INFO);
  (*c)->Resubscribe(memory);
  bool switched = false;
  for (int i = 0; i < 40 && !switched; ++i) {
    auto r = NextOf(**c, Event::Kind::kReport);
    ASSERT_TRUE(r.has_value());
    switched = r->report.system().has_memory_info() && r->report.runtimes_size() == 0;
  }
  EXPECT_TRUE(switched);
}

TEST(Client, AutoFallsBackToStandaloneWithANotice) {
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old ? old : "";
  ::setenv("XDG_RUNTIME_DIR", "/nonexistent-xdg", 1);
  Endpoint ep;  // kAuto
  ep.standalone.period = "50ms";
  ep.standalone.device = "sim:trn1.2xlarge";
  auto c = Client::Connect(Options(ep));
  old ? ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1) : ::unsetenv("XDG_RUNTIME_DIR");
  if (std::filesystem::exists("/run/neuron-monitor/neuron-monitord.sock")) {
    GTEST_SKIP() << "a system daemon is running here";
  }
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto info = NextOf(**c, Event::Kind::kInfo);
  ASSERT_TRUE(info.has_value());
  // Root looks only at the system socket; other users also at their runtime directory.
  const std::string looked = ::geteuid() == 0
                                 ? "/run/neuron-monitor/neuron-monitord.sock"
                                 : "/run/neuron-monitor/neuron-monitord.sock, "
                                   "/nonexistent-xdg/neuron-monitor/neuron-monitord.sock";
  EXPECT_EQ(info->text, "no neuron-monitord socket found (looked in " + looked +
                            "); running the simulator in-process");
  EXPECT_TRUE((*c)->standalone());
  // Resolved: another client given this endpoint reaches the same in-process daemon.
  const Endpoint resolved = (*c)->endpoint();
  EXPECT_EQ(resolved.kind, Endpoint::Kind::kStandalone);
  EXPECT_EQ(resolved.local, (*c)->local_daemon());
}

TEST(Client, FetchWelcomeForNeuronLs) {
  DaemonFixture d;
  Endpoint ep;
  ep.kind = Endpoint::Kind::kUnix;
  ep.path = d.socket_path();
  std::string description;
  auto w = client::FetchWelcome(ep, "neuron-ls", &description, nullptr);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->inventory().processes_size(), 1);
  EXPECT_EQ(description, "unix:" + d.socket_path());
}

}  // namespace
}  // namespace neuronmon::testing
