// The Grafana dashboard and the Prometheus alerting rules users install (packaging/): the
// dashboard is valid JSON with AWS's panels, and every metric either file queries is one the
// daemon exports, so a renamed family cannot silently blank a panel or mute an alert.
// (`promtool check rules` / `test rules` run as their own ctests.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "daemon/core/metrics/prometheus.h"
#include "tests/daemon/prometheus_fixture.h"

namespace neuronmon::daemon {
namespace {

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::filesystem::path(NEURONMON_SOURCE_DIR) / relative);
  EXPECT_TRUE(in) << relative;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every sample name the daemon can export, from a scrape with findings.
std::set<std::string> ExportedNames() {
  testing::SimCore sim("trn2.48xlarge", "healthy-training", {40, 45});
  const RuntimeSample& r = sim.core().history().newest()->runtimes.at(0);
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_HBM_BOUND);
  f.add_evidence()->set_name("hbm_utilization_percent");
  const FindingsByPid findings = {{r.pid, {f}}};
  std::set<std::string> names = {"up"};  // Prometheus's own
  // A failed device has health reasons (a healthy one has none to export).
  testing::SimCore failed("trn2.48xlarge", "ecc-degradation", {200, 205});
  std::vector<MetricFamily> families = sim.Build(nullptr, &findings).families();
  const Exposition unhealthy = failed.Build();
  for (const MetricFamily& more : unhealthy.families()) families.push_back(more);
  for (const MetricFamily& family : families) {
    names.insert(family.name);
    if (family.type == MetricType::kHistogram) {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(family.name + suffix);
    }
  }
  return names;
}

// Metric names in PromQL (or a rules file): label matchers, grouping clauses and templates
// removed first, so label names are not mistaken for metrics.
std::set<std::string> QueriedNames(std::string text) {
  for (const char* pattern : {R"(\{\{[^}]*\}\})", R"(\{[^}]*\})",
                              R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"}) {
    text = std::regex_replace(text, std::regex(pattern), " ");
  }
  static const std::regex kName(
      R"(\b(instance_info|(neuroncore|neuron|execution|system|hardware|process)_[a-z0-9_]+)\b)");
  std::set<std::string> names;
  for (std::sregex_iterator it(text.begin(), text.end(), kName), end; it != end; ++it) {
    names.insert(it->str());
  }
  return names;
}

TEST(GrafanaDashboard, ParsesAndKeepsAwsPanels) {
  const nlohmann::json dashboard =
      nlohmann::json::parse(ReadSourceFile("packaging/grafana/neuronmon-dashboard.json"));
  EXPECT_TRUE(dashboard.contains("title"));
  std::set<std::string> exprs;
  for (const auto& panel : dashboard.at("panels")) {
    if (!panel.contains("targets")) continue;
    for (const auto& target : panel.at("targets")) exprs.insert(target.at("expr"));
  }
  // AWS's neuron-monitor dashboard queries, unchanged.
  for (const char* aws : {"count(instance_info)", "avg(neuroncore_utilization_ratio)",
                          "avg by (neuroncore) (neuroncore_utilization_ratio)",
                          "count(neuroncore_utilization_ratio > 0)",
                          "sum(rate(execution_status_total{status_type=\"completed\"}[1m]))",
                          "sum(rate(execution_status_total{status_type!=\"completed\"}[1m]))",
                          "avg by (percentile) (execution_latency_seconds)",
                          "avg by (usage_type) (system_vcpu_usage_ratio)",
                          "avg(system_memory_used_bytes / system_memory_total_bytes)"}) {
    EXPECT_EQ(exprs.count(aws), 1u) << aws;
  }
  const std::set<std::string> exported = ExportedNames();
  for (const std::string& expr : exprs) {
    for (const std::string& name : QueriedNames(expr)) {
      EXPECT_EQ(exported.count(name), 1u) << name << " in " << expr << " is not exported";
    }
  }
}

// The cluster rules and dashboard query the daemon's metrics and the rules' own recordings.
TEST(ClusterRules, QueryOnlyExportedOrRecordedMetrics) {
  std::string rules = ReadSourceFile("packaging/prometheus/neuronmon-cluster.yml");
  rules = std::regex_replace(rules, std::regex("#[^\n]*"), " ");  // comments name labels
  const std::set<std::string> exported = ExportedNames();
  const std::set<std::string> queried = QueriedNames(rules);
  EXPECT_GE(queried.size(), 5u);
  for (const std::string& name : queried) {
    EXPECT_EQ(exported.count(name), 1u) << name << " is not exported";
  }
  std::set<std::string> recorded;
  static const std::regex kRecord(R"(record:\s*(\S+))");
  for (std::sregex_iterator it(rules.begin(), rules.end(), kRecord), end; it != end; ++it) {
    recorded.insert((*it)[1].str());
  }
  EXPECT_GE(recorded.size(), 5u);
  const nlohmann::json dashboard =
      nlohmann::json::parse(ReadSourceFile("packaging/grafana/neuronmon-cluster-dashboard.json"));
  std::size_t uses = 0;
  for (const auto& panel : dashboard.at("panels")) {
    for (const auto& target : panel.at("targets")) {
      const std::string expr = target.at("expr");
      for (const std::string& name : QueriedNames(expr)) {
        EXPECT_EQ(exported.count(name), 1u) << name << " in " << expr << " is not exported";
      }
      static const std::regex kRecorded(R"(neuronmon:[a-z0-9_:]+)");
      for (std::sregex_iterator it(expr.begin(), expr.end(), kRecorded), end; it != end; ++it) {
        ++uses;
        EXPECT_EQ(recorded.count(it->str()), 1u)
            << it->str() << " in " << expr << " is not recorded by neuronmon-cluster.yml";
      }
    }
  }
  EXPECT_GE(uses, 5u);
}

TEST(AlertRules, QueryOnlyExportedMetrics) {
  const std::string rules = ReadSourceFile("packaging/prometheus/neuronmon-alerts.yml");
  const std::set<std::string> queried = QueriedNames(rules);
  EXPECT_GE(queried.size(), 5u);
  const std::set<std::string> exported = ExportedNames();
  for (const std::string& name : queried) {
    EXPECT_EQ(exported.count(name), 1u) << name << " is not exported";
  }
}

}  // namespace
}  // namespace neuronmon::daemon
