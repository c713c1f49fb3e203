#include "exporter/ls_app.h"

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <utility>

#include "client/program_flags.h"
#include "exporter/incident_format.h"
#include "proto/common/state_path.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::exporter {
namespace {

// Says `message` on stderr: it may quote the daemon or a recording, so it is stripped of control
// characters first.
using Complain = std::function<void(const std::string& message)>;

// The first client state directory with an incidents directory; "" when none has one.
std::string DefaultIncidentsDirectory() {
  for (const std::string& dir : ClientStateCandidates()) {
    if (::access((dir + "/incidents").c_str(), F_OK) == 0) return dir + "/incidents";
  }
  return "";
}

std::optional<v1::Welcome> RecordingWelcome(const client::ReplayRequest& request,
                                            const client::ReplayOpener& open,
                                            const Complain& complain) {
  auto source = open(request);
  if (!source.ok()) return complain(source.status().message()), std::nullopt;
  for (const std::string& n : (*source)->TakeNotices()) complain(n);
  v1::Welcome welcome = (*source)->Welcome();
  if (Status st = client::CheckInventory(welcome.inventory()); !st.ok()) {
    return complain(st.message()), std::nullopt;
  }
  return welcome;
}

std::optional<v1::Welcome> DaemonWelcome(const client::EndpointFlags& flags,
                                         const client::LocalDaemonStarter& start_local,
                                         const Complain& complain, std::ostream& err) {
  std::string token;
  auto ep = client::ResolveEndpoint(flags, &token);
  if (!ep.ok()) return err << "neuron-ls: " << ep.status().message() << "\n", std::nullopt;
  ep->start_local = start_local;
  if (const std::string n = client::InsecureNotice(*ep, !token.empty()); !n.empty()) complain(n);
  std::string notice;
  Result<v1::Welcome> welcome = client::FetchWelcome(
      *ep, std::string("neuron-ls/") + NEURONMON_VERSION, nullptr, &notice, token);
  if (!notice.empty()) complain(notice);
  if (!welcome.ok()) return complain(welcome.status().message()), std::nullopt;
  return std::move(*welcome);
}

}  // namespace

void AddLsOptions(CLI::App& app, LsCommandLine& c) {
  client::AddVersionFlag(app, "neuron-ls");
  app.add_flag("-w,--wide", c.format.wide, "wider table, full command column");
  app.add_flag("-a,--show-all-procs", c.format.show_all_procs,
               "include the monitoring tools (neuron-monitor, neuron-ls, neuron-top, "
               "neuron-monitord)");
  app.add_flag("-u,--who", c.format.who,
               "add USER and JOB columns to process rows (Slurm job, namespace/pod or container)");
  app.add_flag("-t,--topology", c.topology, "draw the NeuronLink topology");
  CLI::Option* json = app.add_flag("-j,--json-output", c.json, "print JSON");
  // Neuron 2.34's spelling of -j. Until AWS publishes its new JSON document, json is the one -j
  // prints.
  app.add_option_function<std::string>(
         "--output-format", [&c](const std::string& format) { c.json = format == "json"; },
         "json (as -j) or table (the default)")
      ->check(CLI::IsMember({"json", "table"}))
      ->type_name("FORMAT")
      ->excludes(json);
  client::AddReplayOptions(
      app, c.replay,
      {"list the devices of a recording (an archive directory or a --record file)",
       "with --replay: as at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or +10m from the "
       "recording's start)",
       ""});
  app.add_option("--incidents", c.incidents,
                 "list the incident bundles in DIR (default: the daemon's, "
                 "/var/lib/neuron-monitor/incidents or ~/.local/state/neuron-monitor/"
                 "incidents), or show one bundle FILE in full; with -j (--output-format json), as "
                 "JSON")
      ->expected(0, 1)
      ->type_name("[DIR|FILE]");
  app.add_flag("--driver", c.driver,
               "report the local Neuron driver's sysfs tree (no daemon): its version and layout, "
               "and per device the nodes found where expected, moved, missing and unknown; and "
               "which source serves which signal on this host (runtime datastores, AWS's "
               "neuron-monitor, the driver's sysfs); with -j, as JSON");
  app.add_flag("--check", c.check,
               "the health gate for schedulers: may this node take work? One line on stdout "
               "(with -j, JSON); exit 0 healthy, 1 unhealthy, 2 unknown, 3 a usage error. Asks "
               "the daemon, else reads this host's driver (never the simulator)");
  app.add_option("--fail-on", c.fail_on,
                 "with --check: the device health that is unhealthy, failed (the default) or "
                 "degraded (degraded or failed)")
      ->type_name("STATE");
  app.add_option("--expect-devices", c.expect_devices,
                 "with --check: devices there must be (default: what the instance type has)")
      ->type_name("N");
  app.add_option("--min-free-cores", c.min_free_cores,
                 "with --check: NeuronCores no process may hold, at least")
      ->type_name("N");
  app.add_option("--max-age", c.max_age,
                 "with --check: the newest sample may be this old at most (default 30s)")
      ->type_name("DURATION");
  app.add_flag("--active", c.active,
               "with --check: also run an all-reduce on every NeuronCore with AWS's nccom-test "
               "when it is installed and no process holds a core, and judge its bus bandwidth "
               "(unhealthy when it fails or runs below --min-busbw)");
  app.add_option("--nccom-test", c.nccom_test,
                 "with --active: the nccom-test to run (default: from $PATH, else "
                 "/opt/aws/neuron/bin/nccom-test)")
      ->type_name("PATH");
  app.add_option("--active-timeout", c.active_timeout,
                 "with --active: how long the collective may take before it counts as hung "
                 "(default 2m)")
      ->type_name("DURATION");
  app.add_option("--min-busbw", c.min_busbw,
                 "with --active: the bus bandwidth (GB/s, as nccom-test prints it) the all-reduce "
                 "must reach (default: 5% of the instance type's NeuronLink bandwidth)")
      ->type_name("GBPS");
  app.add_option("--sysfs-root", c.sysfs_root, "where --driver and --check read the sysfs tree")
      ->type_name("DIR");
  app.add_option("--proc-root", c.proc_root,
                 "where --check reads the processes when no daemon runs")
      ->type_name("DIR");
  app.add_option("--dev-root", c.dev_root,
                 "where --driver looks for the Neuron device nodes (neuron<N>)")
      ->type_name("DIR");
  client::AddEndpointOptions(app, c.endpoint);
}

int ListIncidents(std::string path, bool json, std::ostream& out, std::ostream& err) {
  if (path.empty()) path = DefaultIncidentsDirectory();
  if (path.empty()) {
    out << "no incidents: no incidents directory in";
    for (const std::string& dir : ClientStateCandidates()) out << " " << dir;
    out << "\n";
    return 0;
  }
  std::vector<std::string> problems;
  auto files = ReadIncidents(path, &problems);
  for (const std::string& p : problems) err << "neuron-ls: " << SanitizeForTerminal(p) << "\n";
  if (!files.ok()) {
    err << "neuron-ls: " << SanitizeForTerminal(files.status().message()) << "\n";
    return 1;
  }
  struct stat st {};
  const bool one_file = ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  if (json) {
    out << RenderIncidentsJson(*files);
  } else if (one_file) {
    if (files->empty()) return 1;
    out << RenderIncident(files->front());
  } else if (files->empty()) {
    out << "no incidents in " << SanitizeForTerminal(path) << "\n";
  } else {
    out << RenderIncidentTable(*files);
  }
  return problems.empty() ? 0 : 1;
}

int RunLs(const LsCommandLine& c, const client::ReplayOpener& open_replay,
          const client::LocalDaemonStarter& start_local, std::ostream& out, std::ostream& err) {
  const Complain complain = [&err](const std::string& m) {
    err << "neuron-ls: " << SanitizeForTerminal(m) << "\n";
  };
  std::optional<v1::Welcome> welcome =
      c.replay.given() ? RecordingWelcome(c.replay.request, open_replay, complain)
                       : DaemonWelcome(c.endpoint, start_local, complain, err);
  if (!welcome) return 1;
  const v1::Inventory& inventory = welcome->inventory();
  if (inventory.devices_size() == 0) {
    return err << "level=error msg=\"no neuron device found\"\n", 1;
  }
  if (c.json) {
    out << RenderJson(inventory, c.format);  // AWS prints no newline after the array
    return 0;
  }
  out << RenderTable(inventory, c.format);
  if (c.topology) out << "\n\n" << RenderTopology(inventory);
  return 0;
}

}  // namespace neuronmon::exporter
