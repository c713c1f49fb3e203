// The job accounting's targets (issue 41; figures in bench/README.md, "Jobs"):
// - its cost per sample on trn2.48xlarge with 16 jobs <= 20 us: JobBook::Update over recorded
//   snapshots of 16 Slurm jobs (one per device, 16 processes), with the analyzer's verdicts;
// - the persisted size per finished job <= 4 KiB: a job of 10 minutes, serialized;
// - neuron-report --replay over one recorded hour <= 2 s: the Replayer stepping an hour of that
//   instance with a GROUP_JOBS subscription, as neuron-report does (the process itself: see the
//   README for the command).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/core/archive/recorder.h"
#include "daemon/core/archive/replay.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/jobs/job_book.h"

namespace {

using namespace neuronmon;
using namespace neuronmon::daemon;
using std::chrono::seconds;

const WallTime kStart = WallTime(seconds(1796112000));

std::string TempDir(const char* name) {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/" + name + "XXXXXX";
  return ::mkdtemp(pattern.data());
}

// 16 Slurm jobs on a trn2.48xlarge, one per device, each a training process.
std::string SixteenJobsScenario() {
  static const std::string path = [] {
    std::string json = R"({"name": "sixteen-jobs", "description": "16 jobs, one per device",
      "instance": "trn2.48xlarge", "runtimes": [)";
    for (int d = 0; d < 16; ++d) {
      json += std::string(d ? "," : "") + R"({"name": "job)" + std::to_string(d) +
              R"(", "tag": "job)" + std::to_string(d) + R"(-rank{rank}", "pid": )" +
              std::to_string(40000 + 100 * d) + R"(, "command": "python3 train.py --job )" +
              std::to_string(d) + R"(", "user": "u)" + std::to_string(d) + R"(", "slurm_job": ")" +
              std::to_string(7000 + d) + R"(", "devices": [)" + std::to_string(d) +
              R"(], "load": "5s", "training": {"parameters": 1.0e9, "tokens_per_step": 16384,
              "input_seconds": )" +
              (d % 4 == 0 ? "1.2, \"input_prefetch\": false" : "0.2") +
              R"(, "collectives": [{"op": "all_reduce", "bytes": 8388608, "count": 16,
              "overlap": 0.8}]}})";
    }
    json += "]}";
    const std::string file = std::filesystem::temp_directory_path().string() + "/sixteen-jobs.json";
    std::ofstream(file) << json;
    return file;
  }();
  return path;
}

struct Run {
  std::vector<Snapshot> snapshots;
  std::vector<Analysis> analyses;
  v1::Inventory inventory;
  std::string description;
};

// `count` seconds of the 16 jobs at 1 Hz, as the daemon keeps them, with its verdicts.
Run Sampled(int count, bool keep) {
  Run run;
  auto backend = MakeBackend({"sim:trn2.48xlarge", SixteenJobsScenario(), 1, 1}, MonoTime{});
  DaemonCore core({seconds(1), seconds(10), "bench"}, std::move(*backend), nullptr);
  for (int i = 0; i < count; ++i) {
    const std::uint64_t seq = core.Sample(MonoTime(seconds(i)), kStart + seconds(i));
    if (keep) {
      run.snapshots.push_back(*core.history().Find(seq));
      run.analyses.push_back(*core.latest_analysis());
    }
  }
  run.inventory = core.inventory();
  run.description = core.Describe();
  return run;
}

void BM_JobBookUpdate16Jobs(benchmark::State& state) {
  static const Run run = Sampled(600, true);
  JobBook book;
  const std::vector<v1::Event> none;
  std::size_t i = 1;
  for (auto _ : state) {
    const std::size_t k = i % run.snapshots.size();
    if (k == 0) {
      // Around again: a new book, as the counters restart with the recording.
      state.PauseTiming();
      book = JobBook();
      state.ResumeTiming();
      ++i;
      continue;
    }
    benchmark::DoNotOptimize(book.Update(&run.snapshots[k - 1], run.snapshots[k], run.inventory,
                                         &run.analyses[k], none));
    ++i;
  }
  state.counters["live_jobs"] = static_cast<double>(book.live_count());
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  book.Fill(jobs);
  std::size_t bytes = 0;
  for (const v1::JobReport& j : jobs) bytes = std::max(bytes, j.ByteSizeLong());
  state.counters["largest_job_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_JobBookUpdate16Jobs)->Unit(benchmark::kMicrosecond)->Iterations(20000);

void BM_ReplayHourJobs(benchmark::State& state) {
  const std::string dir = TempDir("jobs_bench");
  {
    const Run hour = Sampled(3600, true);
    RecorderOptions o;
    o.directory = dir;
    v1::ArchiveHeader h;
    h.set_daemon_version("bench");
    h.set_description(hour.description);
    h.set_base_period_ns(1'000'000'000);
    Recorder recorder(o, h);
    for (const Snapshot& s : hour.snapshots) (void)recorder.Append(s, hour.inventory, "bench");
    recorder.Close();
  }
  std::size_t jobs = 0;
  for (auto _ : state) {
    ReplayerOptions o;
    o.path = dir;
    auto replayer = Replayer::Open(o);
    v1::Subscribe sub;
    sub.add_groups()->set_group(v1::GROUP_JOBS);
    (void)(*replayer)->Subscribe({sub});
    std::vector<std::optional<v1::Report>> reports;
    v1::Report last;
    while ((*replayer)->Step(reports)) {
      if (reports[0]) last = std::move(*reports[0]);
    }
    jobs = static_cast<std::size_t>(last.jobs_size());
  }
  state.counters["jobs"] = static_cast<double>(jobs);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReplayHourJobs)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
