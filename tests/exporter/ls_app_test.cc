// neuron-ls apart from main: its flags, --incidents over a directory, and the device listing from
// a recording — what it prints, and what it says when there is nothing to list.
#include "exporter/ls_app.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <sstream>

#include "tests/temp_dir.h"

namespace neuronmon::exporter {
namespace {

LsCommandLine Parse(const std::string& args) {
  CLI::App app{"neuron-ls"};
  LsCommandLine command_line;
  AddLsOptions(app, command_line);
  app.parse(args);
  return command_line;
}

TEST(LsAppTest, ParsesTheFlags) {
  LsCommandLine c = Parse("-w -a -u -t -j --replay rec --from +1m");
  EXPECT_TRUE(c.format.wide && c.format.show_all_procs && c.format.who && c.topology && c.json);
  EXPECT_FALSE(Parse("").json) << "the table is the default";
  EXPECT_EQ(c.replay.request.path, "rec");
  EXPECT_EQ(c.replay.request.from, "+1m");
  EXPECT_FALSE(c.incidents.has_value());
  EXPECT_EQ(Parse("--incidents").incidents, std::optional<std::string>(""));
  EXPECT_EQ(Parse("--incidents /var/x").incidents, std::optional<std::string>("/var/x"));
}

// Neuron 2.34 spells -j as --output-format json; table is the default, anything else is refused
// by the parser, and -j goes on working. The two spellings together are refused rather than
// weighed against each other.
TEST(LsAppTest, OutputFormatJsonIsTheJsonFlag) {
  EXPECT_TRUE(Parse("--output-format json").json);
  EXPECT_TRUE(Parse("--output-format=json").json);
  EXPECT_FALSE(Parse("--output-format table").json);
  EXPECT_FALSE(Parse("").json);
  EXPECT_TRUE(Parse("-j").json);
  EXPECT_TRUE(Parse("--json-output").json);
  for (const char* bad : {"--output-format yaml", "--output-format JSON", "--output-format 1"}) {
    EXPECT_THROW(Parse(bad), CLI::ValidationError) << bad;
  }
  EXPECT_THROW(Parse("--output-format"), CLI::ArgumentMismatch);
  EXPECT_THROW(Parse("-j --output-format table"), CLI::ExcludesError);
  try {
    Parse("--output-format yaml");
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("--output-format"), std::string::npos) << e.what();
  }
}

TEST(LsAppTest, ListsAnEmptyIncidentsDirectory) {
  test_util::TempDir dir("ls_incidents");
  std::ostringstream out, err;
  EXPECT_EQ(ListIncidents(dir.path(), false, out, err), 0);
  EXPECT_EQ(out.str(), "no incidents in " + dir.path() + "\n");
  EXPECT_EQ(err.str(), "");
  out.str("");
  EXPECT_EQ(ListIncidents(dir.path() + "/missing", false, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().rfind("neuron-ls: ", 0), 0u) << err.str();
}

// A recording whose Welcome is `welcome`, with `notices` to tell.
class FakeRecording : public client::ReplaySource {
 public:
  FakeRecording(v1::Welcome welcome, std::vector<std::string> notices)
      : welcome_(std::move(welcome)), notices_(std::move(notices)) {}
  v1::Welcome Welcome() const override { return welcome_; }
  Status Subscribe(const std::vector<v1::Subscribe>&) override { return Status::Ok(); }
  bool Step(std::vector<std::optional<v1::Report>>&) override { return false; }
  Status Seek(WallTime) override { return Status::Ok(); }
  WallTime Time() const override { return {}; }
  WallTime Start() const override { return {}; }
  WallTime LastChunk() const override { return {}; }
  std::vector<std::string> TakeNotices() override { return std::exchange(notices_, {}); }
  std::string Describe() const override { return "fake"; }

 private:
  v1::Welcome welcome_;
  std::vector<std::string> notices_;
};

client::ReplayOpener Opener(v1::Welcome welcome, std::vector<std::string> notices = {}) {
  return [=](const client::ReplayRequest&) -> Result<std::unique_ptr<client::ReplaySource>> {
    return std::unique_ptr<client::ReplaySource>(std::make_unique<FakeRecording>(welcome, notices));
  };
}

v1::Welcome OneDevice() {
  v1::Welcome welcome;
  v1::Inventory& inventory = *welcome.mutable_inventory();
  inventory.mutable_instance_info()->set_instance_type("trn1.2xlarge");
  v1::Device& device = *inventory.add_devices();
  device.set_core_count(2);
  device.add_core_ids(0);
  device.add_core_ids(1);
  return welcome;
}

int List(const std::string& args, const client::ReplayOpener& open, std::string* out,
         std::string* err) {
  std::ostringstream o, e;
  const int status = RunLs(Parse(args), open, nullptr, o, e);
  *out = o.str();
  *err = e.str();
  return status;
}

TEST(LsAppTest, ListsTheDevicesOfARecording) {
  std::string out, err;
  const v1::Welcome welcome = OneDevice();
  EXPECT_EQ(List("--replay rec", Opener(welcome, {"torn tail\x1b[2J"}), &out, &err), 0);
  EXPECT_EQ(out, RenderTable(welcome.inventory(), {}));
  EXPECT_EQ(err, "neuron-ls: torn tail\n");  // the escape sequence stripped
  EXPECT_EQ(List("--replay rec -t", Opener(welcome), &out, &err), 0);
  EXPECT_EQ(out,
            RenderTable(welcome.inventory(), {}) + "\n\n" + RenderTopology(welcome.inventory()));
  EXPECT_EQ(List("--replay rec -j -w", Opener(welcome), &out, &err), 0);
  EXPECT_EQ(out, RenderJson(welcome.inventory(), {.wide = true}));
  EXPECT_EQ(List("--replay rec --output-format json -w", Opener(welcome), &out, &err), 0);
  EXPECT_EQ(out, RenderJson(welcome.inventory(), {.wide = true}));
  EXPECT_EQ(List("--replay rec --output-format table", Opener(welcome), &out, &err), 0);
  EXPECT_EQ(out, RenderTable(welcome.inventory(), {}));
}

TEST(LsAppTest, SaysWhyThereIsNothingToList) {
  std::string out, err;
  EXPECT_EQ(List("--replay rec", Opener(v1::Welcome{}), &out, &err), 1);
  EXPECT_EQ(err, "level=error msg=\"no neuron device found\"\n");
  const client::ReplayOpener unreadable =
      [](const client::ReplayRequest& r) -> Result<std::unique_ptr<client::ReplaySource>> {
    return Status::NotFound(r.path + ": no such file");
  };
  EXPECT_EQ(List("--replay rec", unreadable, &out, &err), 1);
  EXPECT_EQ(err, "neuron-ls: rec: no such file\n");
  EXPECT_EQ(List("--socket a --connect b:1", unreadable, &out, &err), 1);
  EXPECT_EQ(err, "neuron-ls: --socket and --connect are exclusive\n");
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace neuronmon::exporter
