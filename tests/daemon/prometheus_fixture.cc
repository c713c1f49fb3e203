#include "tests/daemon/prometheus_fixture.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "daemon/core/host_reader.h"

namespace neuronmon::daemon::testing {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

using std::chrono::seconds;

// /proc/stat of a 4-vCPU host after `n` samples: each adds 100 ticks per CPU (30 user, 5 nice,
// 10 system, 50 idle, 2 iowait, 1 irq, 2 softirq).
std::string StatText(int n) {
  auto line = [&](const std::string& name, int cpus) {
    const int k = cpus * (1000 + 100 * n);
    return name + " " + std::to_string(k * 30 / 100) + " " + std::to_string(k * 5 / 100) + " " +
           std::to_string(k * 10 / 100) + " " + std::to_string(k * 50 / 100) + " " +
           std::to_string(k * 2 / 100) + " " + std::to_string(k / 100) + " " +
           std::to_string(k * 2 / 100) + " 0 0 0\n";
  };
  std::string text = line("cpu ", 4);
  for (int c = 0; c < 4; ++c) text += line("cpu" + std::to_string(c), 1);
  return text + "ctxt " + std::to_string(100000 + 5000 * n) + "\nbtime 1767225000\n";
}

constexpr const char* kMeminfo =
    "MemTotal:       32768000 kB\nMemFree:         2048000 kB\nMemAvailable:   24576000 kB\n"
    "Buffers:          512000 kB\nCached:         16384000 kB\nSwapTotal:       2048000 kB\n"
    "SwapFree:        1536000 kB\n";

constexpr const char* kExitingScenario = R"({
  "name": "exiting",
  "instance": "trn1.32xlarge",
  "runtimes": [
    {"name": "short", "tag": "short-lived", "pid": 5000, "devices": [0], "workers": "single",
     "load": "2s", "stop": "20s", "idle": {}},
    {"name": "long", "tag": "long-lived", "pid": 6000, "devices": "1-15", "workers": "single",
     "load": "2s", "training": {"parameters": 1e9, "tokens_per_step": 65536}}
  ]
})";

DaemonStats FixedStats() {
  DaemonStats s;
  s.clients = {2, 1, 0};
  s.connections_total = 7;
  s.frames_sent = 1200;
  s.bytes_sent = 3456789;
  s.frames_dropped = 3;
  s.disconnects = {{"closed", 4}, {"slow", 1}};
  s.missed_ticks = 2;
  s.samples = 45;
  s.last_sample_seconds = 0.0015;
  s.sample_seconds_total = 0.0675;
  s.last_sample_unix = 1767225645;
  return s;
}

}  // namespace

SimCore::SimCore(const std::string& preset, const std::string& scenario,
                 const std::vector<int>& times)
    : stats_(FixedStats()),
      process_(ProcessMetrics{12.5, 52428800, 1073741824, 1767225000.5, 12, 524288}) {
  const MonoTime t0(seconds(1000));
  auto backend = MakeBackend({"sim:" + preset, scenario, 1, 1}, t0);
  if (!backend.ok()) throw std::runtime_error(backend.status().message());
  auto samples = std::make_shared<int>(0);
  core_ = std::make_unique<DaemonCore>(
      CoreOptions{seconds(1), std::chrono::minutes(10), "test"}, std::move(*backend),
      [samples] { return HostFromText(StatText((*samples)++), kMeminfo); });
  for (int t : times) core_->Sample(t0 + seconds(t), WallTime(seconds(1767225600 + t)));
  scrapes_.responses = {{200, 44}, {503, 1}};
}

Exposition SimCore::Build(const Snapshot* end, const FindingsByPid* findings) const {
  const MetricsWindow w = SelectWindow(core_->history(), seconds(5), core_->period());
  MetricsInput in;
  in.inventory = &core_->inventory();
  in.end = end != nullptr ? end : w.end;
  in.start = w.start == w.end ? in.end : w.start;
  in.stats = &stats_;
  in.scrapes = &scrapes_;
  in.process = &process_;
  in.findings = findings;
  in.jobs = &core_->jobs();
  in.version = "test";
  in.period = core_->period();
  return BuildMetrics(in);
}

std::string ExitingScenario() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("neuronmon-exiting-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << kExitingScenario;
  return path.string();
}

const MetricFamily* Family(const Exposition& e, const std::string& name) {
  for (const MetricFamily& f : e.families()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string LabelOf(const MetricSample& s, const std::string& label) {
  for (const Label& l : s.labels) {
    if (l.name == label) return l.value;
  }
  return "";
}

std::set<std::string> LabelNames(const MetricSample& s) {
  std::set<std::string> names;
  for (const Label& l : s.labels) names.insert(l.name);
  return names;
}

double Value(const Exposition& e, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  const MetricFamily* f = Family(e, name);
  if (f == nullptr) return std::nan("");
  double value = std::nan("");
  int matches = 0;
  for (const MetricSample& s : f->samples) {
    bool all = true;
    for (const auto& [k, v] : labels) all = all && LabelOf(s, k) == v;
    if (all) {
      value = s.value;
      ++matches;
    }
  }
  EXPECT_LE(matches, 1) << name << " has several matching series";
  return value;
}

int RunPromtool(const std::string& exposition, std::string* output) {
  std::string path = (std::filesystem::temp_directory_path() / "prometheus_test_XXXXXX").string();
  const int fd = mkstemp(path.data());
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << exposition;
  const std::string command = std::string(kPromtool) + " check metrics < '" + path + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  char buf[4096];
  for (std::size_t n; pipe != nullptr && (n = fread(buf, 1, sizeof buf, pipe)) > 0;) {
    output->append(buf, n);
  }
  const int status = pipe != nullptr ? pclose(pipe) : -1;
  std::filesystem::remove(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace neuronmon::daemon::testing
