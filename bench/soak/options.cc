#include "bench/soak/options.h"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace neuronmon::soak {
namespace {

using namespace std::chrono_literals;

// The duration flags as given, before ParseDuration.
struct DurationTexts {
  std::string duration = "10m", warmup = "30s", period = "1s", retention = "20s";
};

void AddOptions(CLI::App& app, SoakOptions& o, DurationTexts& t) {
  app.add_option("--daemon", o.daemon_binary, "neuron-monitord binary to start")->required();
  app.add_option("--duration", t.duration, "how long the load runs, warm-up included");
  app.add_option("--clients", o.clients, "abusive stream clients")->check(CLI::Range(1, 100000));
  app.add_option("--period", t.period, "the daemon's base period (and the top client's)");
  app.add_option("--device", o.device, "the daemon's device");
  app.add_option("--seed", o.seed, "seed of the load's choices and the simulation");
  app.add_option("--warmup", t.warmup, "time before the start figures are taken");
  app.add_option("--retention", t.retention, "the daemon's history; keep it below --warmup");
  app.add_option("--metrics-connections", o.metrics_connections, "abusive /metrics connections")
      ->check(CLI::Range(1, 10000));
  app.add_option("--daemon-log", o.daemon_log, "keep the daemon's log in this file");
  app.add_flag("--progress", o.progress, "a line every 30 s");
  app.add_flag(
      "--hostile-host", o.hostile_host,
      "the daemon reads a hostile real host (--device neuron): a fabricated /proc with "
      "--host-fds descriptors, a flooding neuron-monitor, forged kernel-log lines, a kubelet "
      "with huge answers, hostile recordings replayed in a loop");
  app.add_option("--host-fds", o.host_fds, "descriptors in the hostile host's /proc")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--replayer", o.replayer,
                 "with --hostile-host: the neuron-monitor that replays hostile recordings in a "
                 "loop (default: the one next to --daemon)");
}

// The durations into `o`; false, with the message printed, when one is not a duration or
// --duration does not exceed --warmup by 10 s.
bool SetDurations(const DurationTexts& t, SoakOptions& o) {
  const auto d = ParseDuration(t.duration), w = ParseDuration(t.warmup),
             p = ParseDuration(t.period), h = ParseDuration(t.retention);
  for (const auto* parsed : {&d, &w, &p, &h}) {
    if (!parsed->ok())
      return std::fprintf(stderr, "soak: %s\n", parsed->status().message().c_str()), false;
  }
  o.duration = *d;
  o.warmup = *w;
  o.period = *p;
  o.retention = *h;
  if (o.duration < o.warmup + 10s) {
    return std::fprintf(stderr, "soak: --duration must exceed --warmup by 10 s\n"), false;
  }
  return true;
}

}  // namespace

std::optional<int> ParseSoakOptions(int argc, char** argv, SoakOptions& o) {
  DurationTexts texts;
  CLI::App app{"soak: abusive clients against one neuron-monitord; RSS, fds, lag, crashes"};
  AddOptions(app, o, texts);
  CLI11_PARSE(app, argc, argv);
  if (!SetDurations(texts, o)) return 2;
  return std::nullopt;
}

}  // namespace neuronmon::soak
