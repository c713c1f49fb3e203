// The flags every client program declares the same way — --version ("<program> <version>") and
// --record FILE (keep the snapshots received, for --replay) — and CommandLineError, the shape of
// a refused command line: what the program prints after "<program>: " and the status it exits
// with. Functions only; not thread-safe (parsing happens once in main).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>

namespace CLI {
class App;
}

namespace neuronmon::client {

struct CommandLineError {
  std::string message;  // without the program's name
  int exit_code = 2;
};

// A program's options resolved from its command line, or why it refuses them.
template <typename Options>
using OptionsOr = std::variant<Options, CommandLineError>;

// --version prints "<program> <NEURONMON_VERSION>" and exits 0.
void AddVersionFlag(CLI::App& app, std::string_view program);

// --record FILE into `path` (left as is when the flag is absent).
void AddRecordOption(CLI::App& app, std::string& path);

// Writes "<program>: <message>" and a newline to `err`; returns error.exit_code.
int Refuse(std::string_view program, const CommandLineError& error, std::ostream& err);

}  // namespace neuronmon::client
