#include "daemon/core/archive/replay.h"

#include <chrono>
#include <utility>

namespace neuronmon::daemon {
namespace {

// The backend a Replayer's core holds: the core is fed with Append, never read.
class FedBackend : public Backend {
 public:
  explicit FedBackend(std::string description) : description_(std::move(description)) {}
  v1::Inventory Inventory(MonoTime) override { return {}; }
  Snapshot Read(MonoTime) override { return {}; }
  std::string Describe() const override { return description_; }

 private:
  std::string description_;
};

std::string RecordedAs(const archive::ArchiveReader& reader) {
  const v1::ArchiveHeader& h = reader.header();
  std::string out = h.description();
  if (!h.hostname().empty()) out += " on " + h.hostname();
  return out;
}

}  // namespace

// ---- ReplayBackend ----

Result<std::unique_ptr<ReplayBackend>> ReplayBackend::Open(const ReplayOptions& options,
                                                           MonoTime start) {
  Result<std::unique_ptr<archive::ArchiveReader>> reader =
      archive::ArchiveReader::Open(options.path);
  if (!reader.ok()) return reader.status();
  std::unique_ptr<ReplayBackend> b(new ReplayBackend());
  b->options_ = options;
  b->reader_ = std::move(*reader);
  b->from_ = b->reader_->first_wall();
  if (!options.from.empty()) {
    Result<WallTime> from = archive::ParseReplayTime(options.from, b->from_);
    if (!from.ok()) return Status::InvalidArgument("--from: " + from.status().message());
    b->from_ = *from;
  }
  (void)b->reader_->Seek(b->from_);
  b->next_ = b->reader_->Next();
  if (!b->next_) {
    return Status::NotFound(options.path + " holds no snapshot at or after " +
                            archive::FormatUtc(b->from_));
  }
  b->from_ = std::max(b->from_, b->next_->snapshot.wall);
  b->start_ = start;
  return b;
}

void ReplayBackend::Advance(WallTime until) {
  if (!current_ && next_) {
    current_ = std::move(next_);
    next_ = reader_->Next();
  }
  while (next_ && next_->snapshot.wall <= until) {
    current_ = std::move(next_);
    next_ = reader_->Next();
  }
  ended_ = !next_;
}

v1::Inventory ReplayBackend::Inventory(MonoTime) {
  const std::optional<archive::Entry>& e = current_ ? current_ : next_;
  return e ? *e->inventory : v1::Inventory();
}

Snapshot ReplayBackend::Read(MonoTime now) {
  const auto elapsed = std::chrono::duration<double>(now - start_) * options_.speed;
  const WallTime target =
      from_ + std::chrono::duration_cast<WallTime::duration>(std::max(elapsed, elapsed.zero()));
  Advance(target);
  Snapshot s = current_->snapshot;
  if (ended_ && target - s.wall > std::chrono::seconds(2)) {
    s.error = "the recording ended at " + archive::FormatUtc(s.wall);
  }
  return s;
}

std::string ReplayBackend::Describe() const {
  char speed[32];
  std::snprintf(speed, sizeof speed, "%g", options_.speed);
  return "replay of " + options_.path + " from " + archive::FormatUtc(from_) + " at " + speed +
         "x (recorded: " + RecordedAs(*reader_) + ")";
}

// ---- Replayer ----

Replayer::~Replayer() = default;

Result<std::unique_ptr<Replayer>> Replayer::Open(const ReplayerOptions& options) {
  Result<std::unique_ptr<archive::ArchiveReader>> reader =
      archive::ArchiveReader::Open(options.path);
  if (!reader.ok()) return reader.status();
  std::unique_ptr<Replayer> r(new Replayer());
  r->options_ = options;
  r->reader_ = std::move(*reader);
  const WallTime start = r->reader_->first_wall();
  WallTime from = start;
  if (!options.from.empty()) {
    Result<WallTime> parsed = archive::ParseReplayTime(options.from, start);
    if (!parsed.ok()) return Status::InvalidArgument("--from: " + parsed.status().message());
    from = *parsed;
  }
  if (!options.to.empty()) {
    Result<WallTime> parsed = archive::ParseReplayTime(options.to, start);
    if (!parsed.ok()) return Status::InvalidArgument("--to: " + parsed.status().message());
    r->to_ = *parsed;
  }
  if (Status st = r->Prime(from); !st.ok()) return st;
  return r;
}

Status Replayer::Prime(WallTime from) {
  const v1::ArchiveHeader& h = reader_->header();
  const Nanos period =
      h.base_period_ns() > 0 ? Nanos(h.base_period_ns()) : Nanos(std::chrono::seconds(1));
  CoreOptions co;
  co.period = period;
  // Sized in snapshots: a header claiming a short period must not make the history long.
  co.retention = std::min<Nanos>(std::max<Nanos>(std::chrono::minutes(10), 2 * options_.prime),
                                 period * static_cast<std::int64_t>(options_.max_snapshots - 1));
  co.max_history_bytes = options_.max_bytes;
  co.daemon_version = h.daemon_version();
  co.instance_id = h.instance_id();
  core_ = std::make_unique<DaemonCore>(
      co,
      std::make_unique<FedBackend>("replay of " + options_.path +
                                   " (recorded: " + RecordedAs(*reader_) + ")"),
      HostReader());
  first_.assign(subscriptions_.size(), true);
  pending_.reset();
  events_.clear();
  if (Status st = reader_->Seek(from - options_.prime); !st.ok()) return st;
  time_ = from;
  bool numbered = false;
  while (std::optional<archive::Entry> e = reader_->Next()) {
    if (!numbered) {
      core_->StartAtSeq(e->snapshot.seq);
      numbered = true;
    }
    if (e->snapshot.wall >= from) {
      pending_ = std::move(e);
      break;
    }
    Feed(std::move(*e));
  }
  // Jobs count from `from`: the minute primed before it gives the analyzer its window, not the
  // jobs their figures.
  core_->jobs() = JobBook(core_->jobs().options());
  return Status::Ok();
}

std::size_t Replayer::history_capacity() const { return core_->history().capacity(); }

void Replayer::Feed(archive::Entry entry) {
  time_ = entry.snapshot.wall;
  const MonoTime mono = entry.snapshot.mono;
  const WallTime wall = entry.snapshot.wall;
  Reading reading{std::move(entry.snapshot), *entry.inventory, std::move(entry.description),
                  std::nullopt};
  core_->Append(std::move(reading), core_->NextRead().generation, mono, wall);
}

v1::Welcome Replayer::Welcome() const {
  v1::Welcome w = core_->MakeWelcome(MonoTime{});
  if (pending_) *w.mutable_inventory() = *pending_->inventory;
  // The recording's events come with its snapshots (TakeEvents), numbered as recorded.
  w.set_newest_event_seq(0);
  return w;
}

Status Replayer::Subscribe(const std::vector<v1::Subscribe>& subscriptions) {
  std::vector<Subscription> subs;
  for (const v1::Subscribe& request : subscriptions) {
    Result<Subscription> s = Subscription::FromRequest(request, core_->period());
    if (!s.ok()) return s.status();
    subs.push_back(std::move(*s));
  }
  subscriptions_ = std::move(subs);
  first_.assign(subscriptions_.size(), true);
  return Status::Ok();
}

bool Replayer::Step(std::vector<std::optional<v1::Report>>& reports) {
  std::optional<archive::Entry> e = std::move(pending_);
  pending_.reset();
  if (!e) e = reader_->Next();
  if (!e || (to_ && e->snapshot.wall > *to_)) return false;
  for (v1::Event& event : e->events) events_.push_back(std::move(event));
  if (events_.size() > archive::kMaxEntryEvents) {
    events_.erase(events_.begin(), events_.end() - archive::kMaxEntryEvents);
  }
  Feed(std::move(*e));
  reports.assign(subscriptions_.size(), std::nullopt);
  const std::uint64_t seq = core_->history().newest_seq();
  for (std::size_t i = 0; i < subscriptions_.size(); ++i) {
    reports[i] = core_->ReportAt(subscriptions_[i], seq,
                                 first_[i] ? ReportScope::kFirst : ReportScope::kLive);
    if (reports[i]) first_[i] = false;
  }
  return true;
}

Status Replayer::Seek(WallTime wall) { return Prime(wall); }

}  // namespace neuronmon::daemon
