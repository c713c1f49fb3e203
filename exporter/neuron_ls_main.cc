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
  client::ReplayRequest replay;
  app.add_option("--replay", replay.path,
                 "list the devices of a recording (an archive directory or a --record file)");
  app.add_option("--from", replay.from,
                 "with --replay: as at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or +10m from the "
                 "recording's start)");
  client::AddEndpointOptions(app, endpoint);
  CLI11_PARSE(app, argc, argv);
  if (replay.path.empty() && !replay.from.empty()) {
    return std::cerr << "neuron-ls: --from needs --replay\n", 2;
  }
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  neuronmon::wire::SilenceProtobufParseLogs();

  // Messages may quote the daemon or a recording: stripped of control characters before they
  // reach stderr.
  auto complain = [](const std::string& m) {
    std::cerr << "neuron-ls: " << SanitizeForTerminal(m) << "\n";
  };
  Result<v1::Welcome> welcome = Status::Internal("unset");
  if (!replay.path.empty()) {
    auto source = client::EmbeddedReplay()(replay);
    if (!source.ok()) return complain(source.status().message()), 1;
    for (const std::string& n : (*source)->TakeNotices()) complain(n);
    welcome = (*source)->Welcome();
    if (Status st = client::CheckInventory(welcome->inventory()); !st.ok()) {
      return complain(st.message()), 1;
    }
  } else {
    std::string token;
    auto ep = client::ResolveEndpoint(endpoint, &token);
    if (!ep.ok()) return std::cerr << "neuron-ls: " << ep.status().message() << "\n", 1;
    ep->start_local = client::EmbeddedSimulator();
    std::string notice;
    welcome =
        client::FetchWelcome(*ep, std::string("neuron-ls/") + NEURONMON_VERSION, nullptr, &notice);
    if (!notice.empty()) complain(notice);
    if (!welcome.ok()) return complain(welcome.status().message()), 1;
  }
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
