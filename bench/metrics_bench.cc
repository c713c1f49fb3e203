// Scrape cost of /metrics for a trn2.48xlarge running healthy-training (16 runtimes): building the
// exposition from the newest 5 s window and rendering it (text and OpenMetrics), and a whole HTTP
// scrape over loopback keep-alive against the real HttpServer. Each benchmark reports the p50
// and p99 of its iterations and the reply size; CPU per scrape is Google Benchmark's CPU column
// (for the HTTP benchmark it counts only the client thread, so it also reports the server's).
// Target: p50 <= 2 ms for BuildMetrics + RenderText.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/times.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "daemon/core/daemon_core.h"
#include "daemon/core/host_reader.h"
#include "daemon/core/metrics/exposition_format.h"
#include "daemon/core/metrics/exposition_text.h"
#include "daemon/core/metrics/prometheus.h"
#include "daemon/server/gzip.h"
#include "daemon/server/http_server.h"

namespace {

using namespace neuronmon;
using namespace neuronmon::daemon;
using namespace neuronmon::procfs;
using std::chrono::seconds;

// /proc/stat of a 192-vCPU host after `n` samples (100 ticks per CPU per sample).
std::string StatText(int n) {
  auto line = [&](const std::string& name, int cpus) {
    const int k = cpus * (1000 + 100 * n);
    return name + " " + std::to_string(k * 3 / 10) + " 0 " + std::to_string(k / 10) + " " +
           std::to_string(k * 6 / 10) + " 0 0 0 0 0 0\n";
  };
  std::string text = line("cpu ", 192);
  for (int c = 0; c < 192; ++c) text += line("cpu" + std::to_string(c), 1);
  return text + "ctxt 1000\nbtime 1767225000\n";
}

constexpr const char* kMeminfo =
    "MemTotal: 2113929216 kB\nMemAvailable: 2013929216 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n";

// A DaemonCore of `device` sampled at 40 s and 45 s of simulated time.
std::unique_ptr<DaemonCore> Trn2Core(const std::string& device = "sim:trn2.48xlarge") {
  const MonoTime t0(seconds(1000));
  auto backend = MakeBackend({device, "healthy-training", 1, 1}, t0);
  auto n = std::make_shared<int>(0);
  auto core = std::make_unique<DaemonCore>(
      CoreOptions{seconds(1), std::chrono::minutes(10), "bench"}, std::move(*backend),
      [n] { return HostFromText(StatText((*n)++), kMeminfo); });
  for (int t : {40, 45}) core->Sample(t0 + seconds(t), WallTime(seconds(1767225600 + t)));
  return core;
}

void ReportPercentiles(benchmark::State& state, std::vector<double>& ms) {
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) return;
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
}

const Result<ProcessMetrics> kProcess(ProcessMetrics{1, 1 << 24, 1 << 30, 1767225000, 12, 1024});

// What a scrape builds from: the newest 5 s window, fixed daemon stats and process metrics.
MetricsInput Input(const DaemonCore& core, const DaemonStats& stats) {
  const MetricsWindow w = SelectWindow(core.history(), seconds(5), core.period());
  MetricsInput in;
  in.inventory = &core.inventory();
  in.end = w.end;
  in.start = w.start;
  in.stats = &stats;
  in.process = &kProcess;
  in.version = "bench";
  in.period = core.period();
  return in;
}

// Sample lines of an exposition: each is one time series (a histogram bucket counts as one).
std::size_t Series(const std::string& body) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t nl = body.find('\n', at);
    if (body[at] != '#') ++n;
    at = nl == std::string::npos ? body.size() : nl + 1;
  }
  return n;
}

void BM_BuildAndRender(benchmark::State& state, ExpositionFormat format, const char* device) {
  const std::unique_ptr<DaemonCore> core = Trn2Core(device);
  const DaemonStats stats;
  std::vector<double> ms;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string body = Render(BuildMetrics(Input(*core, stats)), format);
    benchmark::DoNotOptimize(body.data());
    bytes = body.size();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  ReportPercentiles(state, ms);
  state.counters["reply_KB"] = static_cast<double>(bytes) / 1000;
  const std::string body = Render(BuildMetrics(Input(*core, stats)), format);
  const auto series = static_cast<double>(Series(body));
  state.counters["series"] = series;
  // CPU per series: Google Benchmark divides a rate counter by the benchmark's CPU time.
  state.counters["us_per_series"] =
      benchmark::Counter(series * static_cast<double>(state.iterations()) / 1e6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_BuildAndRender, text, ExpositionFormat::kText, "sim:trn2.48xlarge")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildAndRender, openmetrics, ExpositionFormat::kOpenMetrics,
                  "sim:trn2.48xlarge")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildAndRender, trn1n_text, ExpositionFormat::kText, "sim:trn1n.32xlarge")
    ->Unit(benchmark::kMillisecond);

// The two halves of BM_BuildAndRender/text.
void BM_BuildOnly(benchmark::State& state) {
  const std::unique_ptr<DaemonCore> core = Trn2Core();
  const DaemonStats stats;
  const MetricsInput in = Input(*core, stats);
  for (auto _ : state) {
    const Exposition e = BuildMetrics(in);
    benchmark::DoNotOptimize(e.families().data());
  }
}
BENCHMARK(BM_BuildOnly)->Unit(benchmark::kMillisecond);

void BM_RenderTextOnly(benchmark::State& state) {
  const std::unique_ptr<DaemonCore> core = Trn2Core();
  const DaemonStats stats;
  const MetricsInput in = Input(*core, stats);
  const Exposition e = BuildMetrics(in);
  for (auto _ : state) {
    const std::string body = RenderText(e);
    benchmark::DoNotOptimize(body.data());
  }
}
BENCHMARK(BM_RenderTextOnly)->Unit(benchmark::kMillisecond);

// A blocking keep-alive client: one GET /metrics with `headers`, reading the reply through its
// Content-Length.
std::size_t Scrape(int fd, std::string& buffer, const std::string& headers) {
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: bench\r\n" + headers + "\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) return 0;
  buffer.clear();
  std::size_t want = std::string::npos;
  char chunk[1 << 16];
  while (want == std::string::npos || buffer.size() < want) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return 0;
    buffer.append(chunk, static_cast<std::size_t>(n));
    const std::size_t end = buffer.find("\r\n\r\n");
    const std::size_t length = buffer.find("Content-Length: ");
    if (want == std::string::npos && end != std::string::npos && length < end) {
      want = end + 4 + std::stoul(buffer.substr(length + 16));
    }
  }
  return buffer.size();
}

double ProcessCpuSeconds() {
  tms t{};
  ::times(&t);
  return static_cast<double>(t.tms_utime + t.tms_stime) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// `headers`: "" (as curl), or "Accept-Encoding: gzip\r\n" (as Prometheus).
void BM_HttpScrape(benchmark::State& state, const std::string& device, const std::string& headers) {
  const std::unique_ptr<DaemonCore> core = Trn2Core(device);
  const DaemonStats stats;
  asio::io_context io;
  Logger log;
  HttpServer server(io, *core, stats, log, {});
  if (!server.Listen("127.0.0.1", 0, false).ok()) return state.SkipWithError("cannot listen");
  auto guard = asio::make_work_guard(io);
  std::thread thread([&] { io.run(); });
  // A connection serves at most HttpOptions::max_requests scrapes: open a new one when it ends.
  auto connect = [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(*server.port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    return fd;
  };
  int fd = connect();
  std::string buffer;
  std::vector<double> ms;
  const double cpu0 = ProcessCpuSeconds();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (Scrape(fd, buffer, headers) == 0) {
      ::close(fd);
      fd = connect();
      if (Scrape(fd, buffer, headers) == 0) {
        state.SkipWithError("scrape failed");
        break;
      }
    }
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const double cpu = ProcessCpuSeconds() - cpu0;
  ::close(fd);
  asio::post(io, [&] {
    server.Shutdown();
    io.stop();
  });
  thread.join();
  ReportPercentiles(state, ms);
  state.counters["reply_KB"] = static_cast<double>(buffer.size()) / 1000;
  // Both threads, per scrape: the server's building, rendering and writing plus the client.
  state.counters["process_cpu_ms"] = ms.empty() ? 0 : 1000 * cpu / static_cast<double>(ms.size());
}
BENCHMARK_CAPTURE(BM_HttpScrape, trn2_plain, "sim:trn2.48xlarge", "")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_HttpScrape, trn2_gzip, "sim:trn2.48xlarge", "Accept-Encoding: gzip\r\n")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_HttpScrape, trn1n_plain, "sim:trn1n.32xlarge", "")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_HttpScrape, trn1n_gzip, "sim:trn1n.32xlarge", "Accept-Encoding: gzip\r\n")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// gzip alone (level 1, as /metrics uses it) on the rendered text exposition: CPU per scrape and
// the sizes before and after.
void BM_GzipText(benchmark::State& state, const std::string& device) {
  const std::unique_ptr<DaemonCore> core = Trn2Core(device);
  const DaemonStats stats;
  const std::string text = Render(BuildMetrics(Input(*core, stats)), ExpositionFormat::kText);
  std::size_t compressed = 0;
  for (auto _ : state) {
    Result<std::string> gz = Gzip(text);
    compressed = gz.ok() ? gz->size() : 0;
    benchmark::DoNotOptimize(gz);
  }
  state.counters["text_KB"] = static_cast<double>(text.size()) / 1000;
  state.counters["gzip_KB"] = static_cast<double>(compressed) / 1000;
}
BENCHMARK_CAPTURE(BM_GzipText, trn2, "sim:trn2.48xlarge")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GzipText, trn1n, "sim:trn1n.32xlarge")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
