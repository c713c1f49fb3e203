// neuron-ls: the Neuron device inventory, as AWS neuron-ls prints it, from neuron-monitord.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "client/embedded_simulator.h"
#include "client/endpoint_flags.h"
#include "client/program_flags.h"
#include "client/replay_flags.h"
#include "exporter/incident_format.h"
#include "exporter/neuron_ls_format.h"
#include "proto/common/state_path.h"
#include "proto/common/terminal_text.h"
#include "proto/wire/protobuf_logs.h"

namespace {

using namespace neuronmon;

// neuron-ls --incidents [PATH]: a directory's bundles as a table, one file in full, or JSON.
int ListIncidents(std::string path, bool json) {
  if (path.empty()) {
    for (const std::string& dir : ClientStateCandidates()) {
      if (::access((dir + "/incidents").c_str(), F_OK) == 0) {
        path = dir + "/incidents";
        break;
      }
    }
    if (path.empty()) {
      std::cout << "no incidents: no incidents directory in";
      for (const std::string& dir : ClientStateCandidates()) std::cout << " " << dir;
      std::cout << "\n";
      return 0;
    }
  }
  std::vector<std::string> problems;
  auto files = exporter::ReadIncidents(path, &problems);
  for (const std::string& p : problems)
    std::cerr << "neuron-ls: " << SanitizeForTerminal(p) << "\n";
  if (!files.ok()) {
    std::cerr << "neuron-ls: " << SanitizeForTerminal(files.status().message()) << "\n";
    return 1;
  }
  struct stat st {};
  const bool one_file = ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  if (json) {
    std::cout << exporter::RenderIncidentsJson(*files);
  } else if (one_file) {
    if (files->empty()) return 1;
    std::cout << exporter::RenderIncident(files->front());
  } else if (files->empty()) {
    std::cout << "no incidents in " << SanitizeForTerminal(path) << "\n";
  } else {
    std::cout << exporter::RenderIncidentTable(*files);
  }
  return problems.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  exporter::LsOptions ls;
  bool topology = false, json = false;
  client::EndpointFlags endpoint;
  CLI::App app{"neuron-ls: lists Neuron devices, their topology and the processes using them"};
  client::AddVersionFlag(app, "neuron-ls");
  app.add_flag("-w,--wide", ls.wide, "wider table, full command column");
  app.add_flag("-a,--show-all-procs", ls.show_all_procs, "include processes without a runtime");
  app.add_flag("-u,--who", ls.who,
               "add USER and JOB columns to process rows (Slurm job, namespace/pod or container)");
  app.add_flag("-t,--topology", topology, "draw the NeuronLink topology");
  app.add_flag("-j,--json-output", json, "print JSON");
  client::ReplayFlags replay;
  client::AddReplayOptions(
      app, replay,
      {"list the devices of a recording (an archive directory or a --record file)",
       "with --replay: as at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or +10m from the "
       "recording's start)",
       ""});
  std::string incidents;
  CLI::Option* incidents_flag =
      app.add_option("--incidents", incidents,
                     "list the incident bundles in DIR (default: the daemon's, "
                     "/var/lib/neuron-monitor/incidents or ~/.local/state/neuron-monitor/"
                     "incidents), or show one bundle FILE in full; with -j, as JSON")
          ->expected(0, 1)
          ->type_name("[DIR|FILE]");
  client::AddEndpointOptions(app, endpoint);
  CLI11_PARSE(app, argc, argv);
  if (Status st = client::CheckReplayOptions(replay); !st.ok()) {
    return std::cerr << "neuron-ls: " << st.message() << "\n", 2;
  }
  if (incidents_flag->count() > 0) return ListIncidents(incidents, json);
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  neuronmon::wire::SilenceProtobufParseLogs();

  // Messages may quote the daemon or a recording: stripped of control characters before they
  // reach stderr.
  auto complain = [](const std::string& m) {
    std::cerr << "neuron-ls: " << SanitizeForTerminal(m) << "\n";
  };
  Result<v1::Welcome> welcome = Status::Internal("unset");
  if (replay.given()) {
    auto source = client::EmbeddedReplay()(replay.request);
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
