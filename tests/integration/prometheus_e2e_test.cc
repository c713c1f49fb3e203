// End to end with a real Prometheus server: it scrapes the daemon's /metrics on loopback (it
// negotiates OpenMetrics), and its query API returns neuroncore_utilization_ratio and the
// collective latency histogram. Prometheus runs from a temp dir and is killed, waited for and
// removed in every case. Skipped when /usr/bin/prometheus is not installed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/http_client.h"
#include "tests/temp_dir.h"
#include "tests/tls_pki.h"

extern char** environ;

namespace neuronmon::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr const char* kPrometheus = "/usr/bin/prometheus";

// A prometheus process scraping 127.0.0.1:`target_ports` every second, in a temp dir it owns;
// the targets carry the label neuron_job="llama" (as the cluster rules expect), and `rules` (the
// text of a rule file) is loaded and evaluated every second when given. `scrape` is added to the
// job's settings as it is (e.g. "    scheme: https\n    tls_config: ...").
class PrometheusServer {
 public:
  explicit PrometheusServer(const std::vector<std::uint16_t>& target_ports,
                            const std::string& rules = "", const std::string& scrape = "")
      : port_(FreePort()) {
    dir_ = fs::temp_directory_path() / ("neuronmon-prom-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream config(dir_ / "prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
           << "  evaluation_interval: 1s\n";
    if (!rules.empty()) {
      std::ofstream(dir_ / "rules.yml") << rules;
      config << "rule_files: ['" << (dir_ / "rules.yml").string() << "']\n";
    }
    config << "scrape_configs:\n  - job_name: neuronmon\n"
           << scrape << "    static_configs:\n"
           << "      - labels: {neuron_job: llama}\n        targets: [";
    for (std::size_t i = 0; i < target_ports.size(); ++i)
      config << (i ? ", " : "") << "'127.0.0.1:" << target_ports[i] << "'";
    config << "]\n";
    config.close();
    const std::vector<std::string> args = {
        kPrometheus, "--config.file=" + (dir_ / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir_ / "data").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"};
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string log = (dir_ / "prometheus.log").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, kPrometheus, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }

  ~PrometheusServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  bool started() const { return pid_ > 0; }
  std::uint16_t port() const { return port_; }
  std::string log() const {
    std::ifstream in(dir_ / "prometheus.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // The `data.result` of an instant query, once it is non-empty, polling until `deadline`;
  // empty when it never was.
  nlohmann::json QueryUntilFound(const std::string& promql,
                                 std::chrono::steady_clock::time_point deadline) const {
    while (std::chrono::steady_clock::now() < deadline) {
      const auto r = Fetch(port_, "/api/v1/query?query=" + promql);
      if (r && r->status == 200) {
        const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
        if (!j.is_discarded() && j.value("status", "") == "success" &&
            !j["data"]["result"].empty()) {
          return j["data"]["result"];
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return nlohmann::json::array();
  }

  // The scrape target's health and last error, as /api/v1/targets reports it.
  std::pair<std::string, std::string> TargetHealth() const {
    const auto r = Fetch(port_, "/api/v1/targets");
    if (!r || r->status != 200) return {"", "no answer"};
    const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["data"]["activeTargets"].empty()) return {"", "no target"};
    const nlohmann::json& t = j["data"]["activeTargets"][0];
    return {t.value("health", ""), t.value("lastError", "")};
  }

 private:
  fs::path dir_;
  std::uint16_t port_;
  pid_t pid_ = -1;
};

TEST(PrometheusEndToEnd, ScrapesTheDaemonAndAnswersQueries) {
  if (::access(kPrometheus, X_OK) != 0) GTEST_SKIP() << kPrometheus << " is not installed";
  // 20x simulated time: the model loads and collectives start within a second.
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
        c.backend.speed = 20;
      },
      "sim:trn1.2xlarge", "100ms");
  const std::optional<std::uint16_t> port = d.metrics_port();
  ASSERT_TRUE(port.has_value());
  PrometheusServer prometheus({*port});
  ASSERT_TRUE(prometheus.started());
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);

  const nlohmann::json util = prometheus.QueryUntilFound("neuroncore_utilization_ratio", deadline);
  ASSERT_EQ(util.size(), 2u) << "trn1.2xlarge has 2 NeuronCores\n" << prometheus.log();
  for (const nlohmann::json& series : util) {
    EXPECT_EQ(series["metric"]["job"], "neuronmon");
    EXPECT_EQ(series["metric"]["instance_type"], "trn1.2xlarge");
    EXPECT_TRUE(series["metric"].contains("runtime_tag"));
    const double v = std::stod(series["value"][1].get<std::string>());
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1);
  }
  const nlohmann::json buckets = prometheus.QueryUntilFound(
      "neuron_collective_latency_seconds_bucket%7Boperation%3D%22all_reduce%22%7D", deadline);
  ASSERT_EQ(buckets.size(), 26u) << "25 octave bounds and +Inf\n" << prometheus.log();
  bool saw_inf = false;
  for (const nlohmann::json& b : buckets) saw_inf = saw_inf || b["metric"]["le"] == "+Inf";
  EXPECT_TRUE(saw_inf);
  const auto [health, error] = prometheus.TargetHealth();
  EXPECT_EQ(health, "up") << error;
  EXPECT_EQ(error, "");
}

// Prometheus scraping /metrics over HTTPS with `scheme: https` and a tls_config carrying a client
// certificate, against a daemon that requires and verifies one (client_auth_type
// RequireAndVerifyClientCert, as Prometheus' own web-config.yml would say).
TEST(PrometheusEndToEnd, ScrapesOverHttpsWithAClientCertificate) {
  if (::access(kPrometheus, X_OK) != 0) GTEST_SKIP() << kPrometheus << " is not installed";
  test_util::TempDir dir("prom_tls");
  test_util::TestPki pki(dir.path());
  ASSERT_TRUE(pki.ok());
  DaemonFixture d(
      [&](daemon::DaemonConfig& c) {
        c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
        daemon::TlsServerOptions& tls = c.listeners.metrics_tls;
        tls.cert_file = pki.server_cert();
        tls.key_file = pki.server_key();
        tls.client_auth_type = "RequireAndVerifyClientCert";
        tls.client_ca_file = pki.ca();
        tls.client_allowed_sans = {"client.example"};
      },
      "sim:trn1.2xlarge", "100ms");
  const std::optional<std::uint16_t> port = d.metrics_port();
  ASSERT_TRUE(port.has_value());
  PrometheusServer prometheus({*port}, "",
                              "    scheme: https\n    tls_config:\n      ca_file: " + pki.ca() +
                                  "\n      cert_file: " + pki.client_cert() +
                                  "\n      key_file: " + pki.client_key() + "\n");
  ASSERT_TRUE(prometheus.started());
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  const nlohmann::json up = prometheus.QueryUntilFound("up%3D%3D1", deadline);
  ASSERT_EQ(up.size(), 1u) << prometheus.log() << prometheus.TargetHealth().second;
  const nlohmann::json info = prometheus.QueryUntilFound("neuron_hardware_info", deadline);
  EXPECT_EQ(info.size(), 1u) << prometheus.log();
  const auto [health, error] = prometheus.TargetHealth();
  EXPECT_EQ(health, "up") << error;
}

// The shipped cluster rules on a real Prometheus: four daemons simulate the nodes of
// cluster-straggler (node 2 computes 40% slower) and NeuronNodeStraggler fires for node 2's target
// and no other. The rules' 1 m windows and `for:` durations are shortened to seconds (the daemons
// run simulated time 20x faster); everything else is the file as shipped.
TEST(PrometheusEndToEnd, ClusterRulesNameTheStragglerNode) {
  if (::access(kPrometheus, X_OK) != 0) GTEST_SKIP() << kPrometheus << " is not installed";
  std::ifstream in(std::string(NEURONMON_SOURCE_DIR) +
                   "/packaging/prometheus/neuronmon-cluster.yml");
  std::string rules(std::istreambuf_iterator<char>(in), {});
  ASSERT_FALSE(rules.empty());
  auto replace_all = [&](const std::string& from, const std::string& to) {
    std::size_t n = 0;
    for (std::size_t at = rules.find(from); at != std::string::npos;
         at = rules.find(from, at + to.size()), ++n)
      rules.replace(at, from.size(), to);
    return n;
  };
  EXPECT_GT(replace_all("[1m]", "[5s]"), 0u);
  EXPECT_GT(replace_all("for: 1m", "for: 3s"), 0u);

  std::vector<std::unique_ptr<DaemonFixture>> nodes;
  std::vector<std::uint16_t> ports;
  for (int k = 0; k < 4; ++k) {
    nodes.push_back(std::make_unique<DaemonFixture>(
        [k](daemon::DaemonConfig& c) {
          c.listeners.metrics = daemon::ListenAddress{"127.0.0.1", 0};
          c.backend.scenario = "cluster-straggler";
          c.backend.node = k;
          c.backend.nodes = 4;
          c.backend.speed = 20;
        },
        "sim:trn1.32xlarge", "100ms"));
    const std::optional<std::uint16_t> port = nodes.back()->metrics_port();
    ASSERT_TRUE(port.has_value());
    ports.push_back(*port);
  }
  PrometheusServer prometheus(ports, rules);
  ASSERT_TRUE(prometheus.started());
  const auto deadline = std::chrono::steady_clock::now() + seconds(90);
  const nlohmann::json firing = prometheus.QueryUntilFound(
      "ALERTS%7Balertname%3D%22NeuronNodeStraggler%22%2Calertstate%3D%22firing%22%7D", deadline);
  ASSERT_EQ(firing.size(), 1u) << firing.dump() << "\n" << prometheus.log();
  EXPECT_EQ(firing[0]["metric"]["instance"], "127.0.0.1:" + std::to_string(ports[2]))
      << "node 2 is the slow one; ports " << ports[0] << " " << ports[1] << " " << ports[2] << " "
      << ports[3];
  EXPECT_EQ(firing[0]["metric"]["neuron_job"], "llama");
  // No other node is named, and the job is not called hung.
  const auto hung =
      Fetch(prometheus.port(), "/api/v1/query?query=ALERTS%7Balertname%3D%22NeuronJobHung%22%7D");
  ASSERT_TRUE(hung.has_value());
  EXPECT_NE(hung->body.find("\"result\":[]"), std::string::npos) << hung->body;
}

}  // namespace
}  // namespace neuronmon::testing
