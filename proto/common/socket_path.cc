#include "proto/common/socket_path.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

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
  return "/tmp/neuron-monitor-" + std::to_string(env.uid) + "/" + kSocketName;
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

}  // namespace neuronmon
