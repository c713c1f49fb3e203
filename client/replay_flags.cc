#include "client/replay_flags.h"

#include <CLI/CLI.hpp>

namespace neuronmon::client {

void AddReplayOptions(CLI::App& app, ReplayFlags& flags, const ReplayHelp& help) {
  app.add_option("--replay", flags.request.path, help.replay);
  app.add_option("--from", flags.request.from, help.from);
  flags.has_to = !help.to.empty();
  if (flags.has_to) app.add_option("--to", flags.request.to, help.to);
}

Status CheckReplayOptions(const ReplayFlags& flags, const EndpointFlags* refused, bool hosts) {
  const ReplayRequest& r = flags.request;
  if (!flags.given() && (!r.from.empty() || !r.to.empty())) {
    return Status::InvalidArgument(flags.has_to ? "--from and --to need --replay"
                                                : "--from needs --replay");
  }
  if (!flags.given() || refused == nullptr) return Status::Ok();
  const EndpointFlags& e = *refused;
  if (e.connect || e.socket || e.standalone || e.simulate.device || e.simulate.scenario ||
      e.simulate.seed || hosts) {
    return Status::InvalidArgument(
        "--replay shows a recording: no daemon or simulator options with it");
  }
  return Status::Ok();
}

}  // namespace neuronmon::client
