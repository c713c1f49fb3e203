// neuron-ls: the Neuron device inventory, as AWS neuron-ls prints it, from neuron-monitord.
#include <CLI/CLI.hpp>
#include <iostream>

#include "client/embedded_simulator.h"
#include "client/endpoint_flags.h"
#include "exporter/neuron_ls_format.h"
#include "proto/common/terminal_text.h"
#include "proto/wire/protobuf_logs.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  exporter::LsOptions ls;
  bool topology = false, json = false;
  client::EndpointFlags endpoint;
  CLI::App app{"neuron-ls: lists Neuron devices, their topology and the processes using them"};
  app.set_version_flag("--version", std::string("neuron-ls ") + NEURONMON_VERSION);
  app.add_flag("-w,--wide", ls.wide, "wider table, full command column");
  app.add_flag("-a,--show-all-procs", ls.show_all_procs, "include processes without a runtime");
  app.add_flag("-t,--topology", topology, "draw the NeuronLink topology");
  app.add_flag("-j,--json-output", json, "print JSON");
  client::AddEndpointOptions(app, endpoint);
  CLI11_PARSE(app, argc, argv);
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  neuronmon::wire::SilenceProtobufParseLogs();

  std::string token;
  auto ep = client::ResolveEndpoint(endpoint, &token);
  if (!ep.ok()) return std::cerr << "neuron-ls: " << ep.status().message() << "\n", 1;
  ep->start_local = client::EmbeddedSimulator();
  // Messages may quote the daemon: stripped of control characters before they reach stderr.
  auto complain = [](const std::string& m) {
    std::cerr << "neuron-ls: " << SanitizeForTerminal(m) << "\n";
  };
  std::string notice;
  auto welcome =
      client::FetchWelcome(*ep, std::string("neuron-ls/") + NEURONMON_VERSION, nullptr, &notice);
  if (!notice.empty()) complain(notice);
  if (!welcome.ok()) return complain(welcome.status().message()), 1;
  const v1::Inventory& inventory = welcome->inventory();
  if (inventory.devices_size() == 0) {
    return std::cerr << "level=error msg=\"no neuron device found\"\n", 1;
  }
  if (json) {
    std::cout << exporter::RenderJson(inventory, ls);  // AWS prints no newline after the array
    return 0;
  }
  std::cout << exporter::RenderTable(inventory, ls);
  if (topology) std::cout << "\n\n" << exporter::RenderTopology(inventory);
  return 0;
}
