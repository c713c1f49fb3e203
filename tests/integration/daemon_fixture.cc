#include "tests/integration/daemon_fixture.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <stdexcept>

namespace neuronmon::testing {

DaemonFixture::DaemonFixture(std::function<void(daemon::DaemonConfig&)> tweak, std::string device,
                             std::string period, daemon::BackendFactory make_backend) {
  static std::atomic<int> counter{0};
  dir_ = std::filesystem::temp_directory_path() /
         ("neuronmon-it-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir_);
  try {
    Start(std::move(tweak), std::move(device), std::move(period), std::move(make_backend));
  } catch (...) {
    // The destructor does not run for a constructor that throws: clean up here.
    if (log_fd_ >= 0) ::close(log_fd_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

void DaemonFixture::Start(std::function<void(daemon::DaemonConfig&)> tweak, std::string device,
                          std::string period, daemon::BackendFactory make_backend) {
  socket_ = (dir_ / "run" / "d.sock").string();
  daemon::CommandLine cli;
  cli.config_path = (dir_ / "absent.json").string();
  cli.simulate.device = device;
  cli.simulate.period = period;
  cli.socket = socket_;
  cli.metrics_listen = "off";
  daemon::DaemonConfig base = daemon::DefaultConfig();
  base.history_retention = std::chrono::seconds(30);  // periods are short: keep the history small
  std::vector<std::string> problems;
  auto config = daemon::ApplyCommandLine(cli, base, cli.config_path, &problems);
  if (!config.ok()) throw std::runtime_error(config.status().message());
  config->stream.handshake_timeout = std::chrono::milliseconds(300);
  config->metrics.request_timeout = std::chrono::milliseconds(300);
  config->stream.write_timeout = std::chrono::seconds(2);
  config->stream.heartbeat_interval = std::chrono::seconds(1);
  config->recorder.enabled = false;  // a test that wants the archive turns it on, in its temp dir
  config->incidents.enabled = false;
  if (tweak) tweak(*config);
  log_fd_ = ::open((dir_ / "daemon.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  daemon::LoggerOptions options;
  options.fd = log_fd_;
  options.threshold = daemon::LogSeverity::kDebug;
  log_ = std::make_unique<daemon::Logger>(options);
  daemon::DaemonMode mode{true, false, false};
  if (make_backend) mode.make_backend = std::move(make_backend);
  daemon_ = std::make_unique<daemon::Daemon>(io_, cli, std::move(*config), *log_, mode);
  Status started = daemon_->Start();
  if (!started.ok()) throw std::runtime_error(started.message());
  thread_ = std::thread([this] {
    auto guard = daemon::asio::make_work_guard(io_);
    io_.run();
  });
}

void DaemonFixture::OnDaemon(std::function<void(daemon::Daemon&)> fn) {
  std::promise<void> done;
  daemon::asio::post(io_, [&] {
    fn(*daemon_);
    done.set_value();
  });
  done.get_future().wait();
}

std::optional<std::uint16_t> DaemonFixture::metrics_port() {
  std::optional<std::uint16_t> port;
  OnDaemon([&](daemon::Daemon& d) { port = d.metrics_port(); });
  return port;
}

void DaemonFixture::Stop() {
  if (!thread_.joinable()) return;
  daemon::asio::post(io_, [this] { daemon_->Stop([this] { io_.stop(); }); });
  thread_.join();
}

DaemonFixture::~DaemonFixture() {
  Stop();
  daemon_.reset();
  if (log_fd_ >= 0) ::close(log_fd_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace neuronmon::testing
