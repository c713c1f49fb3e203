// The verdict: how soak judges a run and prints its summary (bench/README.md, "Soak"), one line
// per figure. Judged, a failure making the run fail: the daemon never died and exited cleanly on
// SIGTERM; its RSS and open fd count at the end are within 5% of those after the warm-up; the
// well-behaved client's lag p99 is at most 50 ms and it missed no report without a gap notice;
// every scrape succeeded; the run was not interrupted. Reported, not judged: how late the daemon
// took its samples (the lag starts at the sample, so it cannot show a sampler held up behind other
// work), what the daemon did to each abuser, its own counters and its log. Results is a plain
// value, gathered once the load has stopped; Report runs on soak's main thread.
#pragma once

#include <string>
#include <vector>

#include "bench/soak/abusers.h"
#include "bench/soak/daemon_process.h"
#include "bench/soak/hostile_replays.h"
#include "bench/soak/measures.h"
#include "bench/soak/options.h"

namespace neuronmon::soak {

// Everything a run found.
struct Results {
  Watched watched;
  StopOutcome stop;
  StreamTally stream;
  MetricsTally metrics;
  ScrapeTally scrapes;
  TopTally top;
  std::vector<std::string> log_lines;  // the daemon's log
  // --hostile-host: what the host did.
  bool hostile_host = false;
  std::uint64_t forged_lines = 0;
  std::uint64_t host_descriptors = 0;
  int kubelet_calls = 0;
  ReplayTally replays;
};

// Prints the summary to stdout; true when every criterion held.
bool Report(const SoakOptions& o, const Results& r);

}  // namespace neuronmon::soak
