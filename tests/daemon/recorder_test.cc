// The recorder's archive and replays: snapshots survive the file format bit for bit, a replay's
// reports are the live daemon's (same windows, same verdicts), torn tails and full disks are
// handled, and the size cap holds. Simulated devices and temp directories; nothing sleeps.
#include "daemon/core/archive/recorder.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/core/archive/replay.h"
#include "daemon/core/daemon_core.h"
#include "proto/archive/archive.h"
#include "proto/wire/frame_codec.h"
#include "proto/wire/snapshot_codec.h"
#include "tests/daemon/unmeasured_backend.h"
#include "tests/temp_dir.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;

// Each test's files, in a directory of their own.
class TempDir : public test_util::TempDir {
 public:
  TempDir() : test_util::TempDir("recorder") {}
};

const WallTime kWallStart = WallTime(seconds(1796000000));  // 2026-11-30T...
const MonoTime kMonoStart = MonoTime(seconds(1000));

// A daemon core sampling `device`/`scenario` once a second, and the snapshots it keeps.
struct LiveRun {
  explicit LiveRun(const std::string& device = "sim:trn2.48xlarge",
                   const std::string& scenario = "healthy-training",
                   std::unique_ptr<Backend> backend = nullptr) {
    if (backend == nullptr) {
      Result<std::unique_ptr<Backend>> made = MakeBackend({device, scenario, 1, 1}, kMonoStart);
      backend = std::move(*made);
    }
    core = std::make_unique<DaemonCore>(
        CoreOptions{seconds(1), std::chrono::minutes(10), "test", 42}, std::move(backend), nullptr);
  }
  // Samples second `i` (0-based) and returns the snapshot kept.
  const Snapshot& Sample(int i) {
    const std::uint64_t seq = core->Sample(kMonoStart + seconds(i), kWallStart + seconds(i));
    return *core->history().Find(seq);
  }
  v1::ArchiveHeader Header() const {
    v1::ArchiveHeader h;
    h.set_daemon_version("test");
    h.set_description(core->Describe());
    h.set_base_period_ns(1'000'000'000);
    h.set_instance_id(42);
    return h;
  }
  std::unique_ptr<DaemonCore> core;
};

RecorderOptions Rec(const std::string& dir, Nanos segment = std::chrono::minutes(10),
                    std::uint64_t max_bytes = 1ull << 30) {
  RecorderOptions o;
  o.directory = dir;
  o.segment = segment;
  o.max_bytes = max_bytes;
  return o;
}

ReplayerOptions Play(const std::string& path, std::optional<WallTime> from = std::nullopt,
                     std::optional<WallTime> to = std::nullopt) {
  ReplayerOptions o;
  o.path = path;
  if (from) o.from = archive::FormatUtc(*from);
  if (to) o.to = archive::FormatUtc(*to);
  return o;
}

// "" when the report `live` (serialized) equals `replayed`, else what differs.
// With `ignore_since`, findings' since_unix_ns is not compared (a replay started in the middle of a
// verdict knows it only from its priming on).
std::string Difference(const std::string& live, const v1::Report& replayed,
                       bool ignore_since = false) {
  v1::Report expected;
  expected.ParseFromString(live);
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  if (ignore_since) {
    d.IgnoreField(v1::Finding::descriptor()->FindFieldByName("since_unix_ns"));
  }
  d.ReportDifferencesToString(&diff);
  return d.Compare(expected, replayed) ? "" : diff.substr(0, 2000);
}

std::string Bytes(const Snapshot& s) {
  v1::Snapshot p;
  wire::SnapshotToProto(s, p);
  return p.SerializeAsString();
}

TEST(SnapshotCodec, RoundTripsEverySimulatedField) {
  LiveRun run("sim:trn2.48xlarge:lnc=2");
  run.Sample(0);
  const Snapshot& s = run.Sample(30);
  ASSERT_FALSE(s.runtimes.empty());
  ASSERT_FALSE(s.cores[0].physical_busy_ns.empty()) << "lnc=2 has physical sub-cores";
  v1::Snapshot p;
  wire::SnapshotToProto(s, p);
  wire::SnapshotDecoder decoder;
  Result<Snapshot> back = decoder.Decode(p);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(Bytes(*back), Bytes(s));
  EXPECT_EQ(back->wall, s.wall);
  EXPECT_EQ(back->device_time, s.device_time);
  EXPECT_EQ(back->runtimes[0].total_latency, s.runtimes[0].total_latency);
  EXPECT_EQ(back->runtimes[0].collectives[0].latency, s.runtimes[0].collectives[0].latency);
  EXPECT_EQ(back->unmeasured, nullptr);
  EXPECT_FALSE(back->runtimes[0].collective_time_ns.has_value()) << "not written: absent, not 0";
  Snapshot with_time = s;
  with_time.runtimes[0].collective_time_ns = 0;  // a datastore's 0 is a figure
  v1::Snapshot q;
  wire::SnapshotToProto(with_time, q);
  Result<Snapshot> timed = wire::SnapshotDecoder().Decode(q);
  ASSERT_TRUE(timed.ok());
  EXPECT_EQ(timed->runtimes[0].collective_time_ns, std::optional<std::uint64_t>(0));
  // An unchanged memory breakdown is shared with the previous snapshot, as in the live history.
  Result<Snapshot> again = decoder.Decode(p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->runtimes[0].memory.get(), back->runtimes[0].memory.get());
}

TEST(SnapshotCodec, KeepsWhatABackendCouldNotMeasure) {
  auto inner = MakeBackend({"sim:trn1.32xlarge", "healthy-training", 1, 1}, kMonoStart);
  LiveRun run(
      "", "",
      std::make_unique<testing::UnmeasuredBackend>(std::move(*inner), testing::NothingButMemory()));
  const Snapshot& s = run.Sample(0);
  v1::Snapshot p;
  wire::SnapshotToProto(s, p);
  Result<Snapshot> back = wire::SnapshotDecoder().Decode(p);
  ASSERT_TRUE(back.ok());
  ASSERT_NE(back->unmeasured, nullptr);
  EXPECT_EQ(*back->unmeasured, *s.unmeasured);
}

// Before FLOPs had a signal of their own they were measured with the cores' activity: a recording
// of that time (7 reasons) has them unmeasured exactly where core activity is.
TEST(SnapshotCodec, ARecordingFromBeforeTheFlopsSignalTakesCoreActivitysReason) {
  LiveRun run;
  v1::Snapshot p;
  wire::SnapshotToProto(run.Sample(0), p);
  ASSERT_EQ(static_cast<int>(Signal::kFlops), 7);
  for (int k = 0; k < 7; ++k) p.add_unmeasured("");
  p.set_unmeasured(static_cast<int>(Signal::kHbmTraffic), "no HBM traffic counter");
  Result<Snapshot> busy_measured = wire::SnapshotDecoder().Decode(p);
  ASSERT_TRUE(busy_measured.ok()) << busy_measured.status().ToString();
  EXPECT_EQ(busy_measured->UnmeasuredReason(Signal::kFlops), "");
  p.set_unmeasured(static_cast<int>(Signal::kCoreActivity), "no busy-time source");
  Result<Snapshot> busy_unmeasured = wire::SnapshotDecoder().Decode(p);
  ASSERT_TRUE(busy_unmeasured.ok());
  EXPECT_EQ(busy_unmeasured->UnmeasuredReason(Signal::kFlops), "no busy-time source");
  // Written now, the FLOPs' own reason is kept as it is.
  p.add_unmeasured("");
  Result<Snapshot> current = wire::SnapshotDecoder().Decode(p);
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->UnmeasuredReason(Signal::kFlops), "");
}

TEST(SnapshotCodec, RefusesWhatNoDaemonWrites) {
  LiveRun run;
  v1::Snapshot p;
  wire::SnapshotToProto(run.Sample(0), p);
  v1::Snapshot unordered = p;
  unordered.mutable_runtimes()->SwapElements(0, 1);
  EXPECT_FALSE(wire::SnapshotDecoder().Decode(unordered).ok());
  v1::Snapshot repeated = p;
  repeated.mutable_runtimes(0)->mutable_collectives(1)->set_op(v1::COLLECTIVE_OP_ALL_REDUCE);
  EXPECT_FALSE(wire::SnapshotDecoder().Decode(repeated).ok());
  v1::Snapshot unknown = p;
  unknown.mutable_runtimes(0)->mutable_collectives(0)->set_op(static_cast<v1::CollectiveOp>(77));
  EXPECT_FALSE(wire::SnapshotDecoder().Decode(unknown).ok());
}

// Records `seconds_` seconds of `run` into `dir`, returning each second's live report for `subs`.
std::vector<std::vector<std::string>> RecordAndReport(LiveRun& run, Recorder& recorder, int secs,
                                                      const std::vector<Subscription>& subs) {
  std::vector<std::vector<std::string>> live(subs.size());
  for (int i = 0; i < secs; ++i) {
    const Snapshot& s = run.Sample(i);
    EXPECT_TRUE(recorder.Append(s, run.core->inventory(), run.core->Describe()).ok());
    for (std::size_t k = 0; k < subs.size(); ++k) {
      std::optional<v1::Report> r = run.core->ReportAt(subs[k], s.seq, ReportScope::kLive);
      live[k].push_back(r ? r->SerializeAsString() : "");
    }
  }
  recorder.Close();
  return live;
}

std::vector<v1::Subscribe> Requests() {
  v1::Subscribe all;  // every group at the base period
  v1::Subscribe slow;
  for (v1::Group g : {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_MEMORY_USED,
                      v1::GROUP_BOTTLENECK_ANALYSIS, v1::GROUP_COLLECTIVES_STATS}) {
    v1::GroupSubscription* gs = slow.add_groups();
    gs->set_group(g);
    gs->set_period_ns(5'000'000'000);
  }
  slow.set_tag_filter("^1");
  return {all, slow};
}

std::vector<Subscription> Subscriptions() {
  std::vector<Subscription> out;
  for (const v1::Subscribe& r : Requests())
    out.push_back(*Subscription::FromRequest(r, seconds(1)));
  return out;
}

TEST(Replay, ReportsEqualTheLiveDaemonsDocumentForDocument) {
  TempDir dir;
  LiveRun run("sim:trn1.32xlarge", "input-bound");
  Recorder recorder(Rec(dir.path(), std::chrono::minutes(1)), run.Header());
  const auto subs = Subscriptions();
  const auto live = RecordAndReport(run, recorder, 200, subs);
  EXPECT_EQ(recorder.stats().snapshots, 200u);
  EXPECT_GE(archive::ListArchive(dir.path())->size(), 3u) << "a file per minute";

  auto replayer = Replayer::Open(Play(dir.path()));
  ASSERT_TRUE(replayer.ok()) << replayer.status().ToString();
  ASSERT_TRUE((*replayer)->Subscribe(Requests()).ok());
  std::vector<std::optional<v1::Report>> reports;
  int steps = 0, compared = 0;
  bool saw_verdict = false;
  while ((*replayer)->Step(reports)) {
    for (std::size_t k = 0; k < subs.size(); ++k) {
      if (steps == 0 || live[k][steps].empty()) continue;  // the first report carries every group
      ASSERT_TRUE(reports[k].has_value()) << "second " << steps;
      EXPECT_EQ(Difference(live[k][steps], *reports[k]), "")
          << "subscription " << k << " second " << steps;
      ++compared;
      for (const auto& rt : reports[k]->runtimes()) {
        for (const auto& f : rt.findings()) saw_verdict |= f.kind() == v1::FINDING_KIND_INPUT_BOUND;
      }
    }
    ++steps;
  }
  EXPECT_EQ(steps, 200);
  EXPECT_GT(compared, 200);
  EXPECT_TRUE(saw_verdict) << "the replayed analyzer reached the live verdict";
  EXPECT_TRUE((*replayer)->TakeNotices().empty());
}

// neuron-report --replay: the jobs a replay accounts are the live daemon's, figure for figure.
TEST(Replay, AccountsTheSameJobsAsLive) {
  TempDir dir;
  LiveRun run("sim:trn2.48xlarge", "two-jobs");
  Recorder recorder(Rec(dir.path(), std::chrono::minutes(1)), run.Header());
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(recorder.Append(run.Sample(i), run.core->inventory(), run.core->Describe()).ok());
  }
  recorder.Close();
  google::protobuf::RepeatedPtrField<v1::JobReport> live;
  run.core->jobs().Fill(live);
  ASSERT_EQ(live.size(), 2);
  v1::Subscribe jobs;
  jobs.add_groups()->set_group(v1::GROUP_JOBS);
  const auto replayed = [&](std::optional<WallTime> from) {
    auto replayer = Replayer::Open(Play(dir.path(), from));
    EXPECT_TRUE(replayer.ok()) << replayer.status().ToString();
    EXPECT_TRUE((*replayer)->Subscribe({jobs}).ok());
    std::vector<std::optional<v1::Report>> reports;
    v1::Report last;
    while ((*replayer)->Step(reports)) {
      if (reports[0]) last = *reports[0];
    }
    return last;
  };
  const v1::Report whole = replayed(std::nullopt);
  ASSERT_EQ(whole.jobs_size(), 2);
  for (int i = 0; i < 2; ++i) {
    std::string diff;
    google::protobuf::util::MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(d.Compare(live.Get(i), whole.jobs(i))) << live.Get(i).id() << ": " << diff;
  }
  // From the middle: the jobs start there, and hold only what followed.
  const v1::Report part = replayed(kWallStart + seconds(100));
  ASSERT_EQ(part.jobs_size(), 2);
  EXPECT_EQ(part.jobs(0).start_unix_ns(), ToUnixNanos(kWallStart + seconds(100)));
  EXPECT_NEAR(part.jobs(0).accounted_seconds(), 100, 1);
  EXPECT_LT(part.jobs(0).core_seconds_held(), live.Get(0).core_seconds_held() * 0.55);
}

TEST(Replay, ShowsTheEventsRecordedWithTheirSnapshots) {
  TempDir dir;
  LiveRun run("sim:trn1.32xlarge", "ecc-degradation");  // device 3 fails from 3 min
  Recorder recorder(Rec(dir.path(), std::chrono::minutes(1)), run.Header());
  std::vector<std::pair<int, std::string>> recorded;  // (second, event) in order
  std::uint64_t told = 0;
  for (int i = 0; i < 300; ++i) {
    const Snapshot& s = run.Sample(i);
    std::vector<v1::Event> events;
    for (const v1::Event* e : run.core->events().After(told, 100)) {
      events.push_back(*e);
      recorded.emplace_back(i, e->SerializeAsString());
    }
    told = run.core->events().newest_seq();
    ASSERT_TRUE(recorder.Append(s, run.core->inventory(), run.core->Describe(), events).ok());
  }
  recorder.Close();
  ASSERT_GE(recorded.size(), 2u) << "the health change and the hardware errors";

  auto replayer = Replayer::Open(Play(dir.path()));
  ASSERT_TRUE(replayer.ok()) << replayer.status().ToString();
  ASSERT_TRUE((*replayer)->Subscribe(Requests()).ok());
  EXPECT_EQ((*replayer)->Welcome().newest_event_seq(), 0u) << "the recording's come as recorded";
  std::vector<std::optional<v1::Report>> reports;
  std::vector<std::pair<int, std::string>> replayed;
  for (int step = 0; (*replayer)->Step(reports); ++step) {
    for (const v1::Event& e : (*replayer)->TakeEvents()) {
      replayed.emplace_back(step, e.SerializeAsString());
    }
  }
  EXPECT_EQ(replayed, recorded) << "each event, whole, with the snapshot it was seen at";

  // A seek shows the events from the snapshot it lands on, not the minute primed before it.
  const int at = recorded.back().first;
  ASSERT_TRUE((*replayer)->Seek(kWallStart + seconds(at)).ok());
  ASSERT_TRUE((*replayer)->Step(reports));
  std::size_t here = 0;
  for (const auto& [second, bytes] : recorded) here += second == at ? 1 : 0;
  EXPECT_EQ((*replayer)->TakeEvents().size(), here);
}

TEST(Replay, StartsAnywhereWithTheLiveDaemonsWindowsAndVerdicts) {
  TempDir dir;
  LiveRun run("sim:trn2.48xlarge", "collective-bound");
  Recorder recorder(Rec(dir.path(), std::chrono::minutes(2)), run.Header());
  const auto subs = Subscriptions();
  const auto live = RecordAndReport(run, recorder, 400, subs);
  const int from = 250;
  auto replayer =
      Replayer::Open(Play(dir.path(), kWallStart + seconds(from), kWallStart + seconds(300)));
  ASSERT_TRUE(replayer.ok()) << replayer.status().ToString();
  ASSERT_TRUE((*replayer)->Subscribe(Requests()).ok());
  std::vector<std::optional<v1::Report>> reports;
  int i = from;
  while ((*replayer)->Step(reports)) {
    EXPECT_EQ((*replayer)->time(), kWallStart + seconds(i));
    if (i > from && !live[0][i].empty()) {
      EXPECT_EQ(Difference(live[0][i], *reports[0], true), "") << "second " << i;
      for (const auto& rt : reports[0]->runtimes()) {
        for (const auto& f : rt.findings()) {
          EXPECT_LE(f.since_unix_ns(), ToUnixNanos(kWallStart + seconds(from)));
        }
      }
    }
    ++i;
  }
  EXPECT_EQ(i, 301) << "stops at --to";
  // Seeking back gives the same reports again.
  ASSERT_TRUE((*replayer)->Seek(kWallStart + seconds(100)).ok());
  ASSERT_TRUE((*replayer)->Step(reports));
  ASSERT_TRUE((*replayer)->Step(reports));
  EXPECT_EQ((*replayer)->time(), kWallStart + seconds(101));
  EXPECT_EQ(Difference(live[0][101], *reports[0], true), "");
}

TEST(Replay, BackendServesTheRecordingAtItsSpeed) {
  TempDir dir;
  LiveRun run;
  Recorder recorder(Rec(dir.path()), run.Header());
  RecordAndReport(run, recorder, 60, {});
  ReplayOptions options;
  options.path = dir.path();
  options.from = "+10s";
  options.speed = 4;
  auto backend = ReplayBackend::Open(options, MonoTime(seconds(5)));
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Read(MonoTime(seconds(5))).wall, kWallStart + seconds(10));
  const Snapshot s = (*backend)->Read(MonoTime(seconds(7)));
  EXPECT_EQ(s.wall, kWallStart + seconds(18)) << "2 s at 4x";
  EXPECT_EQ(Bytes(s), Bytes(*run.core->history().Find(19)));
  EXPECT_TRUE(s.error.empty());
  const Snapshot end = (*backend)->Read(MonoTime(seconds(100)));
  EXPECT_EQ(end.wall, kWallStart + seconds(59));
  EXPECT_NE(end.error.find("the recording ended at"), std::string::npos) << end.error;
  EXPECT_NE((*backend)->Describe().find("replay of"), std::string::npos);
}

// The bodies of the frames in `bytes`.
std::vector<v1::ArchiveRecord::BodyCase> Bodies(const std::string& bytes) {
  std::vector<v1::ArchiveRecord::BodyCase> out;
  wire::FrameDecoder decoder(wire::kDefaultOutboundMaxFrame);
  std::string_view in(bytes);
  v1::Envelope e;
  while (!in.empty() && decoder.Decode(in, e) == wire::FrameDecoder::Outcome::kFrame) {
    out.push_back(e.record().body_case());
  }
  return out;
}

TEST(RecordFrames, AClientsFirstCarryTheInventoryLaterOnesOnlyTheSnapshot) {
  LiveRun run;
  run.Sample(0);
  using B = v1::ArchiveRecord::BodyCase;
  const auto first = run.core->RecordFrames(true);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(Bodies(*first), (std::vector<B>{B::kInventory, B::kDescription, B::kSnapshot}));
  EXPECT_EQ(run.core->RecordFrames(true).get(), first.get()) << "encoded once per snapshot";
  run.Sample(1);
  EXPECT_EQ(Bodies(*run.core->RecordFrames(false)), (std::vector<B>{B::kSnapshot}))
      << "the inventory did not change";
  EXPECT_EQ(Bodies(*run.core->RecordFrames(true)),
            (std::vector<B>{B::kInventory, B::kDescription, B::kSnapshot}));
  // The snapshot in the frame is the one the history keeps.
  wire::FrameDecoder decoder(wire::kDefaultOutboundMaxFrame);
  const auto delta = run.core->RecordFrames(false);
  std::string_view in(*delta);
  v1::Envelope e;
  ASSERT_EQ(decoder.Decode(in, e), wire::FrameDecoder::Outcome::kFrame);
  Result<Snapshot> s = wire::SnapshotDecoder().Decode(e.record().snapshot());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Bytes(*s), Bytes(*run.core->history().Find(2)));
}

// A recording may come from anyone: a header claiming a period no daemon samples at (1 ns made a
// replay take 541 MB for an 18.6 MB file; above INT64_MAX it turned negative) is refused, naming
// the bounds, before anything is sized from it.
TEST(Archive, AHeaderClaimingAnImpossiblePeriodIsRefused) {
  TempDir dir;
  LiveRun run;
  // A one-snapshot recording whose header claims `period`.
  const auto recording = [&](std::uint64_t period) {
    const std::string path = dir.path() + "/" + std::to_string(period) + ".nmrec";
    v1::ArchiveHeader header = run.Header();
    header.set_base_period_ns(period);
    auto writer = archive::ArchiveWriter::Create(path, header);
    EXPECT_TRUE(writer.ok());
    if (writer.ok()) {
      EXPECT_TRUE((*writer)->Append(run.Sample(0), run.core->inventory(), "d").ok());
      EXPECT_TRUE((*writer)->Close().ok());
    }
    return path;
  };
  for (std::uint64_t period : {std::uint64_t{1}, std::uint64_t{9'999'999},
                               std::uint64_t{3'600'000'000'001}, ~std::uint64_t{0}}) {
    const std::string path = recording(period);
    auto reader = archive::ArchiveReader::Open(path);
    ASSERT_FALSE(reader.ok()) << period;
    EXPECT_NE(reader.status().message().find("a recording's is 10ms to 1h"), std::string::npos)
        << reader.status().message();
    EXPECT_FALSE(Replayer::Open(Play(path)).ok()) << period;
  }
  for (std::uint64_t period : {std::uint64_t{10'000'000}, std::uint64_t{3'600'000'000'000}}) {
    EXPECT_TRUE(archive::ArchiveReader::Open(recording(period)).ok()) << period;
  }
  // The replay's memory is sized in snapshots, not from the period the header claims: 10 ms
  // would have made 60,001 for ten minutes.
  ReplayerOptions o = Play(recording(10'000'001));
  auto replayer = Replayer::Open(o);
  ASSERT_TRUE(replayer.ok()) << replayer.status().ToString();
  EXPECT_EQ((*replayer)->history_capacity(), 1200u);
  o.max_snapshots = 50;
  replayer = Replayer::Open(o);
  ASSERT_TRUE(replayer.ok());
  EXPECT_EQ((*replayer)->history_capacity(), 50u);
  o = Play(recording(1'000'000'000));  // a second: ten minutes fit
  replayer = Replayer::Open(o);
  ASSERT_TRUE(replayer.ok());
  EXPECT_EQ((*replayer)->history_capacity(), 601u);
}

TEST(Archive, ATornTailLosesOnlyTheRecordItCuts) {
  TempDir dir;
  LiveRun run;
  const std::string path = dir.path() + "/one.nmrec";
  auto writer = archive::ArchiveWriter::Create(path, run.Header());
  ASSERT_TRUE(writer.ok());
  std::vector<std::uint64_t> sizes;  // file size after each append
  for (int i = 0; i < 90; ++i) {
    ASSERT_TRUE((*writer)->Append(run.Sample(i), run.core->inventory(), "d").ok());
    sizes.push_back((*writer)->bytes());
  }
  writer->reset();  // killed: the open chunk is never ended
  // Cut the file as a kill mid-write would, at every byte of the last records' writes and some.
  const std::string full = path + ".full";
  std::filesystem::copy_file(path, full);
  for (std::uint64_t cut :
       {sizes[89] - 1, sizes[88] + 1, sizes[75] + 7, sizes[60] - 3, sizes[59], sizes[10] + 100}) {
    std::filesystem::copy_file(full, path, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(path, cut);
    auto reader = archive::ArchiveReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    std::size_t n = 0;
    while (auto e = (*reader)->Next()) {
      EXPECT_EQ(e->snapshot.wall, kWallStart + seconds(static_cast<int>(n)));
      ++n;
    }
    std::size_t whole = 0;
    while (whole < sizes.size() && sizes[whole] <= cut) ++whole;
    EXPECT_EQ(n, whole) << "cut at " << cut;
    if (cut != sizes[59]) {
      EXPECT_FALSE((*reader)->TakeNotices().empty()) << "a torn tail is reported, cut " << cut;
    }
  }
}

TEST(Archive, ParsesTheTimesUsersGive) {
  const WallTime start = WallTime(seconds(1796112000));  // 2026-12-01T08:00:00Z
  EXPECT_EQ(archive::FormatUtc(start), "2026-12-01T08:00:00Z");
  EXPECT_EQ(*archive::ParseReplayTime("2026-12-01T09:30:00Z", start), start + seconds(5400));
  EXPECT_EQ(*archive::ParseReplayTime("2026-12-01 09:30", start), start + seconds(5400));
  EXPECT_EQ(*archive::ParseReplayTime("09:30", start), start + seconds(5400));
  EXPECT_EQ(*archive::ParseReplayTime("+90s", start), start + seconds(90));
  EXPECT_FALSE(archive::ParseReplayTime("yesterday", start).ok());
  EXPECT_FALSE(archive::ParseReplayTime("+soon", start).ok());
}

TEST(Recorder, KeepsTheArchiveUnderItsCap) {
  TempDir dir;
  LiveRun run;
  Recorder recorder(Rec(dir.path(), std::chrono::minutes(1), 400 << 10), run.Header());
  RecordAndReport(run, recorder, 900, {});
  std::uint64_t total = 0;
  Result<std::vector<std::string>> files = archive::ListArchive(dir.path());
  ASSERT_TRUE(files.ok());
  for (const std::string& f : *files) total += std::filesystem::file_size(f);
  EXPECT_EQ(total, recorder.stats().archive_bytes);
  EXPECT_LE(total, (400u << 10) + recorder.stats().bytes_written / 15) << "cap plus one file";
  EXPECT_GT(recorder.stats().files_deleted, 0u);
  // What is left replays from its oldest file on.
  auto reader = archive::ArchiveReader::Open(dir.path());
  ASSERT_TRUE(reader.ok());
  EXPECT_GT((*reader)->first_wall(), kWallStart);
}

// A directory shared with incident bundles, or holding anyone's .nmrec file: the recorder's pruning
// deletes only the files it names itself, however far over its cap the others are.
TEST(Recorder, PruningDeletesOnlyItsOwnFiles) {
  TempDir dir;
  const std::string incident = dir.path() + "/20260101T000000Z-hang.nmrec";
  const std::string foreign = dir.path() + "/20260101T000000Z-mine.nmrec";
  const std::string other = dir.path() + "/keep.nmrec";
  for (const std::string& f : {incident, foreign, other}) {
    std::ofstream(f) << std::string(1 << 20, 'x');
  }
  LiveRun run;
  Recorder recorder(Rec(dir.path(), std::chrono::minutes(1), 400 << 10), run.Header());
  RecordAndReport(run, recorder, 300, {});
  EXPECT_GT(recorder.stats().files_deleted, 0u);
  for (const std::string& f : {incident, foreign, other}) {
    EXPECT_TRUE(std::filesystem::exists(f)) << f;
  }
}

TEST(Recorder, AFullDiskStopsRecordingOnceAndResumesLater) {
  TempDir dir;
  LiveRun run;
  RecorderOptions options = Rec(dir.path());
  options.retry = std::chrono::seconds(30);
  Recorder recorder(options, run.Header());
  ASSERT_TRUE(recorder.Append(run.Sample(0), run.core->inventory(), "d").ok());
  // Files may not grow past their size now: writes fail as on a full disk.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ignore, &old);
  rlimit saved{};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  rlimit tight = saved;
  tight.rlim_cur = recorder.stats().archive_bytes + 16;
  ::setrlimit(RLIMIT_FSIZE, &tight);
  int errors = 0;
  for (int i = 1; i < 20; ++i) {
    errors += !recorder.Append(run.Sample(i), run.core->inventory(), "d").ok();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &old, nullptr);
  EXPECT_EQ(errors, 1) << "one error per episode";
  EXPECT_FALSE(recorder.stats().active);
  EXPECT_EQ(recorder.stats().failures, 1u) << "no retry within 30 s";
  for (int i = 20; i < 40; ++i) {
    EXPECT_TRUE(recorder.Append(run.Sample(i), run.core->inventory(), "d").ok());
  }
  EXPECT_TRUE(recorder.stats().active) << "a new file once the retry is due";
  recorder.Close();
  auto reader = archive::ArchiveReader::Open(dir.path());
  ASSERT_TRUE(reader.ok());
  std::vector<WallTime> walls;
  while (auto e = (*reader)->Next()) walls.push_back(e->snapshot.wall);
  ASSERT_FALSE(walls.empty());
  EXPECT_EQ(walls.front(), kWallStart);
  EXPECT_EQ(walls.back(), kWallStart + seconds(39));
}

}  // namespace
}  // namespace neuronmon::daemon
