// Writes the fuzz targets' seed corpora: real frames (Hello, Subscribe, Heartbeat) for
// session_fuzz, Subscribes for subscription_fuzz, the shipped daemon config and scenarios, AWS's
// neuron-monitor config examples, HTTP requests as Prometheus and curl send them, and Welcomes and
// Reports of simulated instances for render_fuzz. Usage: make_corpus DIR (tests/fuzz/corpus);
// it overwrites its own files and leaves others alone. Deterministic: the same seeds every run.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/backend.h"
#include "daemon/core/config/config_file.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/host_reader.h"
#include "daemon/core/report/subscription.h"
#include "proto/wire/frame_codec.h"
#include "simdev/scenario_library.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/session_ops.h"

namespace neuronmon::fuzz {
namespace {

using std::chrono::seconds;

// The corpus root directory, set once by main.
const std::string& Root(const char* set = nullptr) {
  static const std::string root = set != nullptr ? set : "";
  return root;
}

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::string dir = Root() + "/" + target;
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

std::string Frame(const v1::Envelope& e) { return *wire::EncodeFrame(e); }

v1::Envelope Hello(const std::string& token = "") {
  v1::Envelope e;
  e.mutable_hello()->set_protocol_version(1);
  e.mutable_hello()->set_client_name("neuron-top/0.1.0");
  if (!token.empty()) e.mutable_hello()->set_token(token);
  return e;
}

v1::Envelope Subscribe(std::vector<std::pair<v1::Group, std::uint64_t>> groups,
                       const std::string& filter, std::optional<std::uint64_t> resume) {
  v1::Envelope e;
  for (const auto& [g, period] : groups) {
    v1::GroupSubscription* s = e.mutable_subscribe()->add_groups();
    s->set_group(g);
    s->set_period_ns(period);
  }
  e.mutable_subscribe()->set_tag_filter(filter);
  if (resume) e.mutable_subscribe()->set_resume_after_seq(*resume);
  return e;
}

v1::Envelope Heartbeat() {
  v1::Envelope e;
  e.mutable_heartbeat()->set_newest_seq(7);
  return e;
}

void RawSession(const std::string& name, std::uint8_t setup, const std::string& stream) {
  Write("session", name, std::string(1, static_cast<char>(setup)) + '\xff' + stream);
}

// Structured session programs, in session_ops.h's format.
class Program {
 public:
  explicit Program(std::uint8_t setup) { w_.U8(setup | kStructured); }
  Program& Hello(std::uint8_t version_pick = 0, std::uint8_t token_pick = 0) {
    Op(Op::kHello);
    w_.U8(version_pick);
    w_.U8(token_pick);
    w_.String("neuron-monitor/0.1.0", 100);
    return *this;
  }
  // Every group at the base period, an optional filter from session_fuzz's list, optional resume.
  Program& Subscribe(int groups, int filter_index, int resume_pick) {
    Op(Op::kSubscribe);
    w_.U8(static_cast<std::uint8_t>(groups));
    for (int g = 0; g < groups; ++g) {
      w_.U8(static_cast<std::uint8_t>(1 + g));  // the group
      w_.U8(static_cast<std::uint8_t>(g % 3));  // period: 0, 1 s, 5 s
    }
    w_.U8(filter_index < 0 ? 0 : 1);
    if (filter_index >= 0) w_.U8(static_cast<std::uint8_t>(filter_index));
    w_.U8(resume_pick < 0 ? 0 : 1);
    if (resume_pick >= 0) w_.U8(static_cast<std::uint8_t>(resume_pick));
    return *this;
  }
  Program& Then(fuzz::Op op) {
    Op(op);
    if (op == Op::kSweep) w_.U8(2);  // 6 s later
    return *this;
  }
  const std::string& bytes() const { return w_.bytes(); }

 private:
  void Op(fuzz::Op op) { w_.U8(static_cast<std::uint8_t>(op)); }
  FuzzInputWriter w_;
};

void SessionSeeds() {
  const std::uint64_t s = 1'000'000'000;
  const std::string hello = Frame(Hello()), token_hello = Frame(Hello("fuzz-token-6b1d0c2f9e"));
  const std::string all = Frame(Subscribe({}, "", std::nullopt));
  const std::string top = Frame(Subscribe({{v1::GROUP_NEURONCORE_COUNTERS, s},
                                           {v1::GROUP_MEMORY_USED, 5 * s},
                                           {v1::GROUP_HBM_STATS, s},
                                           {v1::GROUP_BOTTLENECK_ANALYSIS, s}},
                                          "llama", std::nullopt));
  const std::string resume = Frame(Subscribe({{v1::GROUP_EXECUTION_STATS, 0}}, "", 25));
  const std::string bad_filter = Frame(Subscribe({{v1::GROUP_VCPU_USAGE, 0}}, "llama[(", {}));
  RawSession("raw_hello_subscribe", 0, hello + all + Frame(Heartbeat()));
  RawSession("raw_neuron_top", 0, hello + top);
  RawSession("raw_resume", 0, hello + resume);
  RawSession("raw_bad_filter", 0, hello + bad_filter + all);
  RawSession("raw_subscribe_first", 0, all + hello);
  RawSession("raw_tcp_token", kTcp, token_hello + all);
  RawSession("raw_tcp_no_token", kTcp, hello + all);
  RawSession("raw_oversized", 0, hello + "\xff\xff\xff\xff\x0f");
  Write("session", "prog_subscribe_sample",
        Program(0).Hello().Subscribe(0, -1, -1).Then(Op::kSample).Then(Op::kSample).bytes());
  Write("session", "prog_resume_slow_reader",
        Program(kShortQueue | kNotReading)
            .Hello()
            .Subscribe(4, 0, 3)
            .Then(Op::kSample)
            .Then(Op::kSample)
            .Then(Op::kSample)
            .Then(Op::kToggleRead)
            .Then(Op::kSample)
            .bytes());
  Write("session", "prog_resubscribe",
        Program(0x04).Hello().Subscribe(2, 1, -1).Subscribe(3, 4, 1).Then(Op::kSample).bytes());
  Write("session", "prog_tcp_deadlines",
        Program(kTcp | kShortDeadlines).Hello().Then(Op::kSweep).bytes());
  Write("session", "prog_pending_subscribe",
        Program(0x08).Hello().Subscribe(1, -1, -1).Subscribe(2, 2, -1).Then(Op::kWait).bytes());
}

void SubscriptionSeeds() {
  const auto write = [](const std::string& name, const v1::Subscribe& s) {
    Write("subscription", name, std::string(1, '\x01') + '\x00' + s.SerializeAsString());
  };
  const std::uint64_t s = 1'000'000'000;
  write("all_groups", Subscribe({}, "", std::nullopt).subscribe());
  write("neuron_top", Subscribe({{v1::GROUP_NEURONCORE_COUNTERS, s}, {v1::GROUP_HBM_STATS, 5 * s}},
                                "^llama3-8b-rank[0-9]+$", 3)
                          .subscribe());
  write("day",
        Subscribe({{v1::GROUP_MEMORY_INFO, 86'400 * s}}, "(?i)VLLM|jupyter", {}).subscribe());
  write("bad_group", Subscribe({{static_cast<v1::Group>(99), s}}, "", {}).subscribe());
  FuzzInputWriter pattern;
  pattern.U8(0x08);
  pattern.U8(0);
  pattern.String("(a|b)*c\\pL{100}[[:alpha:]]", 4096);
  pattern.String("abbbbc", 120);
  Write("subscription", "pattern", pattern.bytes());
}

void ConfigSeeds() {
  Write("daemon_config", "default.json", daemon::DefaultConfigText());
  Write("daemon_config", "small.json",
        "// a small instance\n{\"device\": \"sim:trn1.2xlarge\", \"scenario\": \"idle\", "
        "\"period\": \"500ms\", \"history_retention\": \"1m\",\n \"listeners\": {\"unix\": "
        "{\"path\": \"/run/neuron/d.sock\", \"mode\": \"0660\"}, \"tcp\": {\"address\": "
        "\"127.0.0.1:9410\"}, \"metrics\": {\"address\": \"[::1]:9413\"}},\n \"auth_token_file\": "
        "\"/etc/neuron-monitor/token\", \"limits\": {\"max_clients\": 10, \"queue_depth\": 8, "
        "\"subscribe_interval\": \"0s\"}, \"log_level\": \"debug\"}\n");
  Write("daemon_config", "bad.json",
        "{\"device\": \"sim:trn9\", \"seed\": -1, \"period\": \"1ms\", \"speed\": 0, "
        "\"limits\": {\"max_clients\": 0, \"idle_timeout\": \"-1s\"}, \"bogus\": 1}");
  Write("monitor_config", "aws_example.conf", R"({
  "period": "1s",
  "neuron_runtimes": [
    {
      "tag_filter": ".*",
      "metrics": [
        {"type": "neuroncore_counters"},
        {"type": "memory_used"},
        {"type": "neuron_runtime_vcpu_usage"},
        {"type": "execution_stats"}
      ]
    }
  ],
  "system_metrics": [
    {"type": "vcpu_usage"},
    {"type": "memory_info"},
    {"period": "2s", "type": "neuron_hw_counters"}
  ]
})");
  Write("monitor_config", "ours.conf",
        "// two selectors and our groups\n{\"neuron_runtimes\": [{\"tag_filter\": \"^llama\", "
        "\"period\": \"10s\", \"metrics\": [{\"type\": \"collectives_stats\"}, {\"type\": "
        "\"bottleneck_analysis\", \"period\": \"24h\"}]}, {\"tag_filter\": \"vllm\", \"address\": "
        "\"unix:/run/x\", \"metrics\": [{\"type\": \"inference_stats\"}]}], \"system_metrics\": "
        "[{\"type\": \"hbm_stats\", \"period\": \"10ms\"}]}");
  for (const simdev::BuiltinScenario& s : simdev::BuiltinScenarios()) {
    Write("scenario", std::string(s.name) + ".json", std::string(s.json));
  }
}

void HttpSeeds() {
  const auto write = [](const std::string& name, std::uint8_t setup, const std::string& request) {
    Write("http", name, std::string(1, static_cast<char>(setup)) + request);
  };
  write("prometheus", 0,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9413\r\nUser-Agent: Prometheus/2.42.0\r\n"
        "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
        "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
        "Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n");
  write("keep_alive", 0,
        "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  write("probes_events", 0,
        "GET /readyz HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"
        "GET /events?after=1 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
        "Last-Event-ID: 3\r\n\r\n");
  write("token", 1,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-fuzz-token\r\n\r\n");
  write("post_body", 0x10,
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123456789abcdefghij");
  write("chunked", 0,
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  write("http10", 0x04, "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
  FuzzInputWriter direct;
  direct.U8(0x80);
  direct.String("GET", 16);
  direct.String("/metrics", 200);
  direct.String("text/plain;version=0.0.4", 200);
  direct.String("bearer  s3cret-fuzz-token ", 64);
  direct.U8(1);
  Write("http", "direct_handler", direct.bytes());
}

// A Welcome and Reports of `device` running `scenario`, in render_fuzz's format.
void RenderSeed(const std::string& name, const std::string& device, const std::string& scenario,
                int reports) {
  auto backend = daemon::MakeBackend({device, scenario, 1, 1}, MonoTime(seconds(0)));
  if (!backend.ok()) {
    std::fprintf(stderr, "make_corpus: %s\n", backend.status().message().c_str());
    return;
  }
  daemon::DaemonCore core({seconds(1), seconds(120), "corpus"}, std::move(*backend), nullptr);
  auto sub = daemon::Subscription::FromRequest({}, seconds(1));
  FuzzInputWriter w;
  w.U8(0);
  std::uint64_t seq = 0;
  for (int t = 0; t <= 60; ++t) seq = core.Sample(MonoTime(seconds(t)), WallTime(seconds(t)));
  const std::string welcome = core.MakeWelcome(MonoTime(seconds(60))).SerializeAsString();
  w.U16(static_cast<std::uint16_t>(welcome.size()));
  w.Bytes(welcome);
  const std::uint64_t first = seq + 1 - static_cast<std::uint64_t>(reports);
  for (std::uint64_t s = first; s <= seq; ++s) {
    auto report = core.ReportAt(
        *sub, s, s == first ? daemon::ReportScope::kFirst : daemon::ReportScope::kLive);
    if (!report) continue;
    const std::string bytes = report->SerializeAsString();
    if (bytes.size() > 0xFFFF) continue;
    w.U8(0);
    w.U16(static_cast<std::uint16_t>(bytes.size()));
    w.Bytes(bytes);
  }
  Write("render", name, w.bytes());
}

}  // namespace
}  // namespace neuronmon::fuzz

int main(int argc, char** argv) {
  using namespace neuronmon::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  Root(argv[1]);
  SessionSeeds();
  SubscriptionSeeds();
  ConfigSeeds();
  HttpSeeds();
  RenderSeed("trn1.2xlarge_idle", "sim:trn1.2xlarge", "idle", 2);
  RenderSeed("trn1.2xlarge_training", "sim:trn1.2xlarge", "healthy-training", 3);
  RenderSeed("trn1.32xlarge_mixed", "sim:trn1.32xlarge", "mixed", 1);
  RenderSeed("inf2.48xlarge_serving", "sim:inf2.48xlarge", "inference-serving", 1);
  return 0;
}
