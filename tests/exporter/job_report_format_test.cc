// neuron-report's documents (exporter/job_report_format.h): goldens of the three formats and the
// list for the two-jobs scenario's jobs, as the daemon accounts them; what a process controls
// (ids, command lines) reaches no terminal raw; what a host cannot measure is said, never 0.
#include "exporter/job_report_format.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "simdev/preset.h"
#include "simdev/scenario_library.h"
#include "tests/daemon/analyzer_sim_run.h"
#include "tests/golden_file.h"

namespace neuronmon::exporter {
namespace {

using std::chrono::seconds;

void ExpectMatchesGolden(const std::string& actual, const std::string& name) {
  test_util::ExpectMatchesGolden(
      actual, std::string(NEURONMON_SOURCE_DIR) + "/tests/testdata/jobs/" + name);
}

// The two-jobs scenario's jobs after 4 simulated minutes, the second one stopped by a mark.
std::vector<v1::JobReport> TwoJobs() {
  simdev::Scenario scenario = *simdev::LoadScenario("two-jobs");
  daemon::sim_run::SimRun run(*simdev::FindPreset(scenario.instance), scenario);
  for (int t = 0; t <= 240; ++t) run.At(t);
  daemon::JobMark stop;
  stop.job = "5002";
  stop.stop = true;
  EXPECT_TRUE(
      run.core->MarkJob(stop, MonoTime(seconds(241)), WallTime(seconds(1767225600 + 241))).ok());
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  run.core->jobs().Fill(jobs);
  return {jobs.begin(), jobs.end()};
}

JobFormatOptions Options() {
  JobFormatOptions o;
  o.now = WallTime(seconds(1767225600 + 240));
  return o;
}

TEST(JobReportFormat, GoldensOfTheTwoJobsScenario) {
  const std::vector<v1::JobReport> jobs = TwoJobs();
  ASSERT_EQ(jobs.size(), 2u);
  ExpectMatchesGolden(RenderJobList(jobs, Options()), "list.txt");
  ExpectMatchesGolden(RenderJobListJson(jobs, Options()), "list.json");
  Result<v1::JobReport> vit = FindJob(jobs, "5002");
  ASSERT_TRUE(vit.ok()) << vit.status().ToString();
  ExpectMatchesGolden(RenderJobText(*vit, Options()), "slurm-5002.txt");
  ExpectMatchesGolden(RenderJobJson(*vit, Options()), "slurm-5002.json");
  ExpectMatchesGolden(RenderJobMarkdown(*vit, Options()), "slurm-5002.md");
  // What the goldens should show, said plainly.
  const std::string text = RenderJobText(*vit, Options());
  EXPECT_NE(text.find("input_bound"), std::string::npos);
  EXPECT_NE(text.find("ended (marked)"), std::string::npos);
  EXPECT_NE(text.find("Slurm job 5002, user vision"), std::string::npos);
}

TEST(JobReportFormat, FindsByNumberIdOrSlurmId) {
  const std::vector<v1::JobReport> jobs = TwoJobs();
  EXPECT_EQ(FindJob(jobs, "1")->id(), "slurm-5001");
  EXPECT_EQ(FindJob(jobs, "slurm-5002")->id(), "slurm-5002");
  EXPECT_EQ(FindJob(jobs, "5001")->id(), "slurm-5001");
  Result<v1::JobReport> missing = FindJob(jobs, "99\x1b[2J");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().find('\x1b'), std::string::npos);
  EXPECT_NE(missing.status().message().find("slurm-5001"), std::string::npos);
}

TEST(JobReportFormat, HostileTextIsStrippedAndUnavailableIsSaid) {
  v1::JobReport job;
  job.set_number(3);
  job.set_id("run-7");
  job.set_kind("process");
  job.set_command("python3 evil.py \x1b]0;pwned\x07 | `rm -rf /` \n next");
  job.mutable_attribution()->set_user("eve\x1b[31m");
  job.set_live(true);
  job.set_core_seconds_held(100);
  job.set_accounted_seconds(50);
  job.set_unavailable("utilization: no nc_time_in_use on this driver; flops: unmeasured");
  job.add_core_ids(0);
  job.add_core_ids(1);
  const JobFormatOptions o = Options();
  for (const std::string& out :
       {RenderJobText(job, o), RenderJobMarkdown(job, o), RenderJobList({job}, o)}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  }
  const std::string text = RenderJobText(job, o);
  EXPECT_NE(text.find("Utilization         unavailable: no nc_time_in_use"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Compute             unavailable: unmeasured"), std::string::npos) << text;
  EXPECT_EQ(text.find("mean 0.0%"), std::string::npos);
  // Markdown: a pipe or a backtick cannot break the table or the code span.
  const std::string md = RenderJobMarkdown(job, o);
  EXPECT_NE(md.find("\\| 'rm -rf /'"), std::string::npos) << md;
  EXPECT_EQ(RenderJobList({job}, o).find("0.0%"), std::string::npos);
  const std::string json = RenderJobJson(job, o);
  EXPECT_NE(json.find("\"utilization_mean_percent\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"flops\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\\u001b"), std::string::npos);  // escaped, not dropped
}

TEST(JobReportFormat, ModelFlopsUtilizationFromStepsWhenTheHostDoesNotCountThem) {
  v1::JobReport job;
  job.set_core_seconds_held(1000);
  job.set_peak_flops_per_core(1e14);
  job.set_max_ranks(4);
  job.mutable_executions()->set_completed(400);  // 100 steps of 4 ranks
  EXPECT_DOUBLE_EQ(ModelFlopsUtilization(job, 0), 0);
  EXPECT_DOUBLE_EQ(ModelFlopsUtilization(job, 3e14), 3e14 * 100 / (1000 * 1e14));
  job.set_model_flops_utilization(0.4);  // the backend's own count wins
  EXPECT_DOUBLE_EQ(ModelFlopsUtilization(job, 3e14), 0.4);
}

TEST(JobReportFormat, NoJobs) {
  EXPECT_EQ(RenderJobList({}, Options()), "no jobs\n");
  EXPECT_EQ(RenderJobListJson({}, Options()), "[]\n");
}

}  // namespace
}  // namespace neuronmon::exporter
