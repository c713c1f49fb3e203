// Thin wrappers over libsystemd's sd-daemon API for running as a Type=notify (or notify-reload)
// service: state notifications and the watchdog (Notifier), and the sockets systemd passes by
// socket activation (ListenFds). Outside systemd everything is a quick no-op, because
// NOTIFY_SOCKET, WATCHDOG_USEC and LISTEN_FDS are simply absent. Nothing here unsets those
// variables, so asking again gives the same answer. Thread-safe: no state is kept (sd_notify opens
// a socket per call), though, as always in POSIX, not concurrently with setenv().
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/status.h"

namespace neuronmon::daemon {

// Each notification is one datagram to $NOTIFY_SOCKET (sd_notify(3)). Each returns Ok when it was
// sent or when NOTIFY_SOCKET is unset, and IoError naming the message and the errno text when the
// socket cannot be reached. (The member named Status is why the type is spelled neuronmon::Status.)
class Notifier {
 public:
  // READY=1: startup or a reload finished — listeners bound, first sample taken.
  neuronmon::Status Ready() const;
  // STATUS=<text>: the one line `systemctl status` shows. Newlines in `text` become spaces, so the
  // text cannot smuggle in other assignments.
  neuronmon::Status Status(std::string_view text) const;
  // RELOADING=1 and MONOTONIC_USEC=<now on CLOCK_MONOTONIC, µs>, when a reload starts. Follow with
  // Ready() when it ends; Type=notify-reload needs both.
  neuronmon::Status Reloading() const;
  // STOPPING=1, when shutdown starts.
  neuronmon::Status Stopping() const;
  // WATCHDOG=1: the keep-alive. Send it at least every WatchdogInterval() / 2, and only while the
  // daemon is making progress, so a hang becomes a restart.
  neuronmon::Status Watchdog() const;
  // WATCHDOG_USEC when the watchdog is on for this process (WATCHDOG_PID unset or ours); nullopt
  // when it is off, meant for another process, or the variables are malformed.
  std::optional<std::chrono::microseconds> WatchdogInterval() const;
};

enum class ListenSocketKind {
  kUnixStream,  // a listening AF_UNIX SOCK_STREAM socket
  kTcp,         // a listening AF_INET or AF_INET6 SOCK_STREAM socket
  kOther,       // anything else: datagram, not listening, FIFO, ...
};

struct ListenSocket {
  int fd = -1;
  std::string name;  // from LISTEN_FDNAMES (FileDescriptorName=); "unknown" when not given
  ListenSocketKind kind = ListenSocketKind::kOther;
};

// "unix stream", "tcp" or "other", for messages.
const char* ListenSocketKindName(ListenSocketKind kind);

// The sockets systemd passed by socket activation (sd_listen_fds_with_names(3)), from fd 3 on, in
// order. Empty when LISTEN_PID or LISTEN_FDS is unset or LISTEN_PID is another process.
// InvalidArgument, quoting the variables, when they are malformed, LISTEN_FDNAMES has a different
// count, or a passed fd is not open. The fds belong to the process: the caller adopts the ones it
// uses (e.g. acceptor::assign) and closes the rest; they are marked close-on-exec.
Result<std::vector<ListenSocket>> ListenFds();

}  // namespace neuronmon::daemon
