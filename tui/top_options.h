// TopCommandLine: neuron-top's flags as parsed, declared by AddTopOptions in --help's order, and
// ResolveTopOptions, which turns them and the environment into the AppOptions RunTop runs — one
// daemon, a cluster view (--hosts FILE, or --connect with a comma-separated list) or a recording
// (--replay) — or refuses the command line with the message and exit status neuron-top gives.
// The caller wires the in-process pieces (AppOptions::open_replay, Endpoint::start_local).
// Functions only; not thread-safe (parsing happens once in main).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "client/endpoint_flags.h"
#include "client/program_flags.h"
#include "client/replay_flags.h"
#include "tui/app.h"

namespace CLI {
class App;
}

namespace neuronmon::tui {

// The most hosts one cluster view follows.
inline constexpr std::size_t kMaxHosts = 4096;

struct TopCommandLine {
  AppOptions options;  // --delay, --ascii, --once and --record parse straight into it
  client::EndpointFlags endpoint;
  client::ReplayFlags replay;
  std::optional<std::string> hosts_file;  // --hosts
  bool no_color = false;
};

// The environment variables neuron-top reads; null: unset.
struct TopEnvironment {
  const char* no_color = nullptr;  // $NO_COLOR: set and not empty turns colours off
  const char* columns = nullptr;   // $COLUMNS: --once's width (default 120)
  const char* lines = nullptr;     // $LINES: --once's height (default: as tall as the frame)
};

void AddTopOptions(CLI::App& app, TopCommandLine& command_line);

// The options to run, or why not. Refusals, in the order they are checked:
//  - exit 2: --record with --replay or a cluster view ("--record keeps one daemon's stream: not
//    with --replay or a cluster view"), then client::CheckReplayOptions' (a --from without
//    --replay; daemon or simulator options, or --hosts, with --replay);
//  - exit 1, for a cluster view: --socket or --standalone ("a cluster view follows TCP daemons
//    only"), --hosts with --connect, a hosts file that cannot be read, a bad or too long
//    (kMaxHosts) list of hosts;
//  - exit 1: client::ResolveEndpoint's errors (a cluster view's are its first host's), which
//    reads --token-file and loads the TLS files; then, for a cluster view,
//    client::ResolveClusterHosts' (a line's token_file= or tls_ca=) and a host whose token would
//    go over plaintext TCP (client::CheckTokenTransport). With --replay no endpoint is resolved:
//    --speed is the replay's pace.
// AppOptions::notices gets what --insecure leaves unverified (one line, also for a cluster).
client::OptionsOr<AppOptions> ResolveTopOptions(const TopCommandLine& command_line,
                                                const TopEnvironment& environment);

}  // namespace neuronmon::tui
