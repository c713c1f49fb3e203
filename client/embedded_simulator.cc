#include "client/embedded_simulator.h"

#include <memory>
#include <utility>

#include "daemon/server/embedded_daemon.h"

namespace neuronmon::client {
namespace {

class Embedded final : public LocalDaemon {
 public:
  explicit Embedded(std::unique_ptr<daemon::EmbeddedDaemon> daemon) : daemon_(std::move(daemon)) {}
  Result<int> Connect() override { return daemon_->Connect(); }

 private:
  std::unique_ptr<daemon::EmbeddedDaemon> daemon_;
};

}  // namespace

LocalDaemonStarter EmbeddedSimulator(int log_fd) {
  return [log_fd](const SimulatorOptions& o) -> Result<std::shared_ptr<LocalDaemon>> {
    daemon::EmbeddedOptions options;
    options.device = o.device;
    options.scenario = o.scenario;
    options.seed = o.seed;
    options.speed = o.speed;
    options.period = o.period;
    options.log_fd = log_fd;
    Result<std::unique_ptr<daemon::EmbeddedDaemon>> started =
        daemon::EmbeddedDaemon::Start(options);
    if (!started.ok()) return started.status();
    return std::shared_ptr<LocalDaemon>(std::make_shared<Embedded>(std::move(*started)));
  };
}

}  // namespace neuronmon::client
