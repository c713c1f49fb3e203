// The command-line options every client program shares for choosing its daemon:
// --socket PATH | --connect HOST:PORT | --standalone, and the embedded simulator's --device,
// --scenario, --seed, --speed. Declares them on a CLI11 app and turns the parsed values into an
// Endpoint. Not thread-safe (parsing happens once in main).
#pragma once

#include <optional>
#include <string>

#include "client/client.h"

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
};

void AddEndpointOptions(CLI::App& app, EndpointFlags& flags);

// Errors: --socket with --connect, --device/--scenario without --standalone while a path or
// address is also given, a bad HOST:PORT, a token file that cannot be read, is not a small regular
// file, or that other users may read (ReadSecretFile: "FILE: mode 0644 lets every user read the
// token; make it 0600 or 0640").
Result<Endpoint> ResolveEndpoint(const EndpointFlags& flags, std::string* token);

}  // namespace neuronmon::client
