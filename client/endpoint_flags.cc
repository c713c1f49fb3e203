#include "client/endpoint_flags.h"

#include <CLI/CLI.hpp>

#include "proto/common/file_reader.h"

namespace neuronmon::client {

void AddEndpointOptions(CLI::App& app, EndpointFlags& f) {
  app.add_option("--socket", f.socket, "the daemon's unix socket (default: the standard paths)");
  app.add_option("--connect", f.connect, "a daemon's TCP listener, HOST:PORT");
  app.add_flag("--standalone", f.standalone,
               "run the daemon's core in this process instead of connecting to a daemon");
  app.add_option("--device", f.simulate.device,
                 "with --standalone: auto (default: the real devices if any, else the "
                 "simulator), neuron, or sim:<preset>[:lnc=N]");
  app.add_option("--scenario", f.simulate.scenario,
                 "with --standalone: a scenario name or .json file");
  app.add_option("--seed", f.simulate.seed, "with --standalone: the simulation seed");
  app.add_option("--speed", f.simulate.speed,
                 "with --standalone: simulated seconds per real second (neuron-top --replay: "
                 "recorded seconds per second)");
  app.add_option("--token-file", f.token_file,
                 "auth token for a TCP listener (a file other users cannot read)");
}

Result<Endpoint> ResolveEndpoint(const EndpointFlags& f, std::string* token) {
  if (f.socket && f.connect) return Status::InvalidArgument("--socket and --connect are exclusive");
  const SimulatorOptions& sim = f.simulate;
  const bool sim_options = sim.device || sim.scenario || sim.seed || sim.speed;
  if ((f.socket || f.connect) && (f.standalone || sim_options)) {
    return Status::InvalidArgument(
        "--standalone, --device, --scenario, --seed and --speed run an in-process simulator; they "
        "cannot be combined with --socket or --connect");
  }
  Endpoint ep;
  if (f.connect) {
    Result<Endpoint> tcp = TcpEndpoint(*f.connect);
    if (!tcp.ok()) return Status::InvalidArgument("--connect " + tcp.status().message());
    ep = *tcp;
  } else if (f.socket) {
    ep.kind = Endpoint::Kind::kUnix;
    ep.path = *f.socket;
  } else if (f.standalone || sim_options) {
    ep.kind = Endpoint::Kind::kStandalone;  // choosing a simulated device implies running one
  }
  ep.standalone = f.simulate;
  if (f.token_file && token) {
    Result<std::string> read = ReadSecretFile(*f.token_file);
    if (!read.ok()) return read.status();
    *token = std::move(*read);
  }
  return ep;
}

}  // namespace neuronmon::client
