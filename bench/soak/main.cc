// soak: a whole-process endurance test of neuron-monitord (bench/README.md, "Soak"). It starts the
// daemon itself and, for --duration, runs abusive stream and /metrics clients against it
// (abusers.h) beside a well-behaved scraper and neuron-top-like client (measures.h), then judges
// the run (verdict.h): exit 0 when it passed, 1 when a criterion failed, 2 when it could not start.
// Ctrl-C stops early, still cleaning up and printing the summary.
//
//   soak --daemon build/release/daemon/neuron-monitord --duration 10m --clients 1000 --progress
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <string_view>

#include "bench/soak/daemon_process.h"
#include "bench/soak/hostile_host.h"
#include "bench/soak/options.h"
#include "bench/soak/run.h"

namespace {

void RaiseFdLimit() {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

// SIGINT, SIGTERM and SIGHUP, blocked in this thread and every thread it starts; the watcher
// waits for them.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, sig);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace neuronmon::soak;
  if (argc == 2 && std::string_view(argv[1]) == "--be-neuron-monitor") return BeNeuronMonitor();
  SoakOptions o;
  if (const auto exit_status = ParseSoakOptions(argc, argv, o)) return *exit_status;
  RaiseFdLimit();
  ::signal(SIGPIPE, SIG_IGN);
  const sigset_t stop_signals = BlockStopSignals();
  const TempDir dir;
  if (dir.path().empty()) return std::fprintf(stderr, "soak: cannot create a temp dir\n"), 2;
  return Soak(o, dir, stop_signals);
}
