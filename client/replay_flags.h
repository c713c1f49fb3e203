// ReplayFlags: --replay FILE and --from TIME (neuron-monitor also --to TIME), with which a client
// program reads a recording instead of a daemon. Declared here once, each program with its own
// help text, and checked by one function with the same messages everywhere. Not thread-safe
// (parsing happens once in main).
#pragma once

#include <string>

#include "client/endpoint_flags.h"
#include "client/replay_source.h"
#include "proto/common/status.h"

namespace CLI {
class App;
}

namespace neuronmon::client {

// What a program's --help says of each option.
struct ReplayHelp {
  std::string replay;
  std::string from;
  std::string to;  // "": the program has no --to
};

struct ReplayFlags {
  ReplayRequest request;  // the parsed --replay, --from and --to
  bool has_to = false;    // the program declared --to (set by AddReplayOptions)

  bool given() const { return !request.path.empty(); }
};

// Declares --replay, --from and, when help.to is not empty, --to, in that order.
void AddReplayOptions(CLI::App& app, ReplayFlags& flags, const ReplayHelp& help);

// Ok, or why the command line is refused (the programs exit with status 2):
//  - a --from or --to without --replay: "--from needs --replay", or "--from and --to need
//    --replay" in a program with --to;
//  - only when `refused` is given (neuron-top's way: other programs ignore those options with
//    --replay): a recording with a daemon or simulator option (--socket, --connect, --standalone,
//    --device, --scenario, --seed) or with `hosts` (a cluster's hosts file): "--replay shows a
//    recording: no daemon or simulator options with it". --speed (the replay's pace) and
//    --token-file are allowed.
Status CheckReplayOptions(const ReplayFlags& flags, const EndpointFlags* refused = nullptr,
                          bool hosts = false);

}  // namespace neuronmon::client
