#include "client/endpoint_flags.h"

#include <CLI/CLI.hpp>
#include <set>

#include "client/tls_context.h"
#include "proto/common/file_reader.h"

namespace neuronmon::client {
namespace {

bool AnyTlsFlag(const EndpointFlags& f) {
  return f.tls || f.tls_ca || f.tls_cert || f.tls_key || f.tls_server_name;
}

// The TLS settings the flags give, checked against the endpoint they are for.
Result<TlsClientOptions> ResolveTls(const EndpointFlags& f) {
  TlsClientOptions tls;
  if (!f.connect && (AnyTlsFlag(f) || f.insecure)) {
    return Status::InvalidArgument(
        "--tls, --tls-ca, --tls-cert, --tls-key, --tls-server-name and --insecure are for a TCP "
        "daemon (--connect), not with --socket, --standalone or the default socket");
  }
  if (f.tls_cert.has_value() != f.tls_key.has_value()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together (mutual TLS)");
  }
  tls.enabled = AnyTlsFlag(f);
  tls.ca_file = f.tls_ca.value_or("");
  tls.cert_file = f.tls_cert.value_or("");
  tls.key_file = f.tls_key.value_or("");
  tls.server_name = f.tls_server_name.value_or("");
  tls.insecure = f.insecure;
  if (tls.enabled) {
    // Loaded now too, so that a bad file is the command line's error, not every connection's.
    Result<std::unique_ptr<TlsContext>> loaded = TlsContext::Create(tls);
    if (!loaded.ok()) return loaded.status();
  }
  return tls;
}

}  // namespace

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
                 "auth token for a TCP listener (a file other users cannot read); over TCP it is "
                 "sent only over verified TLS, or with --insecure");
  app.add_flag("--tls", f.tls,
               "with --connect: TLS, the daemon's certificate verified against the system's CAs");
  app.add_option("--tls-ca", f.tls_ca,
                 "with --connect: TLS, the daemon's certificate signed by a CA in this PEM file");
  app.add_option("--tls-cert", f.tls_cert,
                 "with --connect: TLS with this client certificate (PEM), for a daemon that "
                 "requires one; with --tls-key");
  app.add_option("--tls-key", f.tls_key,
                 "the private key of --tls-cert (PEM, unencrypted, a file other users cannot "
                 "read)");
  app.add_option("--tls-server-name", f.tls_server_name,
                 "with --connect: TLS, the name the daemon's certificate must hold (default: the "
                 "host of --connect)");
  app.add_flag("--insecure", f.insecure,
               "with --connect: do not verify the daemon's TLS certificate, or send the token "
               "over plaintext TCP (said on stderr)");
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
  Result<TlsClientOptions> tls = ResolveTls(f);
  if (!tls.ok()) return tls.status();
  ep.tls = std::move(*tls);
  ep.standalone = f.simulate;
  if (f.token_file && token) {
    Result<std::string> read = ReadSecretFile(*f.token_file);
    if (!read.ok()) return read.status();
    *token = std::move(*read);
  }
  return ep;
}

Result<std::vector<ClusterTarget>> ResolveClusterHosts(const std::vector<HostsFileLine>& lines,
                                                       const TlsClientOptions& defaults,
                                                       const std::string& token) {
  std::vector<ClusterTarget> targets;
  std::set<std::string> loaded_cas;  // each file's CAs checked once, not once per host
  for (const HostsFileLine& line : lines) {
    Result<Endpoint> ep = TcpEndpoint(line.address);
    if (!ep.ok()) return Status::InvalidArgument(line.address + ": " + ep.status().message());
    ClusterTarget t{line.address, std::move(*ep), token};
    t.endpoint.tls = defaults;
    if (!line.server_name.empty()) t.endpoint.tls.server_name = line.server_name;
    if (!line.tls_ca.empty()) t.endpoint.tls.ca_file = line.tls_ca;
    t.endpoint.tls.enabled = defaults.enabled || !line.server_name.empty() || !line.tls_ca.empty();
    if (!line.tls_ca.empty() && loaded_cas.insert(line.tls_ca).second) {
      Result<std::unique_ptr<TlsContext>> ok = TlsContext::Create(t.endpoint.tls);
      if (!ok.ok()) return Status::InvalidArgument(line.address + ": " + ok.status().message());
    }
    if (!line.token_file.empty()) {
      Result<std::string> read = ReadSecretFile(line.token_file);
      if (!read.ok()) return Status::InvalidArgument(line.address + ": " + read.status().message());
      t.token = std::move(*read);
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace neuronmon::client
