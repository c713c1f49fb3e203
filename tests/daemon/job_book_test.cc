// The job accounting (daemon/core/jobs/job_book.h): jobs found from the attribution, their
// figures equal to the integrated per-second reports, persistence across a restart, bounds.
#include "daemon/core/jobs/job_book.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/report/subscription.h"
#include "proto/names/names.h"
#include "simdev/preset.h"
#include "simdev/scenario.h"
#include "simdev/scenario_library.h"
#include "tests/daemon/analyzer_sim_run.h"
#include "tests/daemon/core_fixture.h"

namespace neuronmon::daemon {
namespace {

using sim_run::SimRun;
using std::chrono::seconds;

JobMark Mark(std::string job, bool stop = false, std::optional<std::uint32_t> uid = std::nullopt) {
  JobMark m;
  m.job = std::move(job);
  m.stop = stop;
  m.uid = uid;
  return m;
}

const v1::JobReport* FindJob(const v1::Report& report, const std::string& id) {
  for (const v1::JobReport& j : report.jobs()) {
    if (j.id() == id) return &j;
  }
  return nullptr;
}

v1::Report Jobs(DaemonCore& core) {
  Result<Subscription> sub = Subscription::FromRequest(testing::Request({{v1::GROUP_JOBS, 1000}}),
                                                       seconds(1), 1024, nullptr);
  EXPECT_TRUE(sub.ok());
  std::optional<v1::Report> r =
      core.ReportAt(*sub, core.history().newest_seq(), ReportScope::kFirst);
  EXPECT_TRUE(r.has_value());
  return r.value_or(v1::Report());
}

double VerdictSeconds(const v1::JobReport& job, v1::FindingKind kind) {
  for (const v1::VerdictTime& v : job.verdicts()) {
    if (v.kind() == kind) return v.seconds();
  }
  return 0;
}

SimRun TwoJobs() {
  simdev::Scenario scenario = *simdev::LoadScenario("two-jobs");
  return SimRun(*simdev::FindPreset(scenario.instance), scenario);
}

// What the per-second reports say of each Slurm job, added up: busy and held core-seconds and the
// seconds under each verdict (the worst of its runtimes', as the book counts it).
struct Integrated {
  double busy = 0, held = 0;
  std::map<int, double> verdicts;
  std::vector<double> per_second;  // the job's utilization in each window, percent
};

TEST(JobBook, TwoJobsEqualTheirIntegratedWindowReports) {
  SimRun run = TwoJobs();
  Result<Subscription> sub =
      Subscription::FromRequest(testing::Request({{v1::GROUP_NEURONCORE_COUNTERS, 1000},
                                                  {v1::GROUP_BOTTLENECK_ANALYSIS, 1000}}),
                                seconds(1), 1024, nullptr);
  ASSERT_TRUE(sub.ok());
  std::map<std::string, Integrated> integrated;
  for (int t = 0; t <= 240; ++t) {
    run.At(t);
    std::optional<v1::Report> r =
        run.core->ReportAt(*sub, run.core->history().newest_seq(), ReportScope::kLive);
    ASSERT_TRUE(r.has_value());
    if (t == 0) continue;                                     // no window yet
    std::map<std::string, std::pair<int, int>> worst;         // job -> (rank, kind)
    std::map<std::string, std::pair<double, double>> window;  // job -> (busy, held)
    for (const v1::RuntimeReport& rt : r->runtimes()) {
      const std::string job = "slurm-" + rt.attribution().slurm_job_id();
      Integrated& in = integrated[job];
      const double period = static_cast<double>(rt.neuroncore_counters().period_ns()) / 1e9;
      for (const v1::CoreCounters& c : rt.neuroncore_counters().cores()) {
        in.busy += c.utilization_percent() / 100 * period;
        in.held += period;
        window[job].first += c.utilization_percent() / 100 * period;
        window[job].second += period;
      }
      if (!rt.findings().empty()) {
        const v1::FindingKind k = rt.findings(0).kind();
        auto& w = worst[job];
        if (VerdictRank(k) > w.first) w = {VerdictRank(k), k};
      }
    }
    for (const auto& [job, w] : worst) integrated[job].verdicts[w.second] += 1;
    for (const auto& [job, bh] : window) {
      integrated[job].per_second.push_back(100 * bh.first / bh.second);
    }
  }
  const v1::Report jobs = Jobs(*run.core);
  ASSERT_EQ(jobs.jobs_size(), 2);
  for (const char* id : {"slurm-5001", "slurm-5002"}) {
    SCOPED_TRACE(id);
    const v1::JobReport* job = FindJob(jobs, id);
    ASSERT_NE(job, nullptr);
    EXPECT_TRUE(job->live());
    EXPECT_EQ(job->kind(), "slurm");
    EXPECT_EQ(job->member_count(), 8u);
    EXPECT_EQ(job->max_ranks(), 8u);
    EXPECT_EQ(job->device_indices_size(), 8);
    EXPECT_EQ(job->core_ids_size(), 32);
    const Integrated& in = integrated[id];
    EXPECT_NEAR(job->core_seconds_held(), in.held, 1e-6 * in.held);
    EXPECT_NEAR(job->core_seconds_busy(), in.busy, 1e-6 * in.busy);
    EXPECT_NEAR(job->utilization_mean_percent(), 100 * in.busy / in.held, 1e-6);
    for (const auto& [kind, secs] : in.verdicts) {
      EXPECT_NEAR(VerdictSeconds(*job, static_cast<v1::FindingKind>(kind)), secs, 1e-6)
          << FindingKindName(static_cast<v1::FindingKind>(kind));
    }
    EXPECT_GT(job->flops(), 0);
    EXPECT_GT(job->hardware_flops_utilization(), 0);
    EXPECT_LT(job->hardware_flops_utilization(), 1);
    EXPECT_GT(job->hbm_peak_bytes(), 0u);
    EXPECT_GT(job->collective_share(), 0);
    EXPECT_GT(job->executions().completed(), 0u);
    // p10 of the per-second utilizations the reports show (whole percent, as the book bins).
    std::vector<double> u = in.per_second;
    std::sort(u.begin(), u.end());
    EXPECT_NEAR(job->utilization_p10_percent(), u[(u.size() + 9) / 10 - 1], 1.0);
    EXPECT_GT(job->trace_busy_size(), 10);
    EXPECT_LE(job->trace_busy_size(), 64);
  }
  // The healthy job spent its time healthy; the other one was input-bound, then healthy again.
  const v1::JobReport& llama = *FindJob(jobs, "slurm-5001");
  const v1::JobReport& vit = *FindJob(jobs, "slurm-5002");
  EXPECT_GT(VerdictSeconds(llama, v1::FINDING_KIND_HEALTHY), 180);
  EXPECT_LT(VerdictSeconds(llama, v1::FINDING_KIND_INPUT_BOUND), 20);  // its warm-up
  EXPECT_GT(VerdictSeconds(vit, v1::FINDING_KIND_INPUT_BOUND), 60);
  EXPECT_GT(VerdictSeconds(vit, v1::FINDING_KIND_HEALTHY), 60);
  EXPECT_LT(vit.utilization_mean_percent(), llama.utilization_mean_percent() - 10);
  EXPECT_EQ(llama.attribution().user(), "mlteam");
}

// Snapshots of runtimes running `command` (no Slurm job, pod or container): a launch.
struct Launch {
  v1::Inventory inventory = testing::Inventory();
  Snapshot At(std::uint64_t seq, int t, std::vector<std::uint32_t> pids,
              std::uint64_t ticks = 100) {
    Snapshot s = testing::Base(seq, t);
    s.mono = MonoTime(seconds(t));
    const RuntimeSample base = s.runtimes.front();
    s.runtimes.clear();
    inventory.clear_processes();
    for (std::uint32_t pid : pids) {
      RuntimeSample r = base;
      r.pid = pid;
      r.tag = "rank" + std::to_string(pid);
      r.cores = {pid % 2 == 0 ? 0u : 4u};
      s.runtimes.push_back(r);
      v1::Process* p = inventory.add_processes();
      p->set_pid(pid);
      p->set_command("python3 train.py");
      p->set_start_time_ticks(ticks);
      p->add_device_indices(pid % 2 == 0 ? 0 : 1);
    }
    for (CoreCounters& c : s.cores) c.busy_ns = static_cast<std::uint64_t>(t) * 500'000'000;
    return s;
  }
};

TEST(JobBook, ProcessesStartAndEndJobs) {
  JobBook book({.grace = seconds(5)});
  Launch l;
  std::vector<v1::Event> none;
  const Snapshot s0 = l.At(1, 0, {});
  const Snapshot s1 = l.At(2, 1, {100});
  std::vector<v1::Event> events = book.Update(&s0, s1, l.inventory, nullptr, none);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind(), v1::EVENT_KIND_JOB);
  EXPECT_EQ(events[0].after(), "started");
  EXPECT_EQ(events[0].subject().job(), "run-100");
  // A second process of the same command within the launch window joins it.
  const Snapshot s2 = l.At(3, 2, {100, 101});
  EXPECT_TRUE(book.Update(&s1, s2, l.inventory, nullptr, none).empty());
  const Snapshot s3 = l.At(4, 3, {100, 101});
  EXPECT_TRUE(book.Update(&s2, s3, l.inventory, nullptr, none).empty());
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  book.Fill(jobs);
  ASSERT_EQ(jobs.size(), 1);
  EXPECT_EQ(jobs[0].kind(), "launch");
  EXPECT_EQ(jobs[0].member_count(), 2u);
  EXPECT_EQ(jobs[0].max_ranks(), 2u);
  EXPECT_EQ(jobs[0].device_indices_size(), 2);
  // A process counts from its second sample on (its counters before its first are unknown):
  // 1 core for 1 s (s1 -> s2), then 2 cores for 1 s, each half busy.
  EXPECT_DOUBLE_EQ(jobs[0].core_seconds_held(), 1 + 2);
  EXPECT_DOUBLE_EQ(jobs[0].core_seconds_busy(), 0.5 + 1);
  EXPECT_DOUBLE_EQ(jobs[0].utilization_mean_percent(), 50);
  // Both gone: the job ends once the grace period has passed, at when they were last seen.
  const Snapshot s4 = l.At(5, 4, {});
  EXPECT_TRUE(book.Update(&s3, s4, l.inventory, nullptr, none).empty());
  const Snapshot s5 = l.At(6, 8, {});
  events = book.Update(&s4, s5, l.inventory, nullptr, none);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].after(), "ended");
  EXPECT_EQ(events[0].before(), "live");
  jobs.Clear();
  book.Fill(jobs);
  EXPECT_FALSE(jobs[0].live());
  EXPECT_EQ(jobs[0].end_unix_ns(), ToUnixNanos(s3.wall));
  EXPECT_DOUBLE_EQ(jobs[0].wall_seconds(), 2);
  // The same pid with another start time is another process: a new job.
  const Snapshot s6 = l.At(7, 9, {100}, 999);
  events = book.Update(&s5, s6, l.inventory, nullptr, none);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(book.live_count(), 1u);
}

// What a process claims joins only its own user's processes, and a number is not an id for marks.
TEST(JobBook, ClaimsAreTheClaimersAndMarksTakeIdsNotNumbers) {
  JobBook book;
  Launch l;
  std::vector<v1::Event> none;
  const Snapshot s0 = l.At(1, 0, {});
  Snapshot s1 = l.At(2, 1, {100, 101});
  for (int i = 0; i < 2; ++i) {
    v1::Attribution* a = l.inventory.mutable_processes(i)->mutable_attribution();
    a->set_slurm_job_id("9");
    a->set_slurm_claimed(true);
    a->set_uid(1000 + static_cast<std::uint32_t>(i));
  }
  (void)book.Update(&s0, s1, l.inventory, nullptr, none);
  EXPECT_EQ(book.live_count(), 2u) << "one claimed job per user";
  // uid 1001 stops its own job 9, not the other user's.
  ASSERT_TRUE(book.Mark(Mark("9", true, 1001), WallTime(seconds(1767225602)), none).ok());
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  book.Fill(jobs);
  ASSERT_EQ(jobs.size(), 2);
  EXPECT_TRUE(jobs[0].live());
  EXPECT_EQ(jobs[0].attribution().uid(), 1000u);
  EXPECT_EQ(jobs[1].attribution().uid(), 1001u);
  // Job number 1 is not "1" to a mark: that is Slurm job 1, which nobody runs.
  EXPECT_FALSE(book.Mark(Mark("1", true), WallTime(seconds(1767225602)), none).ok());
}

// Processes beyond the 256 the list keeps are counted once each, not once a sample.
TEST(JobBook, ManyProcessesAreCountedOnce) {
  JobBook book;
  Launch l;
  std::vector<v1::Event> none;
  std::vector<std::uint32_t> pids;
  for (std::uint32_t p = 1000; p < 1300; ++p) pids.push_back(p);
  Snapshot prev = l.At(1, 0, {});
  for (int t = 1; t <= 5; ++t) {
    Snapshot now = l.At(static_cast<std::uint64_t>(t + 1), t, pids);
    (void)book.Update(&prev, now, l.inventory, nullptr, none);
    prev = std::move(now);
  }
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  book.Fill(jobs);
  ASSERT_EQ(jobs.size(), 1);
  EXPECT_EQ(jobs[0].member_count(), 300u);
  EXPECT_EQ(jobs[0].members_size(), 256);
  EXPECT_EQ(jobs[0].max_ranks(), 300u);
}

TEST(JobBook, JobsRunningAtTheFirstSampleAreLearntNotStarted) {
  SimRun run = TwoJobs();
  for (int t = 0; t <= 20; ++t) run.At(t);
  for (const v1::Event* e : run.core->events().After(0, 1000)) {
    EXPECT_NE(e->kind(), v1::EVENT_KIND_JOB) << e->summary();
  }
  EXPECT_EQ(Jobs(*run.core).jobs_size(), 2);
  ASSERT_TRUE(
      run.core->MarkJob(Mark("5001", true), MonoTime(seconds(21)), WallTime(seconds(1767225621)))
          .ok());
  const v1::Report jobs = Jobs(*run.core);
  const v1::JobReport* done = FindJob(jobs, "slurm-5001");
  ASSERT_NE(done, nullptr);
  EXPECT_FALSE(done->live());
  EXPECT_TRUE(done->stop_marked());
  EXPECT_EQ(done->end_unix_ns(), 1767225621LL * 1000000000);
  EXPECT_EQ(jobs.jobs(0).id(), "slurm-5002");  // live jobs first
  const v1::Event& last = *run.core->events().After(0, 1000).back();
  EXPECT_EQ(last.kind(), v1::EVENT_KIND_JOB);
  EXPECT_EQ(last.after(), "ended");
  EXPECT_EQ(last.subject().job(), "slurm-5001");
  // Its processes linger past the stop: they do not start the job again.
  for (int t = 21; t <= 24; ++t) run.At(t);
  EXPECT_EQ(Jobs(*run.core).jobs_size(), 2);
}

TEST(JobBook, MarksAreOnlyForRootOrTheOwner) {
  JobBook book;
  std::vector<v1::Event> events;
  const WallTime wall(seconds(1767225600));
  EXPECT_FALSE(book.Mark(Mark("77", false, 1000), wall, events).ok());
  ASSERT_TRUE(book.Mark(Mark("77"), wall, events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(book.live_count(), 1u);
  Status other = book.Mark(Mark("77", true, 1000), wall, events);
  EXPECT_FALSE(other.ok());
  EXPECT_NE(other.message().find("not yours"), std::string::npos) << other.message();
  EXPECT_FALSE(book.Mark(Mark("78", true), wall, events).ok());
  EXPECT_FALSE(book.Mark(Mark(std::string(200, '7')), wall, events).ok());
  ASSERT_TRUE(book.Mark(Mark("77", true), wall + seconds(9), events).ok());
  EXPECT_EQ(book.live_count(), 0u);
  EXPECT_EQ(book.finished_count(), 1u);
}

TEST(JobBook, IdsFromClaimedStringsAreSafe) {
  v1::Attribution a;
  a.set_slurm_job_id("12\x1b[2J; rm -rf /\n");
  const JobIdentity id = IdentifyJob(a);
  EXPECT_EQ(id.kind, "slurm");
  EXPECT_EQ(id.id, "slurm-12__2J__rm_-rf_/_");
  a.set_slurm_job_id(std::string(5000, '9'));
  EXPECT_LE(IdentifyJob(a).id.size(), 110u);
  v1::Attribution pod;
  pod.set_pod("vllm-0");
  pod.set_namespace_("inference");
  EXPECT_EQ(IdentifyJob(pod).id, "pod-inference/vllm-0");
  EXPECT_EQ(IdentifyJob(v1::Attribution()).kind, "");
}

// A restart in the middle: the book saved at 120 s and restored into a new daemon continues
// the same jobs; only the windows the restart itself spans are not counted.
TEST(JobBook, RestartLosesNothingButTheRestart) {
  SimRun whole = TwoJobs();
  for (int t = 0; t <= 240; ++t) whole.At(t);
  SimRun first = TwoJobs();
  for (int t = 0; t <= 120; ++t) first.At(t);
  const std::string saved = first.core->jobs().Serialize();
  EXPECT_TRUE(first.core->jobs().dirty());
  SimRun second = TwoJobs();
  ASSERT_TRUE(second.core->jobs().Restore(saved, WallTime(seconds(1767225600 + 121))).ok());
  for (int t = 121; t <= 240; ++t) second.At(t);
  const v1::Report a = Jobs(*whole.core);
  const v1::Report b = Jobs(*second.core);
  ASSERT_EQ(b.jobs_size(), 2);
  for (const char* id : {"slurm-5001", "slurm-5002"}) {
    SCOPED_TRACE(id);
    const v1::JobReport& x = *FindJob(a, id);
    const v1::JobReport& y = *FindJob(b, id);
    EXPECT_EQ(x.number(), y.number());
    EXPECT_EQ(x.start_unix_ns(), y.start_unix_ns());
    EXPECT_EQ(x.member_count(), y.member_count());  // the same processes, not new members
    // One window (120 s -> 121 s) is not counted: 32 cores for one second.
    EXPECT_NEAR(y.core_seconds_held(), x.core_seconds_held() - 32, 1e-6);
    EXPECT_NEAR(y.core_seconds_busy(), x.core_seconds_busy(), 32.0);
    EXPECT_NEAR(y.accounted_seconds(), x.accounted_seconds() - 1, 1e-9);
    // The new daemon's analyzer needs its window before it gives verdicts again.
    double xs = 0, ys = 0;
    for (const v1::VerdictTime& v : x.verdicts()) xs += v.seconds();
    for (const v1::VerdictTime& v : y.verdicts()) ys += v.seconds();
    EXPECT_NEAR(ys, xs, 16);
    // The verdict running across the restart is one episode, as without it.
    for (const v1::VerdictTime& v : x.verdicts()) {
      for (const v1::VerdictTime& w : y.verdicts()) {
        if (w.kind() == v.kind()) {
          EXPECT_EQ(w.episodes(), v.episodes()) << FindingKindName(v.kind());
        }
      }
    }
    EXPECT_EQ(x.executions().completed() > 0, true);
    EXPECT_GT(y.executions().completed(), x.executions().completed() * 9 / 10);
  }
}

// The straggler scenario's job names the slow device, with the time each device was named.
TEST(JobBook, AStragglerVerdictNamesTheSlowDevice) {
  simdev::Scenario scenario = *simdev::LoadScenario("straggler");
  SimRun run(*simdev::FindPreset(scenario.instance), scenario);
  for (int t = 0; t <= 120; ++t) run.At(t);
  const v1::Report jobs = Jobs(*run.core);
  ASSERT_EQ(jobs.jobs_size(), 1);
  const v1::JobReport& job = jobs.jobs(0);
  const v1::VerdictTime* straggler = nullptr;
  for (const v1::VerdictTime& v : job.verdicts()) {
    if (v.kind() == v1::FINDING_KIND_STRAGGLER) straggler = &v;
  }
  ASSERT_NE(straggler, nullptr);
  EXPECT_GT(straggler->seconds(), 30);
  EXPECT_EQ(straggler->subject(), "nd5");
  ASSERT_GE(straggler->subjects_size(), 1);
  double named = 0;
  for (const v1::SubjectTime& s : straggler->subjects()) named += s.seconds();
  EXPECT_NEAR(named, straggler->seconds(), 1e-6);
}

TEST(JobBook, FinishedJobsAreBoundedInCountAndAge) {
  JobBook book({.max_finished = 3, .max_age = std::chrono::hours(1)});
  std::vector<v1::Event> events;
  WallTime wall(seconds(1767225600));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(book.Mark(Mark(std::to_string(100 + i)), wall, events).ok());
    ASSERT_TRUE(book.Mark(Mark(std::to_string(100 + i), true), wall, events).ok());
  }
  EXPECT_EQ(book.finished_count(), 3u);
  google::protobuf::RepeatedPtrField<v1::JobReport> all;
  book.Fill(all);
  EXPECT_EQ(all.Get(0).id(), "slurm-104");  // newest first
  // Age: an hour later, a new mark trims the old ones.
  ASSERT_TRUE(book.Mark(Mark("200"), wall + std::chrono::hours(2), events).ok());
  ASSERT_TRUE(book.Mark(Mark("200", true), wall + std::chrono::hours(2), events).ok());
  EXPECT_EQ(book.finished_count(), 1u);
  // Live jobs: beyond max_live a mark is refused.
  JobBook small({.max_live = 1});
  ASSERT_TRUE(small.Mark(Mark("1"), wall, events).ok());
  EXPECT_FALSE(small.Mark(Mark("2"), wall, events).ok());
}

TEST(JobBook, RestoreRefusesGarbage) {
  JobBook book;
  EXPECT_FALSE(book.Restore("\xff\xff\xff garbage", WallTime(seconds(1))).ok());
  EXPECT_TRUE(book.Restore("", WallTime(seconds(1))).ok());
  EXPECT_EQ(book.live_count(), 0u);
}

// A finished job stays small when persisted: the bound of 4 KiB per job.
TEST(JobBook, PersistedSizePerFinishedJob) {
  SimRun run = TwoJobs();
  run.core->jobs().set_options({.grace = seconds(5)});
  for (int t = 0; t <= 600; t += 1) run.At(t);
  std::vector<v1::Event> events;
  ASSERT_TRUE(
      run.core
          ->MarkJob(Mark("5001", true), MonoTime(seconds(601)), WallTime(seconds(1767225600 + 601)))
          .ok());
  v1::Report jobs = Jobs(*run.core);
  const v1::JobReport* done = FindJob(jobs, "slurm-5001");
  ASSERT_NE(done, nullptr);
  EXPECT_LE(done->ByteSizeLong(), 4096u);
  RecordProperty("persisted_bytes", static_cast<int>(done->ByteSizeLong()));
}

}  // namespace
}  // namespace neuronmon::daemon
