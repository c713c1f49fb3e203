// The neuron-monitor program's loop: connect (one client per runtime selector of the AWS config),
// merge reports into the consolidated state, and print one complete JSON document per line to
// `out_fd`, flushed per line even into a pipe. Notices (lost daemon, reconnects, gaps) go to
// `err_fd`. A closed stdout (`neuron-monitor | head -1`) ends the program quietly with status 0.
// With --events it prints events instead, one JSON object per line (proto/names/event_json.h).
#pragma once

#include <cstdint>
#include <string>

#include "client/client.h"
#include "client/replay_source.h"
#include "exporter/monitor_config.h"

namespace neuronmon::exporter {

struct MonitorAppOptions {
  MonitorConfig config;
  client::Endpoint endpoint;
  std::string token;
  int verbose = 0;          // 0..4: more progress on stderr
  std::uint64_t count = 0;  // stop after this many documents; 0: run until interrupted
  bool extensions = true;   // print neuronmon's additive groups
  // Set: print the documents of this recording (as fast as they can be written) instead of
  // connecting; `open_replay` opens it.
  std::optional<client::ReplayRequest> replay;
  client::ReplayOpener open_replay;
  // Non-empty: also keep the snapshots received in this file (--record), for --replay.
  std::string record;
  // --events: print the daemon's events (docs/events.md) as JSON lines instead of documents —
  // those it keeps, then exit; with `follow` (--follow), then every new one, across restarts.
  // With `replay`: the events recorded in it.
  bool events = false;
  bool follow = false;
};

// Returns the process exit status.
int RunMonitor(MonitorAppOptions options, int out_fd, int err_fd);

}  // namespace neuronmon::exporter
