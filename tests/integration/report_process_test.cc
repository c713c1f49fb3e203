// neuron-report as users run it against a daemon on a temp socket: the list and one job's report
// in each format, a Slurm Epilog's --stop (and a second one refused), --start/--stop where they
// cannot go, and a daemon restart that keeps every job (docs/jobs.md).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"
#include "tests/integration/shell.h"

namespace neuronmon::testing {
namespace {

namespace fs = std::filesystem;

const std::string kReport = NEURONMON_REPORT_BINARY;

Output Report(const std::string& args) { return Shell(kReport + " " + args); }

// A temp directory for the job file, outliving one daemon.
struct StateDir {
  fs::path path = fs::temp_directory_path() / ("neuronmon-jobs-" + std::to_string(::getpid()));
  StateDir() { fs::create_directories(path); }
  ~StateDir() { fs::remove_all(path); }
  std::string file() const { return (path / "jobs.pb").string(); }
};

std::unique_ptr<DaemonFixture> TwoJobsDaemon(const StateDir& state) {
  return std::make_unique<DaemonFixture>(
      [&state](daemon::DaemonConfig& c) {
        c.backend.scenario = "two-jobs";
        c.jobs.file = state.file();
      },
      "sim:trn2.48xlarge", "100ms");
}

// The jobs as neuron-report -j lists them, once each has been accounted for `seconds`.
nlohmann::json JobsOnceAccounted(const std::string& socket, double seconds) {
  nlohmann::json jobs;
  for (int i = 0; i < 200; ++i) {
    const Output o = Report("--socket " + socket + " -j");
    EXPECT_EQ(o.status, 0) << o.err;
    jobs = nlohmann::json::parse(o.out);
    bool ready = jobs.size() == 2;
    for (const auto& j : jobs) ready = ready && j["accounted_seconds"].get<double>() >= seconds;
    if (ready) return jobs;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "jobs not accounted: " << jobs.dump();
  return jobs;
}

TEST(NeuronReportProcess, ListsAndReportsTheJobsOfADaemon) {
  StateDir state;
  auto d = TwoJobsDaemon(state);
  const nlohmann::json jobs = JobsOnceAccounted(d->socket_path(), 1);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["id"], "slurm-5001");
  EXPECT_EQ(jobs[1]["attribution"]["user"], "vision");
  EXPECT_GT(jobs[0]["neuroncore_seconds_held"].get<double>(), 0);

  const Output list = Report("--socket " + d->socket_path());
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_EQ(list.out.rfind("JOB  ID", 0), 0u) << list.out;
  EXPECT_NE(list.out.find("slurm-5002"), std::string::npos);

  const Output text = Report("--socket " + d->socket_path() + " 5002");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out.rfind("Job slurm-5002 (#2)", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("Where the time went"), std::string::npos);
  const Output md = Report("--socket " + d->socket_path() + " --markdown slurm-5001");
  ASSERT_EQ(md.status, 0) << md.err;
  EXPECT_EQ(md.out.rfind("### Job slurm-5001 (#1)", 0), 0u) << md.out;
  const Output json = Report("--socket " + d->socket_path() + " -j 1");
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["id"], "slurm-5001");

  const Output missing = Report("--socket " + d->socket_path() + " 7777");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("neuron-report: no job 7777 (jobs: slurm-5001, slurm-5002)"),
            std::string::npos)
      << missing.err;
  const Output both = Report("--socket " + d->socket_path() + " -j --markdown 1");
  EXPECT_NE(both.status, 0);
}

TEST(NeuronReportProcess, AnEpilogStopsTheJobAndARestartKeepsEveryJob) {
  StateDir state;
  auto d = TwoJobsDaemon(state);
  (void)JobsOnceAccounted(d->socket_path(), 1);
  const Output stop = Report("--socket " + d->socket_path() + " --stop 5001");
  ASSERT_EQ(stop.status, 0) << stop.err;
  EXPECT_EQ(stop.out, "job 5001 ended\n");
  const Output again = Report("--socket " + d->socket_path() + " --stop 5001");
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("no live job 5001"), std::string::npos) << again.err;
  const Output with_job = Report("--socket " + d->socket_path() + " --stop 5001 1");
  EXPECT_EQ(with_job.status, 2) << with_job.err;
  const Output standalone = Report("--standalone --stop 5001");
  EXPECT_EQ(standalone.status, 2) << standalone.err;

  const Output before = Report("--socket " + d->socket_path() + " -j");
  ASSERT_EQ(before.status, 0) << before.err;
  const nlohmann::json was = nlohmann::json::parse(before.out);
  d->Stop();
  d.reset();
  ASSERT_TRUE(fs::exists(state.file()));

  // A new daemon: the ended job is still listed, the live one continues under its number.
  d = TwoJobsDaemon(state);
  const nlohmann::json now = JobsOnceAccounted(d->socket_path(), 0);
  ASSERT_EQ(now.size(), 2u) << now.dump();
  EXPECT_EQ(now[0]["id"], "slurm-5002");
  EXPECT_EQ(now[0]["number"], 2);
  EXPECT_EQ(now[0]["state"], "live");
  EXPECT_GE(now[0]["neuroncore_seconds_held"].get<double>(),
            was[0]["neuroncore_seconds_held"].get<double>());
  EXPECT_EQ(now[1]["id"], "slurm-5001");
  EXPECT_EQ(now[1]["state"], "ended");
  EXPECT_EQ(now[1]["stop_marked"], true);
  EXPECT_EQ(now[1]["neuroncore_seconds_held"], was[1]["neuroncore_seconds_held"]);
}

// cluster-straggler on four daemons: each node alone sees its job collective-bound (the slow node
// healthy); --hosts compares the job across the nodes and names node 2 the straggler.
TEST(NeuronReportProcess, HostsNameTheClusterStraggler) {
  StateDir state;
  const std::string token = (state.path / "token").string();
  std::ofstream(token) << "cluster-secret\n";
  ::chmod(token.c_str(), 0600);
  std::vector<std::unique_ptr<DaemonFixture>> nodes;
  std::string hosts;
  for (int k = 0; k < 4; ++k) {
    const std::uint16_t port = FreePort();
    nodes.push_back(std::make_unique<DaemonFixture>(
        [&](daemon::DaemonConfig& c) {
          c.listeners.tcp = daemon::ListenAddress{"127.0.0.1", port};
          c.auth_token_file = token;
          c.backend.scenario = "cluster-straggler";
          c.backend.node = k;
          c.backend.nodes = 4;
          c.backend.speed = 20;  // past the warm-up in a few seconds
        },
        "sim:trn1.32xlarge", "100ms"));
    hosts += "127.0.0.1:" + std::to_string(port) + "\n";
  }
  const std::string hosts_file = (state.path / "hosts").string();
  std::ofstream(hosts_file) << hosts;
  // Until each node's job has a minute of verdicts (3 s at 20x).
  Output o;
  for (int i = 0; i < 100; ++i) {
    o = Report("--hosts " + hosts_file + " --token-file " + token + " --insecure");
    if (o.status == 0 && o.out.find("cluster: straggler") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(o.status, 0) << o.err << o.out;
  EXPECT_EQ(o.out.rfind("HOST", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("cluster: straggler: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ip-10-0-0-6"), std::string::npos) << o.out;
  // Node 2's row says straggler; the others say what they saw alone.
  std::istringstream lines(o.out);
  int stragglers = 0, rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("127.0.0.1:", 0) != 0) continue;
    ++rows;
    if (line.ends_with("straggler")) {
      ++stragglers;
      EXPECT_NE(line.find("ip-10-0-0-6"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(rows, 4) << o.out;
  EXPECT_EQ(stragglers, 1) << o.out;
  // One node gone: its row says so, and the exit status too.
  nodes[3]->Stop();
  nodes[3].reset();
  const Output down = Report("--hosts " + hosts_file + " --token-file " + token + " --insecure");
  EXPECT_EQ(down.status, 1);
  EXPECT_NE(down.out.find("unreachable"), std::string::npos) << down.out;
}

}  // namespace
}  // namespace neuronmon::testing
