#include "daemon/core/daemon_core.h"

#include <algorithm>

#include "daemon/core/report/report_builder.h"
#include "daemon/core/stats.h"
#include "proto/wire/frame_codec.h"
#include "proto/wire/snapshot_codec.h"

namespace neuronmon::daemon {

DaemonCore::DaemonCore(CoreOptions options, std::unique_ptr<Backend> backend, HostReader host)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      description_(backend_->Describe()),
      host_(std::move(host)),
      history_(HistoryCapacity(options_.retention, options_.period),
               static_cast<std::size_t>(options_.max_history_bytes)) {}

Reading ReadJob::Run(MonoTime now) const {
  Reading r;
  r.snapshot = backend->Read(now);
  if (host) r.snapshot.host = host();
  r.inventory = backend->Inventory(now);
  r.description = backend->Describe();
  r.sources = backend->Sources();
  return r;
}

std::uint64_t DaemonCore::Sample(MonoTime now, WallTime wall) {
  return Append(NextRead().Run(now), generation_, now, wall);
}

std::uint64_t DaemonCore::Append(Reading reading, std::uint64_t generation, MonoTime now,
                                 WallTime wall) {
  if (generation != generation_) return 0;
  Snapshot& s = reading.snapshot;
  s.seq = next_seq_++;
  s.mono = now;
  if (s.wall == WallTime{}) s.wall = wall;  // a replay's backend keeps the recorded time
  inventory_ = std::move(reading.inventory);
  have_inventory_ = true;
  description_ = std::move(reading.description);
  sources_ = std::move(reading.sources);
  history_.Append(std::move(s));
  analyzer_.Update(history_, inventory_);
  analyses_.emplace_back(history_.newest_seq(),
                         std::make_shared<const Analysis>(analyzer_.analysis()));
  while (!analyses_.empty() && analyses_.front().first < history_.oldest_seq())
    analyses_.pop_front();
  const Snapshot& newest = *history_.newest();
  std::vector<v1::Event> detected = event_detector_.Detect(newest, analyzer_.analysis());
  const Snapshot* previous = newest.seq > history_floor_ ? history_.Find(newest.seq - 1) : nullptr;
  std::vector<v1::Event> job_events =
      jobs_.Update(previous, newest, inventory_, &analyzer_.analysis(), detected);
  for (v1::Event& e : detected) events_.Add(std::move(e), now, newest.wall);
  for (v1::Event& e : job_events) events_.Add(std::move(e), now, newest.wall);
  events_.Expire(now);
  frames_.clear();
  record_frames_ = {};
  return history_.newest_seq();
}

Status DaemonCore::MarkJob(const JobMark& mark, MonoTime now, WallTime wall) {
  std::vector<v1::Event> marked;
  Status st = jobs_.Mark(mark, wall, marked);
  for (v1::Event& e : marked) {
    e.set_sample_seq(history_.newest_seq());
    AddEvent(std::move(e), now, wall);
  }
  return st;
}

const v1::Event& DaemonCore::AddEvent(v1::Event event, MonoTime now, WallTime wall) {
  events_.Expire(now);
  return events_.Add(std::move(event), now, wall);
}

std::shared_ptr<const std::string> DaemonCore::RecordFrames(bool full) {
  const Snapshot* newest = history_.Find(history_.newest_seq());
  if (newest == nullptr) return nullptr;
  if (record_frames_[0] == nullptr) {
    // Once per snapshot: the delta (what changed) and the full form.
    const std::string inventory = inventory_.SerializeAsString();
    const bool inventory_changed = inventory != record_inventory_;
    const bool description_changed = description_ != record_description_;
    record_inventory_ = inventory;
    record_description_ = description_;
    v1::Envelope e;
    std::string head, changed, snapshot;
    e.mutable_record()->mutable_inventory()->ParseFromString(inventory);
    (void)wire::AppendFrame(e, head);
    const std::size_t inventory_end = head.size();
    e.mutable_record()->set_description(description_);
    (void)wire::AppendFrame(e, head);
    if (inventory_changed) changed.append(head, 0, inventory_end);
    if (description_changed) changed.append(head, inventory_end, std::string::npos);
    wire::SnapshotToProto(*newest, *e.mutable_record()->mutable_snapshot());
    if (Status st = wire::AppendFrame(e, snapshot); !st.ok()) {
      last_error_ = "snapshot frame for recording clients: " + st.message();
      return nullptr;
    }
    record_frames_[0] = std::make_shared<const std::string>(changed + snapshot);
    record_frames_[1] = std::make_shared<const std::string>(head + snapshot);
  }
  return record_frames_[full ? 1 : 0];
}

void DaemonCore::StartAtSeq(std::uint64_t seq) {
  if (history_.newest_seq() == 0 && seq > 0) next_seq_ = history_floor_ = seq;
}

const Analysis* DaemonCore::AnalysisAt(std::uint64_t seq) const {
  auto it = std::lower_bound(analyses_.begin(), analyses_.end(), seq,
                             [](const auto& entry, std::uint64_t s) { return entry.first < s; });
  return it != analyses_.end() && it->first == seq ? it->second.get() : nullptr;
}

const Analysis* DaemonCore::latest_analysis() const {
  return analyses_.empty() ? nullptr : analyses_.back().second.get();
}

v1::Welcome DaemonCore::MakeWelcome(MonoTime now) const {
  v1::Welcome w;
  w.set_protocol_version(1);
  w.set_daemon_version(options_.daemon_version);
  *w.mutable_inventory() = have_inventory_ ? inventory_ : backend_->Inventory(now);
  w.set_base_period_ns(static_cast<std::uint64_t>(options_.period.count()));
  w.set_oldest_seq(history_.oldest_seq());
  w.set_newest_seq(history_.newest_seq());
  w.set_retention_ns(static_cast<std::uint64_t>(options_.retention.count()));
  w.set_instance_id(options_.instance_id);
  w.set_newest_event_seq(events_.newest_seq());
  return w;
}

v1::Report DaemonCore::Build(const Subscription& sub, const Snapshot& end, bool all_groups,
                             bool replay) const {
  ReportInput in;
  in.inventory = &inventory_;
  in.end = &end;
  in.subscription = &sub;
  in.replay = replay;
  bool jobs_due = false;
  for (v1::Group g : AllGroups()) {
    if (!sub.Subscribed(g) || (!all_groups && !sub.Due(g, end.seq))) continue;
    if (g == v1::GROUP_JOBS) {
      jobs_due = true;
      continue;
    }
    std::uint64_t back = sub.Every(g);
    // A host summary is compared across hosts whose steps last seconds: it spans at least the
    // analyzer's window, whatever its period, so it agrees with the host's verdict.
    if (g == v1::GROUP_HOST_SUMMARY) {
      back = std::max<std::uint64_t>(
          back, static_cast<std::uint64_t>(analyzer_.thresholds().window /
                                           std::max(Nanos(1), options_.period)));
    }
    const std::uint64_t from = end.seq > back ? end.seq - back : 0;
    const Snapshot* start = history_.AtOrBefore(std::max(from, history_floor_));
    in.groups.push_back({g, start != nullptr ? start : &end});
  }
  v1::Report report = BuildReport(in);
  if (jobs_due) {
    // The jobs as of the newest sample: the book keeps no history of its own.
    jobs_.Fill(*report.mutable_jobs());
    report.add_groups(v1::GROUP_JOBS);
  }
  const bool findings_due =
      std::any_of(in.groups.begin(), in.groups.end(), [](const GroupWindow& g) {
        return g.group == v1::GROUP_BOTTLENECK_ANALYSIS || g.group == v1::GROUP_HOST_SUMMARY;
      });
  if (findings_due) {
    if (const Analysis* analysis = AnalysisAt(end.seq)) {
      for (v1::RuntimeReport& r : *report.mutable_runtimes()) {
        auto it = analysis->runtimes.find(r.pid());
        if (it != analysis->runtimes.end()) {
          for (const v1::Finding& f : it->second) *r.add_findings() = f;
        }
      }
      // Before the first evaluation there is no verdict for the instance yet.
      if (analysis->instance.kind() != v1::FINDING_KIND_UNSPECIFIED) {
        *report.add_findings() = analysis->instance;
        for (const v1::Finding& f : analysis->allocations) *report.add_findings() = f;
      }
    }
  }
  if (annotator_) annotator_(sub, report);
  return report;
}

std::shared_ptr<const std::string> DaemonCore::LiveFrame(const Subscription& sub) {
  const Snapshot* end = history_.newest();
  if (end == nullptr || !sub.AnyDue(end->seq)) return nullptr;
  auto it = frames_.find(sub.key());
  if (it != frames_.end()) return it->second;
  v1::Envelope envelope;
  *envelope.mutable_report() = Build(sub, *end, /*all_groups=*/false, /*replay=*/false);
  Result<std::string> frame = wire::EncodeFrame(envelope);
  if (!frame.ok()) {
    last_error_ =
        "report for seq " + std::to_string(end->seq) + " not sent: " + frame.status().message();
    frames_.emplace(sub.key(), nullptr);
    return nullptr;
  }
  auto shared = std::make_shared<const std::string>(std::move(*frame));
  frames_.emplace(sub.key(), shared);
  return shared;
}

std::optional<v1::Report> DaemonCore::ReportAt(const Subscription& sub, std::uint64_t seq,
                                               ReportScope scope) const {
  const Snapshot* end = history_.Find(seq);
  const bool all_groups = scope == ReportScope::kFirst;
  if (end == nullptr || (!all_groups && !sub.AnyDue(seq))) return std::nullopt;
  return Build(sub, *end, all_groups, scope == ReportScope::kReplay);
}

void DaemonCore::Reconfigure(Nanos period, Nanos retention, std::uint64_t max_history_bytes) {
  options_.period = period;
  options_.retention = retention;
  options_.max_history_bytes = max_history_bytes;
  history_.SetCapacity(HistoryCapacity(retention, period));
  history_.SetMaxBytes(static_cast<std::size_t>(max_history_bytes));
  frames_.clear();
}

void DaemonCore::ReplaceBackend(std::unique_ptr<Backend> backend, MonoTime now) {
  backend_ = std::move(backend);
  ++generation_;
  history_evicted_before_ += history_.evicted_over_bytes();
  history_ = History(HistoryCapacity(options_.retention, options_.period),
                     static_cast<std::size_t>(options_.max_history_bytes));
  history_floor_ = next_seq_;
  inventory_ = backend_->Inventory(now);
  have_inventory_ = true;
  description_ = backend_->Describe();
  analyzer_.Reset();
  analyses_.clear();
  event_detector_ = EventDetector();  // the new backend's state is learnt, not a change
  frames_.clear();
}

}  // namespace neuronmon::daemon

namespace neuronmon::daemon {

const char* TransportName(Transport t) {
  switch (t) {
    case Transport::kUnix:
      return "unix";
    case Transport::kTcp:
      return "tcp";
    case Transport::kEmbedded:
      return "embedded";
  }
  return "unknown";
}

}  // namespace neuronmon::daemon
