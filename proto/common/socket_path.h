// Where the daemon's unix socket lives (DESIGN.md, Protocol):
// /run/neuron-monitor/neuron-monitord.sock for a daemon running as root or under systemd, else
// $XDG_RUNTIME_DIR/neuron-monitor/...; clients look in the same order. The paths are pure
// functions over the facts they are given; the checks of the /tmp fallback directory and of who
// may serve the socket read the file system and the user database. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proto/common/status.h"

namespace neuronmon {

inline constexpr const char* kSystemSocketPath = "/run/neuron-monitor/neuron-monitord.sock";
inline constexpr const char* kSocketName = "neuron-monitord.sock";

struct SocketEnvironment {
  bool root = false;              // effective uid 0
  std::string runtime_directory;  // $RUNTIME_DIRECTORY (systemd RuntimeDirectory=), may be empty
  std::string xdg_runtime_dir;    // $XDG_RUNTIME_DIR, may be empty
  unsigned uid = 0;
};

// The environment of this process.
SocketEnvironment CurrentSocketEnvironment();

// The path a daemon with no configured path listens on.
std::string DaemonSocketPath(const SocketEnvironment& env);

// Candidate paths a client tries, in order (no duplicates).
std::vector<std::string> ClientSocketCandidates(const SocketEnvironment& env);

// The per-user directory used when there is no $XDG_RUNTIME_DIR: /tmp/neuron-monitor-<uid>. It
// lives in a directory every user can write to, so it must be checked before it is trusted.
std::string FallbackSocketDirectory(unsigned uid);
// Whether `socket_path` (made absolute against the working directory, "." and ".." resolved
// lexically) lies directly in FallbackSocketDirectory(uid), so that directory must be checked.
bool InFallbackSocketDirectory(const std::string& socket_path, unsigned uid);

// Whether `dir` may hold `uid`'s socket: a real directory (lstat: not a symbolic link) owned by
// `uid` with no group or other permissions. Errors (kFailedPrecondition) name the directory and
// what is wrong: "... is a symbolic link", "... is owned by uid 1001, not 1000", "... has mode
// 0777, which lets other users replace the socket; it must be 0700"; kNotFound when it does not
// exist.
Status CheckPrivateDirectory(const std::string& dir, unsigned uid);
// Creates `dir` with mode 0700 when it is missing, then CheckPrivateDirectory.
Status EnsurePrivateDirectory(const std::string& dir, unsigned uid);

// Whether a client may trust a daemon running as `daemon_uid` with its token and its data: root,
// the client's own `client_uid`, or `service_uid` (the neuron-monitor user, when it exists).
bool TrustedDaemonUid(unsigned daemon_uid, unsigned client_uid,
                      std::optional<unsigned> service_uid);
// The uid of the `neuron-monitor` system user, when it exists.
std::optional<unsigned> ServiceUid();

}  // namespace neuronmon
