// neuron-ls --incidents: bundles written by the daemon's own writer are listed, shown in full and
// as JSON; text from the files (tags, summaries, config) cannot reach the terminal as control
// sequences; a file that is not a bundle says so. Temp directories only.
#include "exporter/incident_format.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "daemon/core/archive/incident.h"
#include "daemon/core/config/config_file.h"
#include "tests/temp_dir.h"

namespace neuronmon::exporter {
namespace {

// Each test's files, in a directory of their own.
class TempDir : public test_util::TempDir {
 public:
  TempDir() : test_util::TempDir("incident_format") {}
};

constexpr std::int64_t kDeclared = 1796000000'000000000;  // 2026-11-30T00:53:20Z

std::string WriteBundle(const std::string& dir, const std::string& tag) {
  v1::ArchiveHeader h;
  h.set_daemon_version("0.1.0");
  h.set_hostname("host-1");
  h.set_description("sim:trn2.48xlarge, scenario straggler");
  v1::Incident& i = *h.mutable_incident();
  i.set_kind(v1::FINDING_KIND_STRAGGLER);
  i.set_subject(tag);
  i.set_pid(4242);
  i.set_since_unix_ns(kDeclared - 150'000000000);
  i.set_declared_unix_ns(kDeclared);
  i.set_window_start_unix_ns(kDeclared - 300'000000000);
  i.set_window_end_unix_ns(kDeclared + 60'000000000);
  i.set_summary("straggler for 2m30s on " + tag + " (pid 4242): nd5 is slow");
  i.add_also(v1::FINDING_KIND_ERRORS);
  v1::Finding& f = *i.add_findings();
  f.set_kind(v1::FINDING_KIND_STRAGGLER);
  f.set_severity(v1::SEVERITY_WARNING);
  f.set_subject(tag);
  f.set_pid(4242);
  f.set_summary("nd5 is slow");
  v1::Evidence& e = *f.add_evidence();
  e.set_name("utilization_gap_points");
  e.set_value(18.5);
  e.set_unit("points");
  e.set_comparison(">");
  e.set_threshold(12);
  i.set_config(daemon::ConfigToJson(daemon::DefaultConfig()));
  i.set_id(daemon::IncidentId(i));
  auto w = daemon::WriteIncidentBundle(dir, h, {}, {}, "", {});
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? w->path : "";
}

TEST(IncidentFormat, ListsShowsAndPrintsJson) {
  TempDir dir;
  const std::string path = WriteBundle(dir.path(), "llama-train");
  std::vector<std::string> problems;
  auto files = ReadIncidents(dir.path(), &problems);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_TRUE(problems.empty());
  const std::string table = RenderIncidentTable(*files);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "TIME (UTC)            VERDICT           HELD    RUNTIME                     WINDOW  "
            "SIZE      FILE");
  EXPECT_NE(table.find("2026-11-30T00:53:20Z  straggler+1       2m30s   llama-train (4242)         "
                       " 6m      "),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(path), std::string::npos);
  const std::string full = RenderIncident(files->front());
  for (const char* want :
       {"incident 20261130T005320Z-straggler\n",
        "  verdict:  straggler on llama-train (4242) since 2026-11-30T00:50:50Z, declared "
        "2026-11-30T00:53:20Z",
        "  also:     errors\n", "  window:   2026-11-30T00:48:20Z to 2026-11-30T00:54:20Z\n",
        "    llama-train (pid 4242): straggler, warning\n",
        "      evidence: utilization_gap_points = 18.5 points (> 12)\n", "  configuration:\n",
        "    \"hold\": \"2m\","}) {
    EXPECT_NE(full.find(want), std::string::npos) << want << "\n" << full;
  }
  nlohmann::json json = nlohmann::json::parse(RenderIncidentsJson(*files));
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["path"], path);
  EXPECT_EQ(json[0]["incident"]["kind"], "FINDING_KIND_STRAGGLER");
  EXPECT_EQ(json[0]["incident"]["also"][0], "FINDING_KIND_ERRORS");
  EXPECT_EQ(json[0]["config"]["incidents"]["after"], "1m");
  EXPECT_FALSE(json[0]["incident"].contains("config")) << "the config is its own object";
}

TEST(IncidentFormat, TextFromTheFileCannotDriveTheTerminal) {
  TempDir dir;
  WriteBundle(dir.path(), "evil\x1b]0;owned\x07\x1b[2Jtag");
  auto files = ReadIncidents(dir.path(), nullptr);
  ASSERT_TRUE(files.ok());
  for (const std::string& text : {RenderIncidentTable(*files), RenderIncident(files->front())}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos);
    EXPECT_NE(text.find("eviltag"), std::string::npos);
  }
}

TEST(IncidentFormat, AFileThatIsNoBundleSaysSo) {
  TempDir dir;
  const std::string bogus = dir.path() + "/20261130T000000Z-1.nmrec";
  std::FILE* f = std::fopen(bogus.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("not zstd at all", f);
  std::fclose(f);
  std::vector<std::string> problems;
  auto files = ReadIncidents(dir.path(), &problems);
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE(files->empty());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find(bogus), std::string::npos) << problems[0];
  EXPECT_FALSE(ReadIncidents(dir.path() + "/missing", nullptr).ok());
}

}  // namespace
}  // namespace neuronmon::exporter
