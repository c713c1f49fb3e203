#include "daemon/server/systemd.h"

#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdlib>
#include <memory>
#include <system_error>

namespace neuronmon::daemon {
namespace {

std::string ErrnoText(int negative_errno) {
  return std::error_code(-negative_errno, std::system_category()).message();
}

neuronmon::Status Notify(const std::string& state) {
  const int r = sd_notify(/*unset_environment=*/0, state.c_str());
  if (r >= 0) return neuronmon::Status::Ok();
  const std::string first_line = state.substr(0, state.find('\n'));
  return neuronmon::Status::IoError("sd_notify(" + first_line +
                                    ") to NOTIFY_SOCKET failed: " + ErrnoText(r));
}

std::uint64_t MonotonicMicros() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1'000;
}

// sd_listen_fds_with_names hands back a NULL-terminated array of malloc'ed strings.
struct NamesDeleter {
  void operator()(char** names) const {
    for (char** name = names; *name != nullptr; ++name) std::free(*name);
    std::free(names);
  }
};

std::string EnvForMessage(const char* name) {
  const char* value = std::getenv(name);
  return std::string(name) + (value == nullptr ? " unset" : "=\"" + std::string(value) + "\"");
}

ListenSocketKind KindOf(int fd) {
  if (sd_is_socket_unix(fd, SOCK_STREAM, /*listening=*/1, nullptr, 0) > 0) {
    return ListenSocketKind::kUnixStream;
  }
  if (sd_is_socket_inet(fd, AF_UNSPEC, SOCK_STREAM, /*listening=*/1, /*port=*/0) > 0) {
    return ListenSocketKind::kTcp;
  }
  return ListenSocketKind::kOther;
}

}  // namespace

neuronmon::Status Notifier::Ready() const { return Notify("READY=1"); }

neuronmon::Status Notifier::Status(std::string_view text) const {
  std::string state = "STATUS=";
  for (const char c : text) state += (c == '\n' || c == '\r') ? ' ' : c;
  return Notify(state);
}

neuronmon::Status Notifier::Reloading() const {
  return Notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(MonotonicMicros()));
}

neuronmon::Status Notifier::Stopping() const { return Notify("STOPPING=1"); }

neuronmon::Status Notifier::Watchdog() const { return Notify("WATCHDOG=1"); }

std::optional<std::chrono::microseconds> Notifier::WatchdogInterval() const {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

const char* ListenSocketKindName(ListenSocketKind kind) {
  switch (kind) {
    case ListenSocketKind::kUnixStream:
      return "unix stream";
    case ListenSocketKind::kTcp:
      return "tcp";
    case ListenSocketKind::kOther:
      return "other";
  }
  return "other";
}

Result<std::vector<ListenSocket>> ListenFds() {
  char** raw_names = nullptr;
  const int n = sd_listen_fds_with_names(/*unset_environment=*/0, &raw_names);
  const std::unique_ptr<char*[], NamesDeleter> names(raw_names);
  if (n < 0) {
    return neuronmon::Status::InvalidArgument(
        "socket activation: cannot use the sockets passed by systemd (" +
        EnvForMessage("LISTEN_PID") + ", " + EnvForMessage("LISTEN_FDS") + ", " +
        EnvForMessage("LISTEN_FDNAMES") + "): " + ErrnoText(n));
  }
  std::vector<ListenSocket> sockets;
  for (int i = 0; i < n; ++i) {
    const int fd = SD_LISTEN_FDS_START + i;
    const char* name = names != nullptr ? names[i] : nullptr;
    sockets.push_back({fd, name != nullptr ? name : "unknown", KindOf(fd)});
  }
  return sockets;
}

}  // namespace neuronmon::daemon
