// The neuron-ls program apart from main: its flags (AddLsOptions, in --help's order), --incidents
// (ListIncidents: a directory's bundles as a table, one bundle in full, or JSON) and the device
// listing (RunLs): the inventory of a recording, or of a daemon's Welcome, printed as AWS's
// neuron-ls prints it — the table (with -t the topology after it) or the JSON array. Output goes
// to `out`; problems go to `err` as "neuron-ls: ..." lines, what a daemon, a recording or a bundle
// said stripped of control characters. Functions only; not thread-safe.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "client/client.h"
#include "client/endpoint_flags.h"
#include "client/replay_flags.h"
#include "exporter/neuron_ls_format.h"

namespace CLI {
class App;
}

namespace neuronmon::exporter {

struct LsCommandLine {
  LsOptions format;  // -w, -a, -u
  bool topology = false;
  bool json = false;  // -j, or --output-format json
  client::ReplayFlags replay;
  // Set by --incidents ("" when given without a DIR or FILE): list incident bundles instead.
  std::optional<std::string> incidents;
  client::EndpointFlags endpoint;
  bool driver = false;              // --driver: the local driver's nodes, not the daemon's devices
  std::string sysfs_root = "/sys";  // where --driver and --check read
  std::string dev_root = "/dev";    // where --driver looks for the device nodes
  std::string proc_root = "/proc";  // where --check reads the processes without a daemon
  // --check: the health gate (RunCheck), with what it requires.
  bool check = false;
  std::string fail_on = "failed";  // --fail-on degraded|failed
  std::optional<std::uint32_t> expect_devices;
  std::optional<std::uint32_t> min_free_cores;
  std::string max_age = "30s";
  // --active: an all-reduce on every NeuronCore with AWS's nccom-test (exporter/active_check.h).
  bool active = false;
  std::string nccom_test;  // --nccom-test PATH; "": found in $PATH or /opt/aws/neuron/bin
  std::string active_timeout = "2m";
  std::optional<double> min_busbw;  // --min-busbw GB/s
};

void AddLsOptions(CLI::App& app, LsCommandLine& command_line);

// neuron-ls --incidents [PATH]: the bundles of the directory `path` as a table (or "no incidents
// in PATH"), the one bundle file `path` in full, or with `json` all of them as JSON. An empty
// `path` is the first incidents directory of the client's state directories; when there is none,
// says so and returns 0. Returns 1 when the path cannot be read or any bundle was unreadable
// (each named on `err`), else 0.
int ListIncidents(std::string path, bool json, std::ostream& out, std::ostream& err);

// Lists the devices of the recording command_line.replay (opened with `open_replay`) or of the
// daemon command_line.endpoint names (an in-process one started with `start_local`). Returns the
// exit status: 1 when the recording or the daemon cannot be read, its inventory is out of bounds,
// or it has no device ("level=error msg="no neuron device found"", as AWS's neuron-ls says).
int RunLs(const LsCommandLine& command_line, const client::ReplayOpener& open_replay,
          const client::LocalDaemonStarter& start_local, std::ostream& out, std::ostream& err);

// neuron-ls --check (docs/health.md, "A gate for schedulers"): asks the daemon the flags name, or
// one found where clients look, else reads this host's driver in-process (never the simulator,
// unless --standalone asks for it), and prints one line — or with -j one JSON object — saying
// whether the node may take work. Returns 0 healthy, 1 unhealthy, 2 unknown (exporter/
// health_check.h), 3 for a usage error (said on `err`).
int RunCheck(const LsCommandLine& command_line, const client::LocalDaemonStarter& start_local,
             std::ostream& out, std::ostream& err);

}  // namespace neuronmon::exporter
