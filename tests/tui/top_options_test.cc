// neuron-top's command line: each refusal (with its message and exit status) in the order it is
// checked, the cluster view's hosts, --replay's pace, and what the environment changes.
#include "tui/top_options.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fstream>

#include "tests/temp_dir.h"

namespace neuronmon::tui {
namespace {

class TopOptionsTest : public ::testing::Test {
 protected:
  client::OptionsOr<AppOptions> Resolve(const std::string& args, TopEnvironment env = {}) {
    CLI::App app{"neuron-top"};
    TopCommandLine command_line;
    AddTopOptions(app, command_line);
    app.parse(args);
    return ResolveTopOptions(command_line, env);
  }
  // "exit N: message" for a refused command line, else "ok".
  std::string Outcome(const std::string& args) {
    client::OptionsOr<AppOptions> r = Resolve(args);
    const auto* e = std::get_if<client::CommandLineError>(&r);
    return e == nullptr ? "ok" : "exit " + std::to_string(e->exit_code) + ": " + e->message;
  }
  AppOptions Options(const std::string& args, TopEnvironment env = {}) {
    client::OptionsOr<AppOptions> r = Resolve(args, env);
    if (const auto* e = std::get_if<client::CommandLineError>(&r)) ADD_FAILURE() << e->message;
    return std::holds_alternative<AppOptions>(r) ? std::get<AppOptions>(r) : AppOptions{};
  }
  std::string HostsFile(const std::string& text) {
    const std::string path = dir_.File("hosts");
    std::ofstream(path) << text;
    return path;
  }

  test_util::TempDir dir_{"top_options"};
};

TEST_F(TopOptionsTest, RecordKeepsOneDaemonsStream) {
  const std::string refused =
      "exit 2: --record keeps one daemon's stream: not with --replay or a cluster view";
  EXPECT_EQ(Outcome("--record r.nmon --replay rec"), refused);
  EXPECT_EQ(Outcome("--record r.nmon --hosts /nonexistent"), refused);
  EXPECT_EQ(Outcome("--record r.nmon --connect a:1,b:2"), refused);
  // Checked first: a --from without --replay is not what the user hears about.
  EXPECT_EQ(Outcome("--record r.nmon --from 21:30 --hosts h"), refused);
  EXPECT_EQ(Options("--record r.nmon --connect 127.0.0.1:9414").record, "r.nmon");
}

TEST_F(TopOptionsTest, ATimeNeedsARecording) {
  EXPECT_EQ(Outcome("--from 21:30"), "exit 2: --from needs --replay");
  EXPECT_EQ(Outcome("--from 21:30 --hosts /nonexistent"), "exit 2: --from needs --replay");
}

TEST_F(TopOptionsTest, ARecordingTakesNoDaemonOrSimulatorOptions) {
  for (const std::string option : {"--connect a:1", "--socket s", "--standalone",
                                   "--device sim:trn1", "--scenario x", "--seed 1", "--hosts h"}) {
    EXPECT_EQ(Outcome("--replay rec " + option),
              "exit 2: --replay shows a recording: no daemon or simulator options with it")
        << option;
  }
}

TEST_F(TopOptionsTest, ARecordingPlaysAtSpeedWithoutAnEndpoint) {
  const AppOptions o = Options("--replay rec --from +10m --speed 4 --token-file /nonexistent");
  ASSERT_TRUE(o.replay.has_value());
  EXPECT_EQ(o.replay->path, "rec");
  EXPECT_EQ(o.replay->from, "+10m");
  EXPECT_EQ(o.replay_speed, 4);
  EXPECT_EQ(o.endpoint.kind, client::Endpoint::Kind::kAuto);
  EXPECT_TRUE(o.token.empty());  // the token file is read only to reach a daemon
  EXPECT_EQ(Options("--replay rec").replay_speed, 1);
}

TEST_F(TopOptionsTest, AClusterViewFollowsTcpDaemonsOnly) {
  const std::string hosts = HostsFile("127.0.0.1:9414\n");
  const std::string refused = "exit 1: a cluster view follows TCP daemons only";
  EXPECT_EQ(Outcome("--hosts " + hosts + " --socket s"), refused);
  EXPECT_EQ(Outcome("--hosts " + hosts + " --standalone"), refused);
  EXPECT_EQ(Outcome("--connect a:1,b:2 --socket s"), refused);
  EXPECT_EQ(Outcome("--connect a:1,b:2 --standalone"), refused);
  EXPECT_EQ(Outcome("--hosts " + hosts + " --connect a:1"),
            "exit 1: --hosts and --connect cannot be used together");
}

TEST_F(TopOptionsTest, TheHostsFileIsReadAndChecked) {
  EXPECT_EQ(Outcome("--hosts " + dir_.File("missing")).rfind("exit 1: ", 0), 0u);
  EXPECT_NE(Outcome("--hosts " + dir_.File("missing")).find(dir_.File("missing")),
            std::string::npos);
  const std::string bad = HostsFile("# rack 1\nnoport\n");
  EXPECT_EQ(Outcome("--hosts " + bad).rfind("exit 1: " + bad + ":2: ", 0), 0u)
      << Outcome("--hosts " + bad);
  EXPECT_EQ(Outcome("--hosts " + HostsFile("# nothing\n")),
            "exit 1: " + dir_.File("hosts") + ": no HOST:PORT lines");

  const AppOptions o = Options("--hosts " + HostsFile("127.0.0.1:9414\n# c\n10.0.0.2:9415\n"));
  std::vector<std::string> addresses;
  for (const client::ClusterTarget& t : o.hosts) addresses.push_back(t.address);
  EXPECT_EQ(addresses, (std::vector<std::string>{"127.0.0.1:9414", "10.0.0.2:9415"}));
  EXPECT_EQ(o.endpoint.kind, client::Endpoint::Kind::kTcp);  // the first host, as --connect
  EXPECT_EQ(o.endpoint.host, "127.0.0.1");
  EXPECT_EQ(o.endpoint.port, 9414);
}

TEST_F(TopOptionsTest, AClusterFollowsAtMostMaxHosts) {
  std::string list = "127.0.0.1:1";
  for (std::size_t i = 1; i < kMaxHosts; ++i) list += ",127.0.0.1:" + std::to_string(i + 1);
  EXPECT_EQ(Options("--connect " + list).hosts.size(), kMaxHosts);
  EXPECT_EQ(Outcome("--connect " + list + ",127.0.0.1:9"),
            "exit 1: --connect: more than " + std::to_string(kMaxHosts) + " hosts");
  EXPECT_EQ(Outcome("--connect 127.0.0.1:1,,127.0.0.1:2"),
            "exit 1: --connect: empty HOST:PORT in the list");
}

TEST_F(TopOptionsTest, AHostsFileLineCarriesItsOwnTokenAndTls) {
  const std::string common = dir_.File("common.token");
  std::ofstream(common) << "common\n";
  ::chmod(common.c_str(), 0600);
  std::ofstream(dir_.File("b.token")) << "token-b\n";
  ::chmod(dir_.File("b.token").c_str(), 0600);
  const std::string hosts =
      HostsFile("127.0.0.1:9414\n10.0.0.2:9415 token_file=b.token server_name=node-b.example\n");
  const AppOptions o = Options("--hosts " + hosts + " --token-file " + common + " --insecure");
  ASSERT_EQ(o.hosts.size(), 2u);
  EXPECT_EQ(o.hosts[0].token, "common");
  EXPECT_FALSE(o.hosts[0].endpoint.tls.enabled);
  EXPECT_EQ(o.hosts[1].token, "token-b");  // relative to the hosts file's directory
  EXPECT_TRUE(o.hosts[1].endpoint.tls.enabled);
  EXPECT_EQ(o.hosts[1].endpoint.tls.server_name, "node-b.example");
  EXPECT_EQ(o.notices, (std::vector<std::string>{
                           "--insecure: 2 of 2 hosts are not verified (certificate and name), "
                           "and get the token if they have one"}));
  const std::string bad = HostsFile("127.0.0.1:9414\n10.0.0.2:9415 tls_key=k\n");
  EXPECT_EQ(Outcome("--hosts " + bad), "exit 1: " + bad +
                                           ":2: unknown setting \"tls_key\" (expected "
                                           "token_file=, server_name= or tls_ca=)");
  EXPECT_EQ(Options("--connect 127.0.0.1:9414 --token-file " + common + " --insecure").notices,
            (std::vector<std::string>{
                "--insecure: the token goes to 127.0.0.1:9414 without verifying who serves it"}));
  EXPECT_TRUE(Options("--connect 127.0.0.1:9414 --token-file " + common).notices.empty());
  // A cluster's host that would get the token over plaintext is refused before any connects.
  EXPECT_EQ(Outcome("--hosts " + HostsFile("127.0.0.1:9414\n") + " --token-file " + common),
            "exit 1: refusing to send the token to 127.0.0.1:9414 over plaintext TCP: pass "
            "--tls-ca (the daemon's listeners.tcp.tls) or --insecure");
}

TEST_F(TopOptionsTest, EndpointErrorsExitOne) {
  EXPECT_EQ(Outcome("--socket s --connect a:1"), "exit 1: --socket and --connect are exclusive");
  // A cluster's flags are checked as --connect with its first host.
  EXPECT_EQ(Outcome("--connect 127.0.0.1:1,127.0.0.1:2 --device sim:trn1"),
            "exit 1: --standalone, --device, --scenario, --seed and --speed run an in-process "
            "simulator; they cannot be combined with --socket or --connect");
  EXPECT_EQ(
      Outcome("--connect 127.0.0.1:1 --token-file " + dir_.File("missing")).rfind("exit 1: ", 0),
      0u);
  const AppOptions o = Options("--socket /run/x.sock --delay 2.5 --ascii");
  EXPECT_EQ(o.endpoint.kind, client::Endpoint::Kind::kUnix);
  EXPECT_EQ(o.endpoint.path, "/run/x.sock");
  EXPECT_EQ(o.delay_seconds, 2.5);
  EXPECT_TRUE(o.ascii);
  EXPECT_TRUE(o.hosts.empty());
  EXPECT_FALSE(o.replay.has_value());
}

TEST_F(TopOptionsTest, TheEnvironmentSetsColourAndOnceSize) {
  EXPECT_TRUE(Options("").color);
  EXPECT_TRUE(Options("", {.no_color = ""}).color);  // NO_COLOR counts only when not empty
  EXPECT_FALSE(Options("", {.no_color = "1"}).color);
  EXPECT_FALSE(Options("--no-color").color);
  EXPECT_EQ(Options("").once_width, 120);
  EXPECT_EQ(Options("", {.columns = "80"}).once_width, 80);
  EXPECT_EQ(Options("", {.lines = "30"}).once_height, 0);  // $LINES is --once's only
  EXPECT_EQ(Options("--once", {.lines = "30"}).once_height, 30);
  EXPECT_EQ(Options("--once").once_height, 0);
}

}  // namespace
}  // namespace neuronmon::tui
