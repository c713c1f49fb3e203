#include "daemon/core/backend.h"

#include <cstdio>

#include "neurondev/host.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"

namespace neuronmon::daemon {
namespace {

// The simulator on the daemon's clock: simulated time = (now - start) x speed.
class SimBackend final : public Backend {
 public:
  SimBackend(std::unique_ptr<simdev::Instance> instance, MonoTime start, double speed,
             std::string description)
      : instance_(std::move(instance)),
        start_(start),
        speed_(speed),
        description_(std::move(description)) {}

  v1::Inventory Inventory(MonoTime now) override { return instance_->Inventory(DeviceTime(now)); }
  Snapshot Read(MonoTime now) override { return instance_->Read(DeviceTime(now)); }
  std::string Describe() const override { return description_; }

 private:
  Nanos DeviceTime(MonoTime now) const {
    const auto elapsed = std::max<std::int64_t>(0, (now - start_).count());
    return Nanos(static_cast<std::int64_t>(static_cast<double>(elapsed) * speed_));
  }

  std::unique_ptr<simdev::Instance> instance_;
  MonoTime start_;
  double speed_;
  std::string description_;
};

// A real Neuron host: the driver's tree, /proc and AWS's neuron-monitor.
class NeuronBackend final : public Backend {
 public:
  explicit NeuronBackend(std::unique_ptr<neurondev::Host> host) : host_(std::move(host)) {}

  v1::Inventory Inventory(MonoTime now) override { return host_->Inventory(now); }
  Snapshot Read(MonoTime now) override { return host_->Read(now); }
  std::string Describe() const override { return host_->Describe(); }
  std::optional<SourceStats> Sources() const override;
  void AfterRead() override { host_->AfterRead(); }

 private:
  std::unique_ptr<neurondev::Host> host_;
};

std::optional<SourceStats> NeuronBackend::Sources() const {
  SourceStats s;
  if (const neurondev::KernelLog* log = host_->kernel_log(); log != nullptr) {
    s.kernel_log_refused = log->refused();
    s.kernel_log_unattributed = log->unattributed();
  }
  s.busy_readings_clamped = host_->clamped_busy_readings();
  const neurondev::ProcessScan& scan = host_->last_process_scan();
  s.processes_unexamined = {{"unreadable", scan.unreadable},
                            {"omitted", scan.omitted},
                            {"fd_limited", scan.fd_limited},
                            {"uid_limited", scan.uid_limited}};
  if (const neurondev::MonitorIntegrator* i = host_->runtime_integrator(); i != nullptr) {
    s.runtimes_dropped = i->dropped();
  }
  return s;
}

Result<std::unique_ptr<Backend>> MakeNeuronBackend(const BackendOptions& options, MonoTime start) {
  Result<std::unique_ptr<neurondev::Host>> opened = neurondev::Host::Open(options.host, start);
  if (!opened.ok()) return opened.status();
  return std::unique_ptr<Backend>(std::make_unique<NeuronBackend>(std::move(*opened)));
}

Result<std::unique_ptr<Backend>> MakeSimBackend(const BackendOptions& options, MonoTime start,
                                                const std::string& why) {
  Result<simdev::InstanceSpec> spec = simdev::ParseDeviceSpec(options.device);
  if (!spec.ok()) return spec.status();
  Result<simdev::Scenario> scenario = simdev::LoadScenario(options.scenario);
  if (!scenario.ok()) return scenario.status();
  const std::string name = scenario->name;
  PlaceNode(*scenario, options.node, options.nodes);
  const std::string node = scenario->nodes > 1 ? ", node " + std::to_string(scenario->node) +
                                                     " of " + std::to_string(scenario->nodes)
                                               : "";
  Result<std::unique_ptr<simdev::Instance>> instance =
      simdev::Instance::Create(*spec, std::move(*scenario), options.seed);
  if (!instance.ok()) return instance.status();
  std::string description = why + "sim:" + spec->name + ", scenario " + name + ", seed " +
                            std::to_string(options.seed) + node;
  if (options.speed != 1) {
    char speed[32];
    std::snprintf(speed, sizeof speed, "%g", options.speed);  // 60, 0.5: not 60.000000
    description += ", speed " + std::string(speed) + "x";
  }
  return std::unique_ptr<Backend>(std::make_unique<SimBackend>(
      std::move(*instance), start, options.speed, std::move(description)));
}

}  // namespace

void PlaceNode(simdev::Scenario& scenario, std::int64_t node, std::int64_t nodes) {
  if (nodes > 0) scenario.nodes = static_cast<int>(nodes);
  scenario.node = static_cast<int>(node);
}

Result<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options, MonoTime start) {
  if (options.device == "neuron") return MakeNeuronBackend(options, start);
  if (options.device != "auto") return MakeSimBackend(options, start, "");
  if (neurondev::HasNeuronDevices(options.host.sysfs_root))
    return MakeNeuronBackend(options, start);
  BackendOptions sim = options;
  sim.device = kAutoSimDevice;
  return MakeSimBackend(sim, start,
                        "(auto: no Neuron devices under " + options.host.sysfs_root + ") ");
}

}  // namespace neuronmon::daemon
