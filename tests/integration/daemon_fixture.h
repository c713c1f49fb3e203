// Test fixture: a neuron-monitord (the real Daemon class) serving a temp unix socket from its own
// io_context thread, with limits short enough for tests. Stopped and cleaned up in the destructor.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "daemon/server/daemon.h"

namespace neuronmon::testing {

class DaemonFixture {
 public:
  // `tweak` adjusts the configuration before the daemon starts; `make_backend` (when set) builds
  // the device instead of MakeBackend.
  explicit DaemonFixture(std::function<void(daemon::DaemonConfig&)> tweak = nullptr,
                         std::string device = "sim:trn1.2xlarge", std::string period = "50ms",
                         daemon::BackendFactory make_backend = nullptr);
  ~DaemonFixture();

  const std::string& socket_path() const { return socket_; }
  const std::filesystem::path& dir() const { return dir_; }
  // The bound /metrics port (set `config.listeners.metrics` in `tweak`, port 0 for an ephemeral
  // one); nullopt when the metrics listener is off.
  std::optional<std::uint16_t> metrics_port();
  // Runs `fn` on the daemon's thread and waits for it.
  void OnDaemon(std::function<void(daemon::Daemon&)> fn);
  // Graceful stop (shutdown notices); waits until the io_context has stopped.
  void Stop();

 private:
  void Start(std::function<void(daemon::DaemonConfig&)> tweak, std::string device,
             std::string period, daemon::BackendFactory make_backend);

  std::filesystem::path dir_;
  std::string socket_;
  int log_fd_ = -1;
  daemon::asio::io_context io_;
  std::unique_ptr<daemon::Logger> log_;
  std::unique_ptr<daemon::Daemon> daemon_;
  std::thread thread_;
};

}  // namespace neuronmon::testing
