// DaemonCore: the daemon without its sockets. It samples the backend when told to, keeps the
// history, and turns subscriptions into reports — encoded once per window per distinct
// subscription and shared by every client that asked for the same thing. It never reads a clock or
// touches a socket: daemon/server drives it from its timers, tests from a ManualClock.
// Not thread-safe: one owner (the io_context thread).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "daemon/core/analysis/analyzer.h"
#include "daemon/core/backend.h"
#include "daemon/core/events.h"
#include "daemon/core/host_reader.h"
#include "daemon/core/jobs/job_book.h"
#include "daemon/core/report/history.h"
#include "daemon/core/report/subscription.h"
#include "neuronmon/v1/envelope.pb.h"

namespace neuronmon::daemon {

struct CoreOptions {
  Nanos period = std::chrono::seconds(1);
  Nanos retention = std::chrono::minutes(10);
  std::string daemon_version;
  std::uint64_t instance_id = 0;  // Welcome.instance_id
  // The history's byte budget (limits.max_history_bytes); 0: none. History::evicted_over_bytes
  // counts what it dropped.
  std::uint64_t max_history_bytes = 0;
};

// Which groups a report built from the history carries.
enum class ReportScope {
  kFirst,   // every subscribed group, due or not: the first report after a Subscribe
  kLive,    // the groups due at its seq, as live clients received them
  kReplay,  // as kLive, marked `replay` (a resuming client's catch-up)
};

// What a sample reads from the backend and the host: the part of a sample that may block (a real
// host's sysfs files, neuron-monitor's pipe, /proc), which daemon/server runs on its own thread.
struct Reading {
  Snapshot snapshot;  // the backend's, with the host sample
  v1::Inventory inventory;
  std::string description;             // the backend's Describe() at that read
  std::optional<SourceStats> sources;  // the backend's Sources() after that read
};

// A read to run off the io thread: the backend (shared, so a reload cannot free it under a read
// in flight), the host reader, and the backend's generation, which tells Append whether the
// reading is still wanted.
struct ReadJob {
  std::shared_ptr<Backend> backend;
  HostReader host;
  std::uint64_t generation = 0;
  Reading Run(MonoTime now) const;
  // Backend::AfterRead, once Run's reading is handed over.
  void AfterRead() const { backend->AfterRead(); }
};

// Adjusts reports after they are built (tests use it to stand in for parts of the pipeline).
using ReportAnnotator = std::function<void(const Subscription&, v1::Report&)>;

class DaemonCore {
 public:
  DaemonCore(CoreOptions options, std::unique_ptr<Backend> backend, HostReader host);

  // Reads the backend and the host, appends the snapshot and returns its seq.
  std::uint64_t Sample(MonoTime now, WallTime wall);
  // The same in two steps, for a server that reads on another thread: NextRead() on this thread,
  // Run() on any (one at a time per backend), then Append() here. Append returns the new seq, or
  // 0 and keeps nothing when the backend was replaced since NextRead().
  ReadJob NextRead() const { return {backend_, host_, generation_}; }
  std::uint64_t Append(Reading reading, std::uint64_t generation, MonoTime now, WallTime wall);

  // Numbers the first snapshot `seq` instead of 1 (a replay takes the recorded numbering, so
  // groups fall due where they did live). Only before the first snapshot; ignored after.
  void StartAtSeq(std::uint64_t seq);

  v1::Welcome MakeWelcome(MonoTime now) const;
  const v1::Inventory& inventory() const { return inventory_; }

  // The encoded frame of the live report for `sub` at the newest snapshot, shared between callers
  // with equal subscriptions; nullptr when none of its groups is due. Errors (frame over 16 MiB)
  // are logged by the caller through `last_error()` and yield nullptr.
  std::shared_ptr<const std::string> LiveFrame(const Subscription& sub);
  // The newest snapshot as encoded ArchiveRecord frames for clients that record (Subscribe.
  // snapshots): `full` starts with the inventory and the description (a client's first), else
  // they come only when they changed since the previous snapshot. Shared between callers.
  std::shared_ptr<const std::string> RecordFrames(bool full);

  // The report for `sub` ending at retained snapshot `seq`, each group's window reaching back its
  // own period (or to the oldest retained snapshot), with the groups `scope` says. nullopt when
  // `seq` is not retained or (kLive, kReplay) nothing is due at it.
  std::optional<v1::Report> ReportAt(const Subscription& sub, std::uint64_t seq,
                                     ReportScope scope) const;

  const History& history() const { return history_; }
  Nanos period() const { return options_.period; }
  std::uint64_t instance_id() const { return options_.instance_id; }
  Nanos retention() const { return options_.retention; }
  // The backend's description as of its newest reading (or its start).
  const std::string& Describe() const { return description_; }
  // The backend's Sources() at the last read appended.
  const std::optional<SourceStats>& sources() const { return sources_; }
  const std::string& last_error() const { return last_error_; }

  // Reload: a new period, retention and history byte budget take effect from the next sample.
  void Reconfigure(Nanos period, Nanos retention, std::uint64_t max_history_bytes);
  // Snapshots dropped from the history to keep within max_history_bytes, over every backend.
  std::uint64_t history_evicted() const {
    return history_evicted_before_ + history_.evicted_over_bytes();
  }
  // Reload with a new device or scenario: the history restarts (seq keeps increasing). A read of
  // the old backend still in flight is dropped by Append.
  void ReplaceBackend(std::unique_ptr<Backend> backend, MonoTime now);
  void SetAnnotator(ReportAnnotator annotator) { annotator_ = std::move(annotator); }
  // The analyzer's verdicts at retained snapshot `seq` (null when not retained), and the newest.
  const Analysis* AnalysisAt(std::uint64_t seq) const;
  const Analysis* latest_analysis() const;
  const Analyzer& analyzer() const { return analyzer_; }
  // What changed, as it changed (events.h): each Append adds the changes its analysis shows; the
  // daemon adds its own (started, stopping, reloaded, stale, current) and saved incidents.
  const EventLog& events() const { return events_; }
  const v1::Event& AddEvent(v1::Event event, MonoTime now, WallTime wall);
  void SetEventOptions(EventLogOptions options) { events_.set_options(options); }
  // The job accounting (jobs/job_book.h): each Append adds its window; reports subscribed to
  // GROUP_JOBS carry every job as of their snapshot's sample.
  JobBook& jobs() { return jobs_; }
  const JobBook& jobs() const { return jobs_; }
  // A job's explicit start or end (neuron-report --start/--stop); its events are logged.
  Status MarkJob(const JobMark& mark, MonoTime now, WallTime wall);

 private:
  v1::Report Build(const Subscription& sub, const Snapshot& end, bool all_groups,
                   bool replay) const;

  CoreOptions options_;
  std::shared_ptr<Backend> backend_;
  std::uint64_t generation_ = 1;  // of backend_; each ReplaceBackend adds one
  std::string description_;
  std::optional<SourceStats> sources_;
  bool have_inventory_ = false;  // inventory_ is backend_'s
  HostReader host_;
  std::uint64_t history_evicted_before_ = 0;  // by the histories of earlier backends
  History history_;
  v1::Inventory inventory_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t history_floor_ = 1;  // first seq of the current backend
  std::map<SubscriptionKey, std::shared_ptr<const std::string>> frames_;  // newest seq only
  // RecordFrames of the newest seq ([0] delta, [1] full), and what the previous ones said.
  std::array<std::shared_ptr<const std::string>, 2> record_frames_;
  std::string record_inventory_;
  std::string record_description_;
  ReportAnnotator annotator_;
  Analyzer analyzer_;
  // The analysis at each retained snapshot, oldest first, trimmed with the history.
  std::deque<std::pair<std::uint64_t, std::shared_ptr<const Analysis>>> analyses_;
  EventLog events_;
  EventDetector event_detector_;
  JobBook jobs_;
  std::string last_error_;
};

}  // namespace neuronmon::daemon
