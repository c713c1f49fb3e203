#include "daemon/server/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace neuronmon::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Invocation Parse(std::vector<std::string> args) {
  Invocation invocation;
  CLI::App app;
  AddDaemonOptions(app, invocation);
  args.insert(args.begin(), "neuron-monitord");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return invocation;
}

struct Ran {
  std::optional<int> status;
  std::string out, err;
  std::optional<DaemonConfig> config;
};

Ran RunIt(const Invocation& invocation) {
  std::ostringstream out, err;
  Ran r;
  r.status = RunAction(invocation, out, err, r.config);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".json"))
          .string();
  std::ofstream(path) << text;
  return path;
}

TEST(CommandLineTest, FlagsFillTheTypedCommandLine) {
  const Invocation i = Parse({"--device", "sim:trn1.2xlarge", "--period", "250ms", "--seed", "7",
                              "--node", "2", "--nodes", "4", "--record", "off", "--socket",
                              "/tmp/x.sock", "--replay", "/tmp/a.nmrec", "--from", "+10m"});
  EXPECT_EQ(i.action, Invocation::Action::kRun);
  EXPECT_EQ(i.cli.simulate.device, "sim:trn1.2xlarge");
  EXPECT_EQ(i.cli.simulate.period, "250ms");
  EXPECT_EQ(i.cli.simulate.seed, 7u);
  EXPECT_EQ(i.cli.node, 2);
  EXPECT_EQ(i.cli.nodes, 4);
  EXPECT_EQ(i.cli.record, "off");
  EXPECT_EQ(i.cli.socket, "/tmp/x.sock");
  EXPECT_EQ(i.cli.replay, "/tmp/a.nmrec");
  EXPECT_EQ(i.cli.replay_from, "+10m");
  EXPECT_FALSE(i.cli.config_path_given);
  EXPECT_TRUE(Parse({"--config", "/etc/x.json"}).cli.config_path_given);
  EXPECT_EQ(Parse({"--check-config"}).action, Invocation::Action::kCheckConfig);
  EXPECT_EQ(Parse({"--list-scenarios"}).action, Invocation::Action::kListScenarios);
}

TEST(CommandLineTest, PrintsTheDefaultConfigAndTheScenarios) {
  Ran r = RunIt(Parse({"--print-default-config"}));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, DefaultConfigText());
  r = RunIt(Parse({"--list-scenarios"}));
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("healthy-training\t"));
  EXPECT_THAT(r.out, HasSubstr("\nstraggler\t"));
}

TEST(CommandLineTest, ChecksTheConfigAndSaysEveryProblem) {
  const std::string good = TempFile("good", R"({"seed": 3})");
  Ran r = RunIt(Parse({"--config", good, "--check-config"}));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, good + ": configuration is valid\n");
  const std::string bad = TempFile("bad", R"({"seed": -1, "period": "1ms"})");
  r = RunIt(Parse({"--config", bad, "--check-config"}));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, StartsWith(bad + ": seed: must be between 0 and"));
  EXPECT_THAT(r.err, HasSubstr(bad + ": period: must be between 10ms and 1h"));
  r = RunIt(Parse({"--config", "/nonexistent/neuron-monitord.json"}));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot open: No such file or directory"));
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

TEST(CommandLineTest, FlagsOverrideTheFileAndMeetItsRules) {
  const std::string file = TempFile("flags", R"({"seed": 3, "scenario": "straggler"})");
  Ran r = RunIt(Parse({"--config", file, "--seed", "9", "--metrics-listen", "off"}));
  EXPECT_EQ(r.status, std::nullopt);
  ASSERT_TRUE(r.config.has_value());
  EXPECT_EQ(r.config->backend.seed, 9u);
  EXPECT_EQ(r.config->backend.scenario, "straggler");
  EXPECT_EQ(r.config->listeners.metrics, std::nullopt);
  r = RunIt(Parse({"--config", file, "--period", "5"}));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("command line: --period: \"5\": missing unit"));
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace neuronmon::daemon
