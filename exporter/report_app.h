// The neuron-report program apart from main (docs/jobs.md): its flags (AddReportOptions), and
// RunReport — the jobs a daemon accounts, or those a recording replays to, listed or one of them
// reported (text, JSON or Markdown); or a job marked started or ended (--start/--stop JOB, a Slurm
// Prolog/Epilog). Output goes to `out`; problems go to `err` as "neuron-report: ..." lines, what
// a daemon or a recording said stripped of control characters. Not thread-safe.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "client/client.h"
#include "client/endpoint_flags.h"
#include "client/replay_flags.h"

namespace CLI {
class App;
}

namespace neuronmon::exporter {

struct ReportCommandLine {
  std::string job;  // JOB: one job's report; "": the list
  bool json = false;
  bool markdown = false;
  std::optional<std::string> start;  // --start JOB
  std::optional<std::string> stop;   // --stop JOB
  double model_flops = 0;            // --model-flops: the model's FLOPs per step
  client::ReplayFlags replay;        // --replay, --from, --to
  std::optional<std::string> hosts;  // --hosts FILE: the job on every host of a cluster
  client::EndpointFlags endpoint;
};

void AddReportOptions(CLI::App& app, ReportCommandLine& command_line);

// With --hosts, the job JOB (or each host's largest) on every host of the file, compared as
// neuron-top's cluster view compares hosts (client/cluster.h): a straggler host is named on every
// host's row, whatever each host alone says.
// Returns the exit status: 0; 1 when the daemon or the recording cannot be read, the job is not
// found, or a mark was refused; 2 for a usage error.
int RunReport(const ReportCommandLine& command_line, const client::ReplayOpener& open_replay,
              const client::LocalDaemonStarter& start_local, std::ostream& out, std::ostream& err);

}  // namespace neuronmon::exporter
