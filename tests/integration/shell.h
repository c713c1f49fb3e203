// Running a command as a user would, for the tests of the programs: through bash with a deadline,
// stdout and stderr captured. Test-only.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace neuronmon::testing {

struct Output {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `command` through bash with a deadline (timeout(1)), capturing stdout and stderr.
inline Output Shell(const std::string& command,
                    std::chrono::milliseconds deadline = std::chrono::milliseconds(20000)) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("neuronmon-sh-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  const std::string full = "timeout " + std::to_string(deadline.count() / 1000) + " bash -c '" +
                           command + "' >" + out + " 2>" + err;
  Output o;
  const int rc = std::system(full.c_str());
  o.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::stringstream a, b;
  a << std::ifstream(out).rdbuf();
  b << std::ifstream(err).rdbuf();
  o.out = a.str();
  o.err = b.str();
  fs::remove_all(dir);
  return o;
}

}  // namespace neuronmon::testing
