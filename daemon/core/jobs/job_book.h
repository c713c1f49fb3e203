// JobBook: the job accounting (docs/jobs.md). Each sample, the window from the previous snapshot
// to the newest — the base period every report is built from — is added to the jobs whose
// processes ran in it: held and busy NeuronCore-seconds, FLOPs, memory peaks, collective time,
// executions and errors, hardware events on their devices, and the time under each verdict the
// analyzer gave. A job is the attribution's job: a Slurm job, else a Kubernetes pod, else a
// container, else the runtimes that share a command line and start together, else one runtime.
// It starts when its first process is seen (or when marked, `neuron-report --start`) and ends
// when its last has been gone for `grace` (or when marked, `--stop`). Finished jobs are kept,
// bounded in count and age, and the whole book round-trips through Serialize/Restore so that a
// daemon restart loses nothing. Pure: time comes with each call. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/core/analysis/analysis.h"
#include "neuronmon/v1/event.pb.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

struct JobOptions {
  Nanos grace = std::chrono::seconds(30);      // jobs.grace: a job ends when its last process is
                                               // gone this long
  std::size_t max_finished = 200;              // jobs.max_finished: finished jobs kept
  Nanos max_age = std::chrono::hours(24 * 7);  // jobs.max_age: finished jobs older are dropped
  std::size_t max_live = 256;  // jobs.max_live: jobs accounted at once; more are not tracked
  // Runtimes without a Slurm job, pod or container that share a command line are one job (a
  // torchrun launch) when they appear within this of its first.
  Nanos launch_window = std::chrono::seconds(10);
  bool operator==(const JobOptions&) const = default;
};

// An explicit start or end (neuron-report --start/--stop JOB, a Slurm Prolog/Epilog).
struct JobMark {
  std::string job;  // a Slurm job id ("4242", "4242_7") or a job's id or number
  bool stop = false;
  std::optional<std::uint32_t> uid;  // the asking user's; nullopt: root (may mark any job)
};

class JobBook {
 public:
  explicit JobBook(JobOptions options = {}) : options_(options) {}

  void set_options(const JobOptions& options) { options_ = options; }
  const JobOptions& options() const { return options_; }

  // Adds the window `prev` -> `now` (null prev: the first snapshot, nothing to add but the
  // processes seen). `events` are those the sample gave (hardware and health events on a job's
  // devices are kept with it). Returns the job events to log (started, ended).
  std::vector<v1::Event> Update(const Snapshot* prev, const Snapshot& now,
                                const v1::Inventory& inventory, const Analysis* analysis,
                                const std::vector<v1::Event>& events);
  // Marks a job started or ended at `wall`; the events it gives are appended to `out`. Refused:
  // a stop of an unknown job, a user who is not the job's (its processes' uid).
  Status Mark(const JobMark& mark, WallTime wall, std::vector<v1::Event>& out);

  // Every job: live ones first (oldest first), then finished ones (newest first).
  void Fill(google::protobuf::RepeatedPtrField<v1::JobReport>& out) const;
  std::size_t live_count() const { return live_.size(); }
  std::size_t finished_count() const { return finished_.size(); }
  // Process samples accounted to no job because max_live jobs were live.
  std::uint64_t untracked() const { return untracked_; }
  // Jobs ended so far (a change says one ended since: time to save).
  std::uint64_t ended() const { return ended_; }
  // Whether anything changed since the last MarkSaved().
  bool dirty() const { return dirty_; }
  void MarkSaved() { dirty_ = false; }

  // The book as a v1::JobArchive (persisted state), and back: live jobs continue (their members
  // are matched again by pid and start time), finished ones stay finished.
  std::string Serialize() const;
  Status Restore(const std::string& bytes, WallTime now);

 private:
  struct Live {
    v1::JobReport report;
    WallTime first_seen;
    std::string key;  // identity (kind + id, and the command for a launch)
    // Its processes at the previous sample and at this one (pid -> start time), whether or not
    // the members list had room for them.
    std::unordered_map<std::uint32_t, std::uint64_t> present, seen_now;
  };

  Live& Open(const std::string& key, const v1::Process* process, WallTime wall, bool marked);
  void Close(std::size_t index, WallTime wall, bool marked, std::vector<v1::Event>& out);
  void Trim(WallTime wall);

  JobOptions options_;
  std::vector<Live> live_;              // oldest first
  std::deque<v1::JobReport> finished_;  // newest first
  std::uint64_t next_number_ = 1;
  std::uint64_t untracked_ = 0;
  std::uint64_t ended_ = 0;
  // Processes of jobs stopped by a mark, for the grace period: pid -> (start time, until).
  std::map<std::uint32_t, std::pair<std::uint64_t, WallTime>> stopped_;
  bool dirty_ = false;
};

// The job a process belongs to: {kind, id}, e.g. {"slurm", "slurm-4242"}; a launch or a process
// has kind "" (JobBook groups those by command line and start).
struct JobIdentity {
  std::string kind;
  std::string id;
};
JobIdentity IdentifyJob(const v1::Attribution& attribution);

}  // namespace neuronmon::daemon
