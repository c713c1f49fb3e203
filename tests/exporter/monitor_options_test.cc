// neuron-monitor's command line: each refusal (with its message and exit status) in the order it
// is checked, the configuration file, and --replay ignoring the daemon options.
#include "exporter/monitor_options.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>

#include "tests/temp_dir.h"

namespace neuronmon::exporter {
namespace {

class MonitorOptionsTest : public ::testing::Test {
 protected:
  client::OptionsOr<MonitorAppOptions> Resolve(const std::string& args) {
    CLI::App app{"neuron-monitor"};
    MonitorCommandLine command_line;
    AddMonitorOptions(app, command_line);
    app.parse(args);
    return ResolveMonitorOptions(command_line);
  }
  // "exit N: message" for a refused command line, else "ok".
  std::string Outcome(const std::string& args) {
    client::OptionsOr<MonitorAppOptions> r = Resolve(args);
    const auto* e = std::get_if<client::CommandLineError>(&r);
    return e == nullptr ? "ok" : "exit " + std::to_string(e->exit_code) + ": " + e->message;
  }
  MonitorAppOptions Options(const std::string& args) {
    client::OptionsOr<MonitorAppOptions> r = Resolve(args);
    if (const auto* e = std::get_if<client::CommandLineError>(&r)) ADD_FAILURE() << e->message;
    return std::holds_alternative<MonitorAppOptions>(r) ? std::get<MonitorAppOptions>(r)
                                                        : MonitorAppOptions{};
  }
  std::string ConfigFile(const std::string& text) {
    const std::string path = dir_.File("monitor.conf");
    std::ofstream(path) << text;
    return path;
  }

  test_util::TempDir dir_{"monitor_options"};
};

TEST_F(MonitorOptionsTest, ATimeNeedsARecordingBeforeAnythingIsRead) {
  EXPECT_EQ(Outcome("--from 21:30"), "exit 2: --from and --to need --replay");
  EXPECT_EQ(Outcome("--to 21:30 -c " + dir_.File("missing")),
            "exit 2: --from and --to need --replay");
}

TEST_F(MonitorOptionsTest, FollowNeedsEventsAndEventsAreNotRecorded) {
  EXPECT_EQ(Outcome("--follow"), "exit 2: --follow needs --events");
  EXPECT_EQ(Outcome("-f --standalone"), "exit 2: --follow needs --events");
  EXPECT_EQ(Outcome("--events --record x"), "exit 2: --record keeps reports, not --events");
  const MonitorAppOptions o = Options("--events -f --standalone");
  EXPECT_TRUE(o.events);
  EXPECT_TRUE(o.follow);
  EXPECT_TRUE(Options("--events --replay r").events);
}

TEST_F(MonitorOptionsTest, TheConfigurationFileIsReadThenTheRecordingChecked) {
  const std::string missing = Outcome("-c " + dir_.File("missing") + " --replay r --record x");
  EXPECT_EQ(missing.rfind("exit 1: ", 0), 0u) << missing;
  EXPECT_NE(missing.find(dir_.File("missing")), std::string::npos) << missing;
  EXPECT_EQ(Outcome("-c " + ConfigFile("{bad")).rfind("exit 1: ", 0), 0u);
  EXPECT_EQ(Outcome("--replay r --record x"),
            "exit 2: --record and --replay cannot be used together");

  const MonitorAppOptions o =
      Options("-c " + ConfigFile(R"({"neuron_runtimes": [{"tag_filter": "train", "metrics": [
          {"type": "memory_used"}]}], "system_metrics": [{"type": "hbm_stats"}]})"));
  ASSERT_EQ(o.config.runtimes.size(), 1u);
  EXPECT_EQ(o.config.runtimes[0].tag_filter, "train");
  EXPECT_EQ(o.config.system.size(), 1u);
  // Without -c: every group for every runtime.
  EXPECT_EQ(Options("").config.runtimes.size(), DefaultMonitorConfig().runtimes.size());
}

TEST_F(MonitorOptionsTest, ARecordingIgnoresTheDaemonOptions) {
  const MonitorAppOptions o = Options("--replay rec --from +1m --to +2m --connect bad --count 3");
  ASSERT_TRUE(o.replay.has_value());
  EXPECT_EQ(o.replay->path, "rec");
  EXPECT_EQ(o.replay->from, "+1m");
  EXPECT_EQ(o.replay->to, "+2m");
  EXPECT_EQ(o.endpoint.kind, client::Endpoint::Kind::kAuto);
  EXPECT_EQ(o.count, 3u);
}

TEST_F(MonitorOptionsTest, DaemonOptionsResolveToAnEndpoint) {
  EXPECT_EQ(Outcome("--socket a --connect b:1"), "exit 1: --socket and --connect are exclusive");
  EXPECT_EQ(Outcome("--connect bad").rfind("exit 1: --connect ", 0), 0u);
  const MonitorAppOptions o = Options("--socket /run/x.sock --verbose 2 --aws-only --record r");
  EXPECT_EQ(o.endpoint.kind, client::Endpoint::Kind::kUnix);
  EXPECT_EQ(o.endpoint.path, "/run/x.sock");
  EXPECT_EQ(o.verbose, 2);
  EXPECT_FALSE(o.extensions);
  EXPECT_EQ(o.record, "r");
  EXPECT_FALSE(o.replay.has_value());
  EXPECT_TRUE(Options("").extensions);
  EXPECT_THROW(Resolve("--verbose 5"), CLI::ValidationError);
}

}  // namespace
}  // namespace neuronmon::exporter
