#include "bench/soak/run.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/soak/abusers.h"
#include "bench/soak/client_io.h"
#include "bench/soak/figures.h"
#include "bench/soak/hostile_host.h"
#include "bench/soak/hostile_replays.h"
#include "bench/soak/measures.h"
#include "bench/soak/verdict.h"

namespace neuronmon::soak {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> ReadLines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The progress line's tail: the population, and the top client's lag since the previous line.
std::function<std::string()> ProgressLine(const StreamAbuser& stream, const TopClient& top,
                                          const Scraper& scraper) {
  return [&, lag_mark = std::size_t{0}]() mutable {
    const StreamTally s = stream.tally();
    const TopTally t = top.tally();
    const ScrapeTally sc = scraper.tally();
    std::uint64_t closed = 0, scrape_failures = 0;
    for (std::uint64_t n : s.closed_by_daemon) closed += n;
    for (const auto& [why, n] : sc.failures) scrape_failures += n;
    const std::vector<double> recent(t.lags_ms.begin() + static_cast<std::ptrdiff_t>(lag_mark),
                                     t.lags_ms.end());
    lag_mark = t.lags_ms.size();
    return Format(
        "abusers %llu up, %llu closed by daemon | top lag p99 %.1f ms (last %zu), "
        "%llu missing | scrapes %llu ok, %llu failed",
        static_cast<unsigned long long>(s.connected), static_cast<unsigned long long>(closed),
        Percentile(recent, 0.99), recent.size(), static_cast<unsigned long long>(t.missing),
        static_cast<unsigned long long>(sc.ok), static_cast<unsigned long long>(scrape_failures));
  };
}

// Runs the load against a started daemon, then stops the daemon while the clients are still
// connected (they read its goodbye), then stops the clients.
Results RunLoad(const SoakOptions& o, DaemonProcess& daemon, const std::string& socket_path,
                std::uint16_t metrics_port, const sigset_t& stop_signals, HostileHost* host,
                HostileReplays* replays) {
  StreamAbuser stream(socket_path, o.clients, o.seed);
  MetricsAbuser metrics(metrics_port, o.metrics_connections, o.seed + 1);
  Scraper scraper(metrics_port);
  TopClient top(socket_path, o.period);
  std::atomic<Phase> phase{Phase::kRunning};
  std::vector<std::thread> threads;
  threads.emplace_back([&] { stream.Run(phase); });
  threads.emplace_back([&] { metrics.Run(phase); });
  threads.emplace_back([&] { scraper.Run(phase); });
  threads.emplace_back([&] { top.Run(phase); });
  if (host != nullptr) threads.emplace_back([&] { host->Run(phase); });
  if (replays != nullptr) threads.emplace_back([&] { replays->Run(phase); });
  Results r;
  const auto open_connections = [&] {
    return static_cast<double>(stream.tally().connected + metrics.tally().open + 1);
  };
  r.watched =
      Watch(daemon, o, stop_signals, {ProgressLine(stream, top, scraper), open_connections});
  phase = Phase::kDraining;
  if (!r.watched.died) scraper.ScrapeOnce();
  r.stream = stream.tally();
  r.metrics = metrics.tally();
  r.scrapes = scraper.tally();
  r.stop = daemon.Stop();
  std::this_thread::sleep_for(200ms);  // the top client reads the shutdown notice
  phase = Phase::kStopped;
  for (std::thread& t : threads) t.join();
  r.top = top.tally();
  if (host != nullptr) {
    r.hostile_host = true;
    r.forged_lines = host->forged_lines();
    r.host_descriptors = host->descriptors();
    r.kubelet_calls = host->kubelet_calls();
  }
  if (replays != nullptr) r.replays = replays->tally();
  return r;
}

std::vector<std::string> DaemonArgs(const SoakOptions& o, const std::string& socket_path,
                                    std::uint16_t port, const std::filesystem::path& config) {
  return {o.daemon_binary,
          "--socket",
          socket_path,
          "--device",
          o.hostile_host ? "neuron" : o.device,
          "--period",
          FormatDuration(o.period),
          "--seed",
          std::to_string(o.seed),
          "--metrics-listen",
          "127.0.0.1:" + std::to_string(port),
          "--config",
          config.string(),
          "--log-level",
          "info"};
}

}  // namespace

int Soak(const SoakOptions& o, const TempDir& dir, const sigset_t& stop_signals) {
  const std::string socket_path = (dir.path() / "d.sock").string();
  std::unique_ptr<HostileHost> host;
  std::unique_ptr<HostileReplays> replays;
  std::string extra;
  if (o.hostile_host) {
    const std::string replayer = o.replayer.empty() ? FindReplayer(o.daemon_binary) : o.replayer;
    replays = std::make_unique<HostileReplays>();
    std::string prepare_error;
    if (replayer.empty() ||
        !replays->Prepare(dir.path() / "recordings", o, replayer, prepare_error)) {
      std::fprintf(stderr, "soak: cannot prepare the hostile recordings: %s\n",
                   replayer.empty() ? "no neuron-monitor next to --daemon (give --replayer)"
                                    : prepare_error.c_str());
      return 2;
    }
    host = std::make_unique<HostileHost>();
    std::string error;
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (!host->Prepare(dir.path() / "host", o, self, error)) {
      std::fprintf(stderr, "soak: cannot prepare the hostile host: %s\n", error.c_str());
      return 2;
    }
    extra = host->ConfigKeys();
  }
  const std::filesystem::path config = WriteSoakConfig(dir.path(), o, extra);
  const std::uint16_t port = FreeLoopbackPort();
  if (config.empty() || port == 0) {
    std::fprintf(stderr, "soak: cannot prepare %s\n", dir.path().c_str());
    return 2;
  }
  const std::filesystem::path log =
      o.daemon_log.empty() ? dir.path() / "daemon.log" : std::filesystem::path(o.daemon_log);
  DaemonProcess daemon;
  std::string error;
  if (!daemon.Start(DaemonArgs(o, socket_path, port, config), log, error) ||
      !WaitReady(daemon, socket_path, port)) {
    std::fprintf(stderr, "soak: the daemon did not start%s%s\n", error.empty() ? "" : ": ",
                 error.c_str());
    for (const std::string& l : ReadLines(log)) {
      std::fprintf(stderr, "  | %s\n", l.c_str());
    }
    return 2;
  }
  Results r = RunLoad(o, daemon, socket_path, port, stop_signals, host.get(), replays.get());
  r.log_lines = ReadLines(log);
  return Report(o, r) ? 0 : 1;
}

}  // namespace neuronmon::soak
