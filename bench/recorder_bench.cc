// The flight recorder's targets (issue 19; figures in bench/README.md, "Recorder"):
// - recording costs <= 0.1 % of a core at 1 Hz on trn2.48xlarge: the time Recorder::Append takes
//   per snapshot (encode, compress, write), healthy-training;
// - <= 30 MiB an hour for that instance: the archive's bytes per recorded hour;
// - replaying an hour into neuron-monitor JSON >= 50x real time on one core: Replayer steps and
//   MonitorSink documents (AWS's default config) over one recorded hour;
// - seeking to any minute of a 1 GiB archive <= 100 ms: ArchiveReader::Seek + the first snapshot,
//   at random minutes of an archive filled to 1 GiB (the recorded hour repeated, shifted in time).
// Also: an incident bundle of the default window, its write time and size.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>

#include "daemon/core/archive/incident.h"
#include "daemon/core/archive/recorder.h"
#include "daemon/core/archive/replay.h"
#include "daemon/core/daemon_core.h"
#include "exporter/monitor_config.h"
#include "exporter/monitor_sink.h"
#include "proto/archive/archive.h"

namespace {

using namespace neuronmon;
using namespace neuronmon::daemon;
using std::chrono::seconds;

const WallTime kStart = WallTime(seconds(1796112000));

struct Hour {
  std::vector<Snapshot> snapshots;
  v1::Inventory inventory;
  std::string description;
};

// One hour of trn2.48xlarge healthy-training at 1 Hz, as the daemon keeps it.
const Hour& RecordedHour() {
  static const Hour hour = [] {
    Hour h;
    auto backend = MakeBackend({"sim:trn2.48xlarge", "healthy-training", 1, 1}, MonoTime{});
    DaemonCore core({seconds(1), seconds(10), "bench"}, std::move(*backend),
                    [] { return ReadHost(); });
    for (int i = 0; i < 3600; ++i) {
      const std::uint64_t seq = core.Sample(MonoTime(seconds(i)), kStart + seconds(i));
      h.snapshots.push_back(*core.history().Find(seq));
    }
    h.inventory = core.inventory();
    h.description = core.Describe();
    return h;
  }();
  return hour;
}

std::string TempDir(const char* name) {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/" + name + "XXXXXX";
  return ::mkdtemp(pattern.data());
}

v1::ArchiveHeader Header() {
  v1::ArchiveHeader h;
  h.set_daemon_version("bench");
  h.set_description(RecordedHour().description);
  h.set_base_period_ns(1'000'000'000);
  return h;
}

// Records the hour `repeats` times into `dir`, each repeat an hour later.
std::uint64_t Fill(const std::string& dir, int repeats, std::uint64_t max_bytes = 1ull << 40) {
  const Hour& hour = RecordedHour();
  RecorderOptions o;
  o.directory = dir;
  o.max_bytes = max_bytes;
  o.retention = Nanos::zero();
  Recorder recorder(o, Header());
  for (int r = 0; r < repeats; ++r) {
    for (const Snapshot& s : hour.snapshots) {
      Snapshot shifted = s;
      shifted.wall += std::chrono::hours(r);
      shifted.seq += static_cast<std::uint64_t>(r) * 3600;
      (void)recorder.Append(shifted, hour.inventory, hour.description);
    }
  }
  recorder.Close();
  return recorder.stats().archive_bytes;
}

void BM_RecordSnapshot(benchmark::State& state) {
  const Hour& hour = RecordedHour();
  const std::string dir = TempDir("recorder_bench");
  RecorderOptions o;
  o.directory = dir;
  Recorder recorder(o, Header());
  std::size_t i = 0;
  for (auto _ : state) {
    Snapshot s = hour.snapshots[i % hour.snapshots.size()];
    s.wall += std::chrono::hours(i / hour.snapshots.size());
    benchmark::DoNotOptimize(recorder.Append(s, hour.inventory, hour.description));
    ++i;
  }
  recorder.Close();
  const double per_snapshot =
      static_cast<double>(recorder.stats().bytes_written) / static_cast<double>(i);
  state.counters["bytes_per_snapshot"] = per_snapshot;
  state.counters["MiB_per_hour_1Hz"] = per_snapshot * 3600 / (1 << 20);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_RecordSnapshot)->Unit(benchmark::kMicrosecond)->Iterations(3600);

void BM_ArchiveBytesPerHour(benchmark::State& state) {
  for (auto _ : state) {
    const std::string dir = TempDir("recorder_bench");
    state.counters["MiB_per_hour"] = static_cast<double>(Fill(dir, 1)) / (1 << 20);
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_ArchiveBytesPerHour)->Unit(benchmark::kMillisecond)->Iterations(1);

// An incident bundle with the default window (5 min before, 1 min after: 361 snapshots at 1 Hz):
// the time the daemon's writer thread takes, and the file's size.
void BM_IncidentBundle(benchmark::State& state) {
  const Hour& hour = RecordedHour();
  const std::vector<Snapshot> window(hour.snapshots.begin(), hour.snapshots.begin() + 361);
  v1::ArchiveHeader header = Header();
  v1::Incident& incident = *header.mutable_incident();
  incident.set_kind(v1::FINDING_KIND_INPUT_BOUND);
  incident.set_declared_unix_ns(ToUnixNanos(kStart + std::chrono::minutes(5)));
  incident.set_id(IncidentId(incident));
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    const std::string dir = TempDir("incident_bench");
    auto written = WriteIncidentBundle(dir, header, window, hour.inventory, hour.description, {});
    bytes = written.ok() ? written->bytes : 0;
    std::filesystem::remove_all(dir);
  }
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
}
BENCHMARK(BM_IncidentBundle)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_ReplayHourToJson(benchmark::State& state) {
  const std::string dir = TempDir("recorder_bench");
  Fill(dir, 1);
  std::uint64_t documents = 0, bytes = 0;
  for (auto _ : state) {
    ReplayerOptions o;
    o.path = dir;
    auto replayer = Replayer::Open(o);
    const std::vector<v1::Subscribe> subs =
        exporter::MonitorSubscriptions(exporter::DefaultMonitorConfig());
    (void)(*replayer)->Subscribe(subs);
    exporter::MonitorSink sink({0, 0, true});
    client::Event e;
    e.kind = client::Event::Kind::kReport;
    std::vector<std::optional<v1::Report>> reports;
    while ((*replayer)->Step(reports)) {
      for (std::size_t k = 0; k < reports.size(); ++k) {
        if (!reports[k]) continue;
        e.report = std::move(*reports[k]);
        bytes += sink.Handle(e, k).document.size();
        ++documents;
      }
    }
  }
  state.counters["documents"] = static_cast<double>(documents) / state.iterations();
  state.counters["MiB_json"] = static_cast<double>(bytes) / state.iterations() / (1 << 20);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReplayHourToJson)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SeekInGiBArchive(benchmark::State& state) {
  const std::string dir = TempDir("recorder_bench");
  const std::uint64_t target = 1ull << 30;
  // Repeat the hour until the archive holds 1 GiB.
  const std::uint64_t hour_bytes = Fill(dir + "-probe", 1);
  std::filesystem::remove_all(dir + "-probe");
  const int hours = static_cast<int>(target / hour_bytes + 1);
  const std::uint64_t total = Fill(dir, hours);
  auto reader = archive::ArchiveReader::Open(dir);
  std::mt19937 random(7);
  std::uniform_int_distribution<int> minute(0, hours * 60 - 1);
  double worst = 0;
  for (auto _ : state) {
    const WallTime at = kStart + std::chrono::minutes(minute(random));
    const auto t0 = std::chrono::steady_clock::now();
    (void)(*reader)->Seek(at);
    std::optional<archive::Entry> e = (*reader)->Next();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    worst = std::max(worst, ms);
    if (!e || e->snapshot.wall != at) state.SkipWithError("seek landed elsewhere");
  }
  state.counters["archive_GiB"] = static_cast<double>(total) / (1 << 30);
  state.counters["files"] = static_cast<double>((*reader)->files());
  state.counters["worst_ms"] = worst;
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_SeekInGiBArchive)->Unit(benchmark::kMillisecond)->Iterations(50);

}  // namespace

BENCHMARK_MAIN();
