// --replay/--from/--to: declared once for every client program; a time without a recording, and
// (in neuron-top) a recording with daemon or simulator options, are refused with one message each.
#include "client/replay_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

namespace neuronmon::client {
namespace {

const ReplayHelp kWithoutTo{"show a recording", "with --replay: start at TIME", ""};
const ReplayHelp kWithTo{"print a recording", "with --replay: start at TIME",
                         "with --replay: stop after TIME"};

// Parses `args` with the replay options (and the endpoint options) declared.
ReplayFlags Parse(const ReplayHelp& help, const std::string& args, EndpointFlags* endpoint) {
  CLI::App app{"test"};
  ReplayFlags flags;
  AddReplayOptions(app, flags, help);
  AddEndpointOptions(app, *endpoint);
  app.parse(args);
  return flags;
}

std::string Check(const ReplayHelp& help, const std::string& args, bool refuse_endpoint,
                  bool hosts = false) {
  EndpointFlags endpoint;
  const ReplayFlags flags = Parse(help, args, &endpoint);
  Status st = CheckReplayOptions(flags, refuse_endpoint ? &endpoint : nullptr, hosts);
  return st.ok() ? "ok" : st.message();
}

TEST(ReplayFlagsTest, ParsesTheRecordingAndItsRange) {
  EndpointFlags endpoint;
  ReplayFlags flags = Parse(kWithTo, "--replay rec.nmon --from 21:30 --to +10m", &endpoint);
  EXPECT_TRUE(flags.given());
  EXPECT_TRUE(flags.has_to);
  EXPECT_EQ(flags.request.path, "rec.nmon");
  EXPECT_EQ(flags.request.from, "21:30");
  EXPECT_EQ(flags.request.to, "+10m");
  flags = Parse(kWithoutTo, "", &endpoint);
  EXPECT_FALSE(flags.given());
  EXPECT_FALSE(flags.has_to);
}

TEST(ReplayFlagsTest, ProgramsWithoutToDoNotAcceptIt) {
  EndpointFlags endpoint;
  EXPECT_THROW(Parse(kWithoutTo, "--replay r --to 21:30", &endpoint), CLI::ExtrasError);
}

TEST(ReplayFlagsTest, ATimeNeedsARecording) {
  EXPECT_EQ(Check(kWithoutTo, "--from 21:30", false), "--from needs --replay");
  EXPECT_EQ(Check(kWithoutTo, "--from 21:30", true), "--from needs --replay");
  EXPECT_EQ(Check(kWithTo, "--from 21:30", false), "--from and --to need --replay");
  EXPECT_EQ(Check(kWithTo, "--to 21:30", false), "--from and --to need --replay");
  EXPECT_EQ(Check(kWithTo, "--replay r --from 21:30 --to 22:00", false), "ok");
  EXPECT_EQ(Check(kWithoutTo, "", true), "ok");
}

TEST(ReplayFlagsTest, NeuronTopRefusesDaemonAndSimulatorOptionsWithARecording) {
  const std::string refused = "--replay shows a recording: no daemon or simulator options with it";
  for (const std::string option : {"--connect a:1", "--socket s", "--standalone",
                                   "--device sim:trn1", "--scenario x", "--seed 1"}) {
    EXPECT_EQ(Check(kWithoutTo, "--replay r " + option, true), refused) << option;
    // The other programs ignore them with --replay, as they always did.
    EXPECT_EQ(Check(kWithoutTo, "--replay r " + option, false), "ok") << option;
  }
  EXPECT_EQ(Check(kWithoutTo, "--replay r", true, /*hosts=*/true), refused);
  // --speed is the replay's pace; the token file is read only for a daemon.
  EXPECT_EQ(Check(kWithoutTo, "--replay r --speed 4 --token-file t", true), "ok");
  // Without a recording the options choose the daemon.
  EXPECT_EQ(Check(kWithoutTo, "--connect a:1", true, true), "ok");
}

}  // namespace
}  // namespace neuronmon::client
