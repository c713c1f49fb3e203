#include "proto/common/state_path.h"

#include <unistd.h>

#include <cstdlib>

namespace neuronmon {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return std::string(v != nullptr ? v : "");
}

std::string UserStateDirectory() {
  if (std::string xdg = Env("XDG_STATE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return xdg + "/neuron-monitor";
  }
  if (std::string home = Env("HOME"); !home.empty() && home.front() == '/') {
    return home + "/.local/state/neuron-monitor";
  }
  return "";
}

}  // namespace

std::string DefaultStateDirectory() {
  // systemd's StateDirectory= (a list separated by ':'; the first is ours).
  if (std::string state = Env("STATE_DIRECTORY"); !state.empty() && state.front() == '/') {
    return state.substr(0, state.find(':'));
  }
  if (::geteuid() == 0 || !Env("INVOCATION_ID").empty()) return kSystemStateDirectory;
  return UserStateDirectory();
}

std::vector<std::string> ClientStateCandidates() {
  std::vector<std::string> out = {kSystemStateDirectory};
  if (std::string own = DefaultStateDirectory(); !own.empty() && own != out.front()) {
    out.push_back(own);
  }
  if (std::string user = UserStateDirectory();
      !user.empty() && user != out.back() && user != out.front()) {
    out.push_back(user);
  }
  return out;
}

}  // namespace neuronmon
