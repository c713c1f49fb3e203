#include "client/program_flags.h"

#include <CLI/CLI.hpp>
#include <ostream>

namespace neuronmon::client {

void AddVersionFlag(CLI::App& app, std::string_view program) {
  app.set_version_flag("--version", std::string(program) + " " + NEURONMON_VERSION);
}

void AddRecordOption(CLI::App& app, std::string& path) {
  app.add_option("--record", path,
                 "also keep the snapshots received in FILE (a new file), for --replay");
}

int Refuse(std::string_view program, const CommandLineError& error, std::ostream& err) {
  err << program << ": " << error.message << "\n";
  return error.exit_code;
}

}  // namespace neuronmon::client
