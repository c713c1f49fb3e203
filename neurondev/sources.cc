#include "neurondev/sources.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "neurondev/sysfs_tree.h"
#include "proto/common/driver_version.h"

namespace neuronmon::neurondev {
namespace {

// Why the daemon could not read the driver's datastores through `path` ("" when it could).
std::string DeviceNodeProblem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno);
  if (!S_ISCHR(st.st_mode)) return path + ": not a character device";
  if (::access(path.c_str(), R_OK) != 0) return path + ": " + std::strerror(errno);
  return "";
}

}  // namespace

SourceFacts ProbeSources(const HostOptions& options) {
  SourceFacts f;
  const SysfsTree tree(options.sysfs_root);
  f.driver_version = tree.DriverVersion();
  const std::optional<DriverVersion> v = ParseDriverVersion(f.driver_version);
  f.live_counters = v && v->AtLeast({2, 30, 2});
  if (!options.datastore_root.empty()) {
    f.datastores = "image files under " + options.datastore_root;
  } else if (!options.driver_datastores) {
    f.datastores_unavailable = "runtime_datastores is false";
  } else {
    Result<std::vector<int>> devices = tree.ListDevices();
    const int first = devices.ok() && !devices->empty() ? devices->front() : 0;
    const std::string problem =
        DeviceNodeProblem(options.dev_root + "/neuron" + std::to_string(first));
    if (problem.empty()) {
      f.datastores = "the driver (" + options.dev_root + "/neuron<N>)";
    } else {
      f.datastores_unavailable = problem;
    }
  }
  if (options.neuron_monitor.empty()) {
    f.neuron_monitor_unavailable = "neuron_monitor is \"\"";
  } else if (::access(options.neuron_monitor.c_str(), X_OK) != 0) {
    f.neuron_monitor_unavailable = options.neuron_monitor + ": " + std::strerror(errno);
  } else {
    f.neuron_monitor = options.neuron_monitor;
  }
  if (!options.kernel_log) {
    f.kernel_log_unavailable = "kernel_log.enabled is false";
  } else if (::access(options.kernel_log_options.path.c_str(), R_OK) != 0) {
    f.kernel_log_unavailable = options.kernel_log_options.path + ": " + std::strerror(errno);
  }
  return f;
}

std::vector<SignalSource> SignalSources(const SourceFacts& f) {
  const bool ds = !f.datastores.empty(), nm = !f.neuron_monitor.empty();
  const std::string datastore = "runtime datastores from " + f.datastores + ": ";
  const std::string monitor = "AWS's neuron-monitor: ";
  std::vector<SignalSource> out;
  const auto add = [&](std::string signal, std::vector<std::pair<bool, std::string>> candidates,
                       std::string unavailable = "") {
    SignalSource s{std::move(signal), {}, ""};
    for (auto& [available, source] : candidates) {
      if (available) s.sources.push_back(std::move(source));
    }
    if (s.sources.empty()) s.unavailable = std::move(unavailable);
    out.push_back(std::move(s));
  };
  add("NeuronCore busy time",
      {{ds, datastore + "TIME_IN_USE of each process and core"},
       {nm, monitor + "neuroncore_utilization"},
       {true, f.live_counters ? "driver sysfs: nc_time_in_use"
                              : "driver sysfs: the tensor engine's pe_cntrs"}});
  add("FLOPs",
      {{ds, datastore + "MAC_COUNT x 2"},
       {nm, monitor + "flops"},
       {f.live_counters, "driver sysfs: flop_count"}},
      "the driver (before 2.30.2) adds flop_count in only when a process exits");
  add("executions per application",
      {{ds, datastore + "the outcome and error counters"},
       {nm, monitor + "execution_stats"},
       {f.live_counters,
        "driver sysfs: execution status, for a process that holds its devices "
        "alone"}},
      "the driver (before 2.30.2) counts executions only when a process exits");
  add("execution latency", {{nm, monitor + "latency_stats"}},
      "only AWS's neuron-monitor gives latency (" + f.neuron_monitor_unavailable + ")");
  add("time in collectives",
      {{ds, datastore + "CC_TIME, as a share of time"}, {nm, monitor + "collectives_stats"}},
      "neither a runtime datastore nor neuron-monitor can be read");
  add("memory per application",
      {{ds, datastore + "device and host memory by category"},
       {nm, monitor + "memory_used"},
       {true, "driver sysfs: memory usage per core, for a process that holds its devices alone"}});
  add("runtime and framework versions",
      {{ds, datastore + "the runtime and framework version counters"}},
      "only the runtime's datastore names them (" + f.datastores_unavailable + ")");
  add("execution hardware errors per device",
      {{ds && !f.live_counters,
        datastore + "HW_ERR_* of the live processes, with driver sysfs: stats/status/hw_* for "
                    "those that exited"},
       {true, f.live_counters ? "driver sysfs: stats/status/hw_*"
                              : "driver sysfs: stats/status/hw_*, only once a process exits"}});
  add("device memory, ECC, health, power", {{true, "driver sysfs"}});
  add("hardware error events",
      {{f.kernel_log_unavailable.empty(), "the kernel log: the driver's NEURON_HW_ERR lines"}},
      f.kernel_log_unavailable);
  add("HBM traffic", {}, "the Neuron driver exposes no HBM traffic counter");
  return out;
}

}  // namespace neuronmon::neurondev
