// neuron-top's cluster view end to end, without the screen: four daemons simulate the four nodes
// of cluster-straggler (TCP on loopback, a token), a fifth address refuses connections; the
// ClusterFollower follows all five with the light subscription and the cluster comparison names
// node 2 (ip-10-0-0-6), while the dead host is shown down and never holds up the others.
#include "client/cluster.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/cluster_follower.h"
#include "client/endpoint_flags.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"

namespace neuronmon::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Plaintext loopback TCP with a token: only with --insecure since TLS came (the daemons here
// have no TLS listener).
std::vector<client::ClusterTarget> InsecureTargets(const std::vector<std::string>& addresses,
                                                   const std::string& token) {
  std::vector<client::HostsFileLine> lines(addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) lines[i].address = addresses[i];
  client::TlsClientOptions insecure;
  insecure.insecure = true;
  Result<std::vector<client::ClusterTarget>> t =
      client::ResolveClusterHosts(lines, insecure, token);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : std::vector<client::ClusterTarget>{};
}

TEST(Cluster, FollowerNamesTheStragglerNodeOfFourDaemons) {
  const std::string token_path = (std::filesystem::temp_directory_path() /
                                  ("neuronmon-cluster-token-" + std::to_string(::getpid())))
                                     .string();
  std::ofstream(token_path) << "cluster-secret\n";
  ::chmod(token_path.c_str(), 0600);
  std::vector<std::unique_ptr<DaemonFixture>> nodes;
  std::vector<std::string> addresses;
  for (int k = 0; k < 4; ++k) {
    const std::uint16_t port = FreePort();
    nodes.push_back(std::make_unique<DaemonFixture>(
        [&](daemon::DaemonConfig& c) {
          c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", port};
          c.auth_token_file = token_path;
          c.backend.scenario = "cluster-straggler";
          c.backend.node = k;
          c.backend.nodes = 4;
          c.backend.speed = 20;  // past the warm-up (40 s simulated) in 2 s
        },
        "sim:trn1.32xlarge", "100ms"));
    addresses.push_back("127.0.0.1:" + std::to_string(port));
  }
  addresses.push_back("127.0.0.1:" + std::to_string(FreePort()));  // nobody listens there

  client::ClusterFollowerOptions options;
  options.hosts = InsecureTargets(addresses, "cluster-secret");
  options.period_seconds = 0.2;
  options.initial_backoff = std::chrono::milliseconds(100);
  auto follower = client::ClusterFollower::Start(options);
  ASSERT_TRUE(follower.ok()) << follower.status().message();

  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  std::vector<client::ClusterHost> rows;
  client::ClusterAnalysis analysis;
  bool all_rows = false;
  while (Clock::now() < deadline) {
    rows = (*follower)->Rows();
    analysis = client::AnalyzeCluster(rows);
    all_rows = true;
    for (std::size_t i = 0; i < 4; ++i) all_rows = all_rows && rows[i].has_summary;
    if (all_rows && analysis.verdict.kind() == v1::FINDING_KIND_STRAGGLER) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(all_rows) << "every live host reports";
  ASSERT_EQ(analysis.verdict.kind(), v1::FINDING_KIND_STRAGGLER) << analysis.verdict.summary();
  EXPECT_EQ(analysis.verdict.straggler(), "ip-10-0-0-6") << analysis.verdict.summary();
  EXPECT_EQ(analysis.verdict.summary().rfind("node ip-10-0-0-6: ", 0), 0u)
      << analysis.verdict.summary();
  for (std::size_t k = 0; k < 4; ++k) {
    const client::ClusterHost& h = rows[k];
    EXPECT_EQ(h.state, client::HostState::kUp);
    EXPECT_EQ(h.name, "ip-10-0-0-" + std::to_string(4 + k));
    EXPECT_EQ(h.instance_type, "trn1.32xlarge");
    EXPECT_EQ(h.devices, 16u);
    EXPECT_NE(h.summary.job().find("torchrun --nnodes 4"), std::string::npos);
    EXPECT_EQ(h.summary.cores_in_use(), 32u);
    // The light subscription: a few hundred bytes per report, not the full stream's tens of KB.
    ASSERT_GT(h.reports, 0u);
    EXPECT_LT(h.bytes / h.reports, 1024u)
        << h.name << ": " << h.bytes << " bytes in " << h.reports << " reports";
  }
  ASSERT_EQ(analysis.jobs.size(), 1u);
  EXPECT_EQ(analysis.jobs[0].hosts.size(), 4u);
  EXPECT_EQ(rows[4].state, client::HostState::kDown);
  EXPECT_FALSE(rows[4].error.empty());
  EXPECT_NE(analysis.verdict.summary().find("1 of 5 hosts not reporting"), std::string::npos);
  follower->reset();
  nodes.clear();
  std::filesystem::remove(token_path);
}

// A wrong token is a host that is down with the daemon's reason, not a silent empty row.
TEST(Cluster, WrongTokenShowsTheHostDownWithTheReason) {
  const std::string token_path = (std::filesystem::temp_directory_path() /
                                  ("neuronmon-cluster-token2-" + std::to_string(::getpid())))
                                     .string();
  std::ofstream(token_path) << "right\n";
  ::chmod(token_path.c_str(), 0600);
  const std::uint16_t port = FreePort();
  DaemonFixture d(
      [&](daemon::DaemonConfig& c) {
        c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", port};
        c.auth_token_file = token_path;
      },
      "sim:trn1.2xlarge", "100ms");
  client::ClusterFollowerOptions options;
  options.hosts = InsecureTargets({"127.0.0.1:" + std::to_string(port)}, "wrong");
  options.initial_backoff = std::chrono::milliseconds(100);
  auto follower = client::ClusterFollower::Start(options);
  ASSERT_TRUE(follower.ok());
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  client::ClusterHost row;
  while (Clock::now() < deadline) {
    row = (*follower)->Rows().at(0);
    if (row.state == client::HostState::kDown && !row.error.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(row.state, client::HostState::kDown);
  EXPECT_NE(row.error.find("token"), std::string::npos) << row.error;
  follower->reset();
  std::filesystem::remove(token_path);
}

}  // namespace
}  // namespace neuronmon::testing
