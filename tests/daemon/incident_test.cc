// Incidents: when a verdict other than healthy has held, the tracker declares one incident per
// episode and says when its bundle is due; the bundle is one archive file that replays, appears
// whole or not at all, and the directory stays within its count and size. Synthetic analyses for
// the timing rules, the daemon's own analyzer on a simulated input-bound job end to end. Temp
// directories; nothing sleeps.
#include "daemon/core/archive/incident.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "daemon/core/daemon_core.h"
#include "proto/archive/archive.h"
#include "tests/temp_dir.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const WallTime kStart = WallTime(seconds(1796000000));

// Each test's files, in a directory of their own.
class TempDir : public test_util::TempDir {
 public:
  TempDir() : test_util::TempDir("incident") {}
};

v1::Finding Verdict(v1::FindingKind kind, std::uint32_t pid, WallTime since) {
  v1::Finding f;
  f.set_kind(kind);
  f.set_pid(pid);
  f.set_subject("job" + std::to_string(pid));
  f.set_summary("summary of " + std::to_string(pid));
  f.set_since_unix_ns(ToUnixNanos(since));
  return f;
}

// An analysis where each runtime has one verdict.
Analysis With(std::vector<v1::Finding> verdicts) {
  Analysis a;
  a.instance.set_subject("instance");
  for (v1::Finding& f : verdicts) a.runtimes[f.pid()].push_back(std::move(f));
  return a;
}

IncidentOptions Options() {
  IncidentOptions o;
  o.hold = minutes(2);
  o.hold_errors = seconds(10);
  o.before = minutes(5);
  o.after = minutes(1);
  return o;
}

TEST(IncidentTracker, DeclaresOnceAVerdictHasHeldAndIsDueAfterTheWindow) {
  IncidentTracker t(Options());
  const WallTime since = kStart + seconds(3);
  std::vector<IncidentTracker::Step> steps;
  for (int i = 0; i <= 600; ++i) {
    const WallTime now = kStart + seconds(i);
    Analysis a = i < 3 ? With({Verdict(v1::FINDING_KIND_HEALTHY, 7, kStart)})
                       : With({Verdict(v1::FINDING_KIND_INPUT_BOUND, 7, since)});
    steps.push_back(t.Update(a, 100 + static_cast<std::uint64_t>(i), now));
  }
  int declared = 0, due = 0;
  for (int i = 0; i <= 600; ++i) {
    if (steps[i].declared) {
      ++declared;
      EXPECT_EQ(i, 3 + 120) << "two minutes after the verdict started";
      const v1::Incident& d = *steps[i].declared;
      EXPECT_EQ(d.kind(), v1::FINDING_KIND_INPUT_BOUND);
      EXPECT_EQ(d.pid(), 7u);
      EXPECT_EQ(d.subject(), "job7");
      EXPECT_EQ(d.since_unix_ns(), ToUnixNanos(since));
      EXPECT_EQ(d.declared_seq(), 100u + 123u);
      EXPECT_EQ(d.summary(), "input_bound for 2m on job7 (pid 7): summary of 7");
      ASSERT_EQ(d.findings_size(), 2) << "the instance summary, then the runtime's verdict";
      EXPECT_EQ(d.findings(0).subject(), "instance");
    }
    if (steps[i].due) {
      ++due;
      EXPECT_EQ(i, 123 + 60) << "a minute after the declaration";
      const v1::Incident& d = *steps[i].due;
      EXPECT_EQ(d.window_start_unix_ns(), ToUnixNanos(kStart + seconds(123) - minutes(5)));
      EXPECT_EQ(d.window_end_unix_ns(), ToUnixNanos(kStart + seconds(183)));
      EXPECT_EQ(d.findings_after_size(), 2);
    }
  }
  EXPECT_EQ(declared, 1) << "one incident per episode, however long it lasts";
  EXPECT_EQ(due, 1);
  EXPECT_FALSE(t.pending());
}

TEST(IncidentTracker, ANewEpisodeMayMakeAnotherIncident) {
  IncidentTracker t(Options());
  int declared = 0;
  WallTime since = kStart;
  for (int i = 0; i < 1000; ++i) {
    const WallTime now = kStart + seconds(i);
    // input_bound for 150 s, healthy for 10 s, then input_bound again.
    const bool bad = i < 150 || i >= 160;
    if (i == 160) since = now;
    Analysis a = bad ? With({Verdict(v1::FINDING_KIND_INPUT_BOUND, 7, since)})
                     : With({Verdict(v1::FINDING_KIND_HEALTHY, 7, now)});
    declared += t.Update(a, static_cast<std::uint64_t>(i) + 1, now).declared ? 1 : 0;
  }
  EXPECT_EQ(declared, 2);
}

TEST(IncidentTracker, ErrorsAndHangsNeedOnlyTheirShorterHold) {
  IncidentTracker t(Options());
  std::optional<int> at;
  for (int i = 0; i < 60 && !at; ++i) {
    const WallTime now = kStart + seconds(i);
    if (t.Update(With({Verdict(v1::FINDING_KIND_ERRORS, 9, kStart)}), 1 + i, now).declared) at = i;
  }
  EXPECT_EQ(at, 10);
}

TEST(IncidentTracker, KindsHeldAtOnceMakeOneIncidentNamedByTheWorst) {
  IncidentTracker t(Options());
  IncidentTracker::Step step;
  int declared = 0;
  for (int i = 0; i <= 200; ++i) {
    std::vector<v1::Finding> verdicts = {Verdict(v1::FINDING_KIND_INPUT_BOUND, 1, kStart)};
    if (i >= 30) verdicts.push_back(Verdict(v1::FINDING_KIND_STRAGGLER, 3, kStart + seconds(30)));
    if (i >= 110) verdicts.push_back(Verdict(v1::FINDING_KIND_HANG, 2, kStart + seconds(110)));
    Analysis a = With(std::move(verdicts));
    IncidentTracker::Step s = t.Update(a, 1 + i, kStart + seconds(i));
    declared += s.declared ? 1 : 0;
    if (s.declared) step.declared = s.declared;
    if (s.due) step.due = s.due;
  }
  ASSERT_TRUE(step.declared);
  EXPECT_EQ(declared, 1);
  // At 120 s: input_bound has held 2 min, hang its 10 s; the hang names the bundle.
  EXPECT_EQ(step.declared->kind(), v1::FINDING_KIND_HANG);
  EXPECT_EQ(step.declared->declared_unix_ns(), ToUnixNanos(kStart + seconds(120)));
  ASSERT_TRUE(step.due);
  // The straggler reached its hold (150 s) while the bundle was gathered: it joins it.
  ASSERT_EQ(step.due->also_size(), 2);
  EXPECT_EQ(step.due->also(0), v1::FINDING_KIND_INPUT_BOUND);
  EXPECT_EQ(step.due->also(1), v1::FINDING_KIND_STRAGGLER);
}

TEST(IncidentTracker, AResetDropsWhatWasGathered) {
  IncidentTracker t(Options());
  for (int i = 0; i <= 130; ++i) {
    (void)t.Update(With({Verdict(v1::FINDING_KIND_HBM_BOUND, 1, kStart)}), 1 + i,
                   kStart + seconds(i));
  }
  EXPECT_TRUE(t.pending());
  EXPECT_TRUE(t.Reset());
  EXPECT_FALSE(t.pending());
  // The verdict, seen again after the reset, is a new episode that must hold again.
  for (int i = 131; i < 250; ++i) {
    EXPECT_FALSE(
        t.Update(With({Verdict(v1::FINDING_KIND_HBM_BOUND, 1, kStart)}), 1 + i, kStart + seconds(i))
            .declared);
  }
}

v1::ArchiveHeader Header(const v1::Incident& incident) {
  v1::ArchiveHeader h;
  h.set_daemon_version("test");
  h.set_description("test device");
  h.set_base_period_ns(1'000'000'000);
  h.set_recorder("neuron-monitord incident");
  *h.mutable_incident() = incident;
  h.mutable_incident()->set_id(IncidentId(incident));
  return h;
}

// A simulated input-bound job, sampled by a daemon core; the analyzer's verdicts go to a tracker
// and the due bundle is written and read back.
TEST(IncidentBundle, AnInputBoundJobLeavesOneBundleThatReplays) {
  Result<std::unique_ptr<Backend>> backend =
      MakeBackend({"sim:trn1.32xlarge", "input-bound", 1, 1}, MonoTime(seconds(1000)));
  ASSERT_TRUE(backend.ok());
  DaemonCore core(CoreOptions{seconds(1), minutes(10), "test", 42}, std::move(*backend), nullptr);
  IncidentOptions options = Options();
  options.hold = seconds(30);
  options.before = seconds(40);
  options.after = seconds(20);
  IncidentTracker tracker(options);
  std::optional<v1::Incident> due;
  for (int i = 0; i < 400 && !due; ++i) {
    const WallTime wall = kStart + seconds(i);
    const std::uint64_t seq = core.Sample(MonoTime(seconds(1000 + i)), wall);
    due = tracker.Update(*core.latest_analysis(), seq, wall).due;
  }
  ASSERT_TRUE(due) << "the input-bound verdict never held for 30 s";
  EXPECT_EQ(due->kind(), v1::FINDING_KIND_INPUT_BOUND);
  const auto at = [](std::int64_t ns) {
    return WallTime(std::chrono::duration_cast<WallTime::duration>(Nanos(ns)));
  };
  std::vector<Snapshot> window =
      core.history().Between(at(due->window_start_unix_ns()), at(due->window_end_unix_ns()));
  EXPECT_EQ(window.size(), 61u) << "40 s before the declaration, 20 s after it";
  TempDir dir;
  Result<IncidentWritten> written = WriteIncidentBundle(
      dir.path() + "/incidents", Header(*due), window, core.inventory(), core.Describe(), {});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(std::filesystem::path(written->path).filename().string(),
            IncidentId(*due) + archive::kFileSuffix);
  EXPECT_EQ(written->bytes, std::filesystem::file_size(written->path));
  auto reader = archive::ArchiveReader::Open(written->path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const v1::Incident& read = (*reader)->header().incident();
  EXPECT_EQ(read.kind(), v1::FINDING_KIND_INPUT_BOUND);
  EXPECT_EQ(read.summary(), due->summary());
  ASSERT_GE(read.findings_size(), 2);
  EXPECT_GT(read.findings(1).evidence_size(), 0) << "the verdict comes with its evidence";
  std::size_t n = 0;
  while (auto e = (*reader)->Next()) {
    EXPECT_EQ(e->snapshot.seq, window[n].seq);
    ++n;
  }
  EXPECT_EQ(n, window.size());
  EXPECT_TRUE((*reader)->TakeNotices().empty());
  // Nothing is left aside.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/incidents")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

v1::Incident Declared(int minute, v1::FindingKind kind = v1::FINDING_KIND_INPUT_BOUND) {
  v1::Incident incident;
  incident.set_kind(kind);
  incident.set_declared_unix_ns(ToUnixNanos(kStart + minutes(minute)));
  return incident;
}

TEST(IncidentBundle, TheDirectoryKeepsTheNewestWithinItsLimits) {
  TempDir dir;
  IncidentLimits limits;
  limits.max_count = 3;
  std::vector<std::string> paths;
  for (int i = 0; i < 5; ++i) {
    auto w = WriteIncidentBundle(dir.path(), Header(Declared(i)), {}, {}, "", limits);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    paths.push_back(w->path);
    EXPECT_EQ(w->deleted.size(), i < 3 ? 0u : 1u);
  }
  auto left = archive::ListArchive(dir.path());
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, (std::vector<std::string>{paths[2], paths[3], paths[4]}));
  // A size cap below one bundle keeps only the newest, never deleting the one just written.
  limits.max_bytes = 1;
  auto w = WriteIncidentBundle(dir.path(), Header(Declared(9)), {}, {}, "", limits);
  ASSERT_TRUE(w.ok());
  left = archive::ListArchive(dir.path());
  EXPECT_EQ(*left, std::vector<std::string>{w->path});
  // The same second and kind twice: a second name, nothing overwritten.
  auto again = WriteIncidentBundle(dir.path(), Header(Declared(9)), {}, {}, "", {});
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->path, w->path);
  EXPECT_TRUE(std::filesystem::exists(w->path));
}

// The incidents' pruning deletes only bundles: a recording (the recorder's name) or any other file
// in the directory stays, whatever the limits.
TEST(IncidentBundle, PruningDeletesOnlyBundles) {
  TempDir dir;
  const std::string recording = dir.path() + "/20260101T000000Z-1.nmrec";
  const std::string other = dir.path() + "/20260101T000000Z-Hang.nmrec";
  for (const std::string& f : {recording, other}) std::ofstream(f) << "not a bundle";
  IncidentLimits limits;
  limits.max_count = 1;
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    auto w = WriteIncidentBundle(dir.path(), Header(Declared(i)), {}, {}, "", limits);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    paths.push_back(w->path);
  }
  EXPECT_TRUE(std::filesystem::exists(recording));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_FALSE(std::filesystem::exists(paths[1]));
  EXPECT_TRUE(std::filesystem::exists(paths[2]));
}

TEST(IncidentBundle, AnOversizedHeaderKeepsTheDeclaredVerdict) {
  v1::Incident incident = Declared(0, v1::FINDING_KIND_STRAGGLER);
  incident.set_pid(5);
  *incident.add_findings() = Verdict(v1::FINDING_KIND_HEALTHY, 0, kStart);
  for (std::uint32_t pid = 1; pid <= 40; ++pid) {
    v1::Finding f =
        Verdict(pid == 5 ? v1::FINDING_KIND_STRAGGLER : v1::FINDING_KIND_HEALTHY, pid, kStart);
    f.set_advice(std::string(20000, 'x'));
    *incident.add_findings() = f;
    *incident.add_findings_after() = f;
  }
  TempDir dir;
  IncidentLimits limits;
  limits.max_header_bytes = 64 << 10;
  auto w = WriteIncidentBundle(dir.path(), Header(incident), {}, {}, "", limits);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto index = archive::IndexFile(w->path);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const v1::Incident& read = index->header.incident();
  EXPECT_EQ(read.findings_after_size(), 0);
  ASSERT_GE(read.findings_size(), 2);
  EXPECT_LE(read.findings_size(), 4);
  bool kept = false;
  for (const v1::Finding& f : read.findings()) kept = kept || f.pid() == 5;
  EXPECT_TRUE(kept) << "the verdict that made the incident stays";
}

TEST(IncidentBundle, AnUnwritableDirectoryIsAnErrorAndLeavesNothing) {
  TempDir dir;
  const std::string file = dir.path() + "/not-a-directory";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  auto w = WriteIncidentBundle(file + "/incidents", Header(Declared(0)), {}, {}, "", {});
  EXPECT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("not-a-directory"), std::string::npos)
      << w.status().ToString();
}

}  // namespace
}  // namespace neuronmon::daemon
