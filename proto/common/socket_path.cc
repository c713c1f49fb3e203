#include "proto/common/socket_path.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace neuronmon {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string UserPath(const SocketEnvironment& env) {
  if (!env.xdg_runtime_dir.empty()) {
    return env.xdg_runtime_dir + "/neuron-monitor/" + kSocketName;
  }
  // No per-user runtime directory (e.g. a plain su session): a private directory in /tmp.
  return FallbackSocketDirectory(env.uid) + "/" + kSocketName;
}

}  // namespace

SocketEnvironment CurrentSocketEnvironment() {
  SocketEnvironment env;
  env.uid = static_cast<unsigned>(::geteuid());
  env.root = env.uid == 0;
  env.runtime_directory = Env("RUNTIME_DIRECTORY");
  env.xdg_runtime_dir = Env("XDG_RUNTIME_DIR");
  return env;
}

std::string DaemonSocketPath(const SocketEnvironment& env) {
  if (!env.runtime_directory.empty()) {
    // systemd may pass several directories separated by ':'; the first is ours.
    const std::string first = env.runtime_directory.substr(0, env.runtime_directory.find(':'));
    return first + "/" + kSocketName;
  }
  if (env.root) return kSystemSocketPath;
  return UserPath(env);
}

std::vector<std::string> ClientSocketCandidates(const SocketEnvironment& env) {
  std::vector<std::string> out = {kSystemSocketPath};
  const std::string user = UserPath(env);
  if (std::find(out.begin(), out.end(), user) == out.end() && !env.root) out.push_back(user);
  return out;
}

std::string FallbackSocketDirectory(unsigned uid) {
  return "/tmp/neuron-monitor-" + std::to_string(uid);
}

bool InFallbackSocketDirectory(const std::string& socket_path, unsigned uid) {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::absolute(socket_path, ec).lexically_normal();
  return !ec && path.parent_path() == std::filesystem::path(FallbackSocketDirectory(uid));
}

Status CheckPrivateDirectory(const std::string& dir, unsigned uid) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const std::string why = std::strerror(errno);
    if (errno == ENOENT) return Status::NotFound(dir + ": " + why);
    return Status::IoError(dir + ": " + why);
  }
  if (S_ISLNK(st.st_mode)) return Status::FailedPrecondition(dir + " is a symbolic link");
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition(dir + " is not a directory");
  if (st.st_uid != uid) {
    return Status::FailedPrecondition(dir + " is owned by uid " + std::to_string(st.st_uid) +
                                      ", not " + std::to_string(uid));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::FailedPrecondition(dir + " has mode " + mode +
                                      ", which lets other users replace the socket; it must be "
                                      "0700");
  }
  return Status::Ok();
}

Status EnsurePrivateDirectory(const std::string& dir, unsigned uid) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IoError("cannot create " + dir + ": " + std::strerror(errno));
  }
  return CheckPrivateDirectory(dir, uid);
}

bool TrustedDaemonUid(unsigned daemon_uid, unsigned client_uid,
                      std::optional<unsigned> service_uid) {
  return daemon_uid == 0 || daemon_uid == client_uid ||
         (service_uid.has_value() && daemon_uid == *service_uid);
}

std::optional<unsigned> ServiceUid() {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwnam_r("neuron-monitor", &entry, buffer, sizeof buffer, &found) != 0 ||
      found == nullptr) {
    return std::nullopt;
  }
  return static_cast<unsigned>(found->pw_uid);
}

}  // namespace neuronmon
