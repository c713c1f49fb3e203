// neuron-ls: the Neuron device inventory, as AWS neuron-ls prints it, from neuron-monitord.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string_view>

#include "client/embedded_simulator.h"
#include "client/program_flags.h"
#include "client/replay_flags.h"
#include "exporter/driver_report.h"
#include "exporter/ls_app.h"
#include "proto/wire/protobuf_logs.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  exporter::LsCommandLine command_line;
  CLI::App app{"neuron-ls: lists Neuron devices, their topology and the processes using them"};
  exporter::AddLsOptions(app, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A health check's usage error is exit 3: 1 and 2 are the node's state to its caller.
    bool check = false;
    for (int i = 1; i < argc; ++i) check |= std::string_view(argv[i]) == "--check";
    if (!check || e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "neuron-ls: " << e.what() << "\n";
    return 3;
  }
  if (command_line.check) {
    wire::SilenceProtobufParseLogs();
    return exporter::RunCheck(command_line, client::EmbeddedSimulator(), std::cout, std::cerr);
  }
  if (Status st = client::CheckReplayOptions(command_line.replay); !st.ok()) {
    return client::Refuse("neuron-ls", {st.message(), 2}, std::cerr);
  }
  if (command_line.driver) {
    neurondev::HostOptions host;
    host.sysfs_root = command_line.sysfs_root;
    host.dev_root = command_line.dev_root;
    return exporter::PrintDriverReport(host, command_line.json, std::cout, std::cerr);
  }
  if (command_line.incidents) {
    return exporter::ListIncidents(*command_line.incidents, command_line.json, std::cout,
                                   std::cerr);
  }
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  wire::SilenceProtobufParseLogs();
  return exporter::RunLs(command_line, client::EmbeddedReplay(), client::EmbeddedSimulator(),
                         std::cout, std::cerr);
}
