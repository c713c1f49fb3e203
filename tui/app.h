// The neuron-top program: the client connection feeding the Model off the UI loop, the UI loop
// (poll on the terminal and the client's event fd, one redraw per refresh interval or keypress),
// and --once (one plain-text frame to stdout). What a key or an event does is the controller's
// (tui/controller.h). The terminal is restored on every exit path, including Ctrl-C and SIGTERM.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/cluster_follower.h"
#include "client/replay_source.h"

namespace neuronmon::tui {

struct AppOptions {
  client::Endpoint endpoint;
  std::string token;
  double delay_seconds = 1;  // refresh interval and subscription period
  bool color = true;
  bool ascii = false;
  bool once = false;
  int once_width = 120;
  int once_height = 0;  // 0: as tall as the frame needs
  // Cluster mode (--connect with a list, or --hosts FILE): follow every host at once, each with
  // its own endpoint (TLS settings) and token.
  std::vector<client::ClusterTarget> hosts;
  // Lines for stderr before anything connects: what --insecure leaves unverified.
  std::vector<std::string> notices;
  // Replay mode (--replay): this recording instead of a daemon, `replay_speed` recorded seconds
  // per second; `open_replay` opens it.
  std::optional<client::ReplayRequest> replay;
  client::ReplayOpener open_replay;
  double replay_speed = 1;
  // Non-empty: also keep the snapshots received in this file (--record), for --replay.
  std::string record;
};

// Returns the process exit status.
int RunTop(const AppOptions& options);

}  // namespace neuronmon::tui
