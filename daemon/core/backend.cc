#include "daemon/core/backend.h"

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

}  // namespace

Result<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options, MonoTime start) {
  Result<simdev::InstanceSpec> spec = simdev::ParseDeviceSpec(options.device);
  if (!spec.ok()) return spec.status();
  Result<simdev::Scenario> scenario = simdev::LoadScenario(options.scenario);
  if (!scenario.ok()) return scenario.status();
  const std::string name = scenario->name;
  Result<std::unique_ptr<simdev::Instance>> instance =
      simdev::Instance::Create(*spec, std::move(*scenario), options.seed);
  if (!instance.ok()) return instance.status();
  std::string description =
      "sim:" + spec->name + ", scenario " + name + ", seed " + std::to_string(options.seed);
  if (options.speed != 1) description += ", speed " + std::to_string(options.speed) + "x";
  return std::unique_ptr<Backend>(std::make_unique<SimBackend>(
      std::move(*instance), start, options.speed, std::move(description)));
}

}  // namespace neuronmon::daemon
