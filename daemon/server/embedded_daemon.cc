#include "daemon/server/embedded_daemon.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <thread>

#include "daemon/server/daemon.h"

namespace neuronmon::daemon {
namespace {

constexpr std::int64_t kEmbeddedSnapshots = 600;

}  // namespace

struct EmbeddedDaemon::Impl {
  asio::io_context io;
  std::unique_ptr<Logger> log;
  std::unique_ptr<Daemon> daemon;
  std::thread thread;
  int null_fd = -1;
  ~Impl() {
    if (null_fd >= 0) ::close(null_fd);
  }
};

EmbeddedDaemon::EmbeddedDaemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<EmbeddedDaemon>> EmbeddedDaemon::Start(const EmbeddedOptions& options) {
  auto impl = std::make_unique<Impl>();
  // No config file: an embedded daemon is configured by its client's flags alone.
  DaemonConfig config = DefaultConfig();
  std::vector<std::string> problems;
  ApplySimulatorOptions(options.simulate, config, &problems);
  if (!problems.empty()) return Status::InvalidArgument(problems.front());
  // A client's own daemon keeps as many snapshots as the service does by default (10 minutes at
  // 1 s), whatever its period: enough for the graphs, and within the memory budget.
  if (options.simulate.period) {
    config.history_retention =
        std::min<Nanos>(config.period * kEmbeddedSnapshots, std::chrono::minutes(10));
  }
  // Problems name the flag's field, with no source: "scenario: unknown scenario ...".
  if (Status valid = ValidateConfig(config, &problems, ""); !valid.ok()) return valid;
  LoggerOptions log_options;
  if (options.log_fd >= 0) {
    log_options.fd = options.log_fd;
    log_options.threshold = LogSeverity::kWarn;
  } else {
    impl->null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    log_options.fd = impl->null_fd;
    log_options.threshold = LogSeverity::kError;
  }
  impl->log = std::make_unique<Logger>(log_options);
  impl->daemon = std::make_unique<Daemon>(impl->io, CommandLine{}, std::move(config), *impl->log,
                                          DaemonMode{false, false, false, false});
  Status started = impl->daemon->Start();
  if (!started.ok()) return started;
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    auto guard = asio::make_work_guard(raw->io);
    raw->io.run();
  });
  return std::unique_ptr<EmbeddedDaemon>(new EmbeddedDaemon(std::move(impl)));
}

EmbeddedDaemon::~EmbeddedDaemon() {
  if (!impl_->thread.joinable()) return;
  Impl* raw = impl_.get();
  asio::post(raw->io, [raw] { raw->daemon->Stop([raw] { raw->io.stop(); }); });
  impl_->thread.join();
}

Result<int> EmbeddedDaemon::Connect() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::IoError(std::string("socketpair: ") + std::strerror(errno));
  }
  Impl* raw = impl_.get();
  const int server_end = fds[1];
  asio::post(raw->io, [raw, server_end] { raw->daemon->ServeConnected(server_end); });
  return fds[0];
}

}  // namespace neuronmon::daemon
