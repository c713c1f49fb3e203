// The command-line options every client program shares for choosing its daemon:
// --socket PATH | --connect HOST:PORT | --standalone, the embedded simulator's --device,
// --scenario, --seed, --speed, the token (--token-file) and TLS to a TCP daemon (--tls,
// --tls-ca, --tls-cert, --tls-key, --tls-server-name, --insecure). Declares them on a CLI11 app
// and turns the parsed values into an Endpoint; and neuron-top's cluster view's hosts into
// ClusterTargets. Not thread-safe (parsing happens once in main).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/cluster.h"
#include "client/cluster_follower.h"

namespace CLI {
class App;
}

namespace neuronmon::client {

struct EndpointFlags {
  std::optional<std::string> socket;
  std::optional<std::string> connect;
  bool standalone = false;
  SimulatorOptions simulate;  // --device, --scenario, --seed, --speed (with --standalone)
  std::optional<std::string> token_file;
  bool tls = false;  // --tls: TLS, verified against the system's CAs
  std::optional<std::string> tls_ca;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> tls_server_name;
  bool insecure = false;
};

void AddEndpointOptions(CLI::App& app, EndpointFlags& flags);

// Errors: --socket with --connect, --device/--scenario without --standalone while a path or
// address is also given, a bad HOST:PORT, a token file that cannot be read, is not a small regular
// file, or that other users may read (ReadSecretFile: "FILE: mode 0644 lets every user read the
// token; make it 0600 or 0640"); TLS flags or --insecure without --connect (with --socket,
// --standalone, or neither), --tls-cert without --tls-key or the reverse, and TLS files that do
// not load (TlsContext::Create's errors). Any of --tls, --tls-ca, --tls-cert, --tls-key and
// --tls-server-name sets Endpoint::tls.enabled. Does not connect: a token over plaintext TCP
// without --insecure is Client::Connect's refusal.
Result<Endpoint> ResolveEndpoint(const EndpointFlags& flags, std::string* token);

// The cluster view's hosts: each line's address as a kTcp endpoint with `defaults` (the command
// line's TLS settings) and `token` (--token-file's); a line's token_file= replaces the token for
// its host (read as --token-file is), its server_name= and tls_ca= replace the defaults' and turn
// TLS on. Errors start with the line's address: a token file ReadSecretFile refuses, a tls_ca
// that does not load.
Result<std::vector<ClusterTarget>> ResolveClusterHosts(const std::vector<HostsFileLine>& lines,
                                                       const TlsClientOptions& defaults,
                                                       const std::string& token);

}  // namespace neuronmon::client
