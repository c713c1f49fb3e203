// The flags the client programs share: --version names the program, --record keeps its path, and
// a refused command line is one line naming the program, with its exit status.
#include "client/program_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <sstream>

namespace neuronmon::client {
namespace {

TEST(ProgramFlagsTest, VersionNamesTheProgram) {
  CLI::App app{"test"};
  AddVersionFlag(app, "neuron-ls");
  try {
    app.parse("--version");
    FAIL() << "--version did not stop parsing";
  } catch (const CLI::CallForVersion& e) {
    EXPECT_EQ(std::string(e.what()), std::string("neuron-ls ") + NEURONMON_VERSION);
    EXPECT_EQ(e.get_exit_code(), 0);
  }
}

TEST(ProgramFlagsTest, RecordKeepsThePath) {
  CLI::App app{"test"};
  std::string path = "unchanged";
  AddRecordOption(app, path);
  app.parse("");
  EXPECT_EQ(path, "unchanged");
  app.parse("--record run.nmon");
  EXPECT_EQ(path, "run.nmon");
}

TEST(ProgramFlagsTest, RefusalIsOneLineNamingTheProgram) {
  std::ostringstream err;
  EXPECT_EQ(Refuse("neuron-top", {"--from needs --replay", 2}, err), 2);
  EXPECT_EQ(Refuse("neuron-top", {"--connect: bad port", 1}, err), 1);
  EXPECT_EQ(err.str(), "neuron-top: --from needs --replay\nneuron-top: --connect: bad port\n");
}

}  // namespace
}  // namespace neuronmon::client
