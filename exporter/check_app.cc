#include <chrono>
#include <cstdlib>
#include <ostream>

#include "exporter/active_check.h"
#include "exporter/health_check.h"
#include "exporter/ls_app.h"
#include "neurondev/inventory.h"
#include "proto/common/duration.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::exporter {
namespace {

// How long a check waits for the daemon's first report; a daemon answers from its history at once.
constexpr Nanos kReportWait = std::chrono::seconds(5);

// The endpoint to ask: the one the flags name (a daemon, or --standalone's simulator when the user
// asks for it), else a daemon found where clients look, else this host's driver read in-process —
// never the simulator.
client::Endpoint CheckEndpoint(const LsCommandLine& c, client::Endpoint named, bool* host_read,
                               std::string* source) {
  *host_read = false;
  if (c.endpoint.socket || c.endpoint.connect || c.endpoint.standalone) return named;
  std::string looked;
  if (std::optional<std::string> found = client::FindDaemonSocket(&looked)) {
    named.kind = client::Endpoint::Kind::kUnix;
    named.path = *found;
    return named;
  }
  *host_read = true;
  *source =
      "this host's driver (" + c.sysfs_root + "; no neuron-monitord socket in " + looked + ")";
  named.kind = client::Endpoint::Kind::kStandalone;
  named.standalone = {};
  named.standalone.device = "neuron";
  named.standalone.sysfs_root = c.sysfs_root;
  named.standalone.proc_root = c.proc_root;
  named.standalone.driver_only = true;
  return named;
}

// Connects, takes the Welcome's inventory and the first report (every group at once), or says
// why not in `in->unreachable`.
void Ask(client::ClientOptions options, CheckInput* in) {
  Result<std::unique_ptr<client::Client>> c = client::Client::Connect(std::move(options));
  if (!c.ok()) {
    in->unreachable = c.status().message();
    return;
  }
  if (in->source.empty()) in->source = "neuron-monitord (" + (*c)->endpoint_description() + ")";
  const auto deadline = std::chrono::steady_clock::now() + kReportWait;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<client::Event> e = (*c)->Next(std::chrono::milliseconds(100));
    if (!e) {
      if (!(*c)->running()) break;
      continue;
    }
    switch (e->kind) {
      case client::Event::Kind::kConnected:
        in->inventory = e->welcome.inventory();
        break;
      case client::Event::Kind::kReport:
        in->report = std::move(e->report);
        return;
      case client::Event::Kind::kError:
        in->unreachable = "the daemon refused: " + e->error.message();
        return;
      case client::Event::Kind::kDisconnected:
        in->unreachable = e->text;
        return;
      default:
        break;
    }
  }
  if (in->unreachable.empty()) in->unreachable = "no report within " + FormatDuration(kReportWait);
}

// The active check, when the passive one leaves it anything to learn.
ActiveResult Active(const CheckInput& in, const CheckResult& passive, const ActiveOptions& o) {
  ActiveResult skipped;
  if (passive.outcome == CheckOutcome::kUnhealthy) {
    skipped.reason = "active check skipped: the node is already unhealthy";
    return skipped;
  }
  if (!in.inventory) {
    skipped.outcome = ActiveOutcome::kUnknown;
    skipped.reason = "active check not run: no devices were read";
    return skipped;
  }
  std::string type = in.inventory->instance_info().instance_type();
  if (type.empty()) type = in.instance_type;
  return RunActiveCheck(*in.inventory, type, o);
}

}  // namespace

int RunCheck(const LsCommandLine& c, const client::LocalDaemonStarter& start_local,
             std::ostream& out, std::ostream& err) {
  const auto usage = [&err](const std::string& m) {
    err << "neuron-ls: " << SanitizeForTerminal(m) << "\n";
    return 3;
  };
  CheckOptions options;
  if (c.fail_on == "degraded") {
    options.fail_on = v1::HEALTH_STATE_DEGRADED;
  } else if (c.fail_on != "failed") {
    return usage("--fail-on must be degraded or failed, not \"" + c.fail_on + "\"");
  }
  Result<Nanos> max_age = ParseDuration(c.max_age);
  if (!max_age.ok() || *max_age <= Nanos(0)) {
    return usage("--max-age must be a duration such as 30s or 2m, not \"" + c.max_age + "\"");
  }
  options.max_age = *max_age;
  options.expect_devices = c.expect_devices;
  options.min_free_cores = c.min_free_cores;
  if (c.replay.given() || c.incidents || c.driver || c.topology) {
    return usage("--check cannot be used with --replay, --incidents, --driver or -t");
  }
  ActiveOptions active;
  if (c.active) {
    if (c.endpoint.connect) {
      return usage("--active runs the collective on this host: it cannot be used with --connect");
    }
    Result<Nanos> timeout = ParseDuration(c.active_timeout);
    if (!timeout.ok() || *timeout <= Nanos(0)) {
      return usage("--active-timeout must be a duration such as 2m, not \"" + c.active_timeout +
                   "\"");
    }
    if (c.min_busbw && !(*c.min_busbw > 0 && *c.min_busbw < 1e6)) {
      return usage("--min-busbw must be a bus bandwidth in GB/s above 0");
    }
    active.timeout = *timeout;
    active.min_busbw = c.min_busbw;
    active.nccom_test = c.nccom_test;
    if (const char* path = std::getenv("PATH")) active.path_env = path;
  } else if (!c.nccom_test.empty() || c.min_busbw || c.active_timeout != "2m") {
    return usage("--nccom-test, --min-busbw and --active-timeout need --active");
  }
  std::string token;
  Result<client::Endpoint> named = client::ResolveEndpoint(c.endpoint, &token);
  if (!named.ok()) return usage(named.status().message());
  CheckInput in;
  bool host_read = false;
  client::ClientOptions co;
  co.client_name = std::string("neuron-ls/") + NEURONMON_VERSION;
  co.endpoint = CheckEndpoint(c, std::move(*named), &host_read, &in.source);
  co.endpoint.start_local = start_local;
  co.token = token;
  co.reconnect = false;
  co.connect_timeout = std::chrono::seconds(2);
  co.handshake_timeout = std::chrono::seconds(2);
  co.subscribe.add_groups()->set_group(v1::GROUP_DEVICE_HEALTH);
  Ask(std::move(co), &in);
  if (host_read && !in.inventory) {
    // No devices to read: what the instance type says there should be decides.
    in.instance_type = neurondev::ReadHostIdentity(c.sysfs_root, c.proc_root).instance_type;
  }
  in.now = std::chrono::system_clock::now();
  CheckResult result = EvaluateCheck(in, options);
  if (c.active) AddActive(&result, Active(in, result, active));
  out << (c.json ? CheckJson(result) : CheckLine(result)) << "\n";
  return static_cast<int>(result.outcome);
}

}  // namespace neuronmon::exporter
