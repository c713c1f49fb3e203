// Replaying a recording (proto/archive) through the daemon's own code, so that a replay's reports,
// verdicts and JSON are the ones the live daemon made:
// - ReplayBackend is a Backend whose reads return the recorded snapshots, paced by the daemon's
//   clock at `speed` (neuron-monitord --replay serves a recording as if live).
// - Replayer drives a DaemonCore over a recording as fast as its caller asks, yielding the report
//   each subscription gets at each recorded snapshot (neuron-monitor/neuron-top/neuron-ls
//   --replay). This header is, with server/embedded_daemon.h, the only part of the daemon that
//   clients may include. Neither is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/core/backend.h"
#include "daemon/core/daemon_core.h"
#include "neuronmon/v1/envelope.pb.h"
#include "proto/archive/archive.h"

namespace neuronmon::daemon {

struct ReplayOptions {
  std::string path;  // a recording file, or a directory archive
  std::string from;  // archive::ParseReplayTime's forms; "": the recording's start
  double speed = 1;  // recorded seconds per second
};

class ReplayBackend : public Backend {
 public:
  // Opens the recording; the first read returns the snapshot at `from`, and time runs from
  // `start` at `speed`.
  static Result<std::unique_ptr<ReplayBackend>> Open(const ReplayOptions& options, MonoTime start);

  v1::Inventory Inventory(MonoTime now) override;
  // The newest recorded snapshot at the replay's time; after the recording's end, the last one
  // with the error "the recording ended at ...".
  Snapshot Read(MonoTime now) override;
  // "replay of PATH from 2026-12-04T21:30:00Z at 1x (recorded: sim:trn2.48xlarge, ...)"
  std::string Describe() const override;

 private:
  ReplayBackend() = default;
  void Advance(WallTime until);

  ReplayOptions options_;
  std::unique_ptr<archive::ArchiveReader> reader_;
  MonoTime start_;
  WallTime from_;
  std::optional<archive::Entry> current_;
  std::optional<archive::Entry> next_;
  bool ended_ = false;
};

struct ReplayerOptions {
  std::string path;
  std::string from, to;  // archive::ParseReplayTime's forms; "": the whole recording
  // Snapshots before `from` fed to the analyzer and the windows first, without reports, so the
  // first reports and verdicts are those of the live daemon.
  Nanos prime = std::chrono::minutes(1);
  // The replay's memory, in snapshots kept for windows (whatever period the recording's header
  // claims) and in bytes (as the daemon's limits.max_history_bytes).
  std::size_t max_snapshots = 1200;
  std::uint64_t max_bytes = std::uint64_t{128} << 20;
};

class Replayer {
 public:
  static Result<std::unique_ptr<Replayer>> Open(const ReplayerOptions& options);
  ~Replayer();

  // As a daemon's Welcome, with the inventory at the first snapshot shown.
  v1::Welcome Welcome() const;
  // The subscriptions reports are built for; each gets every group at its first report.
  Status Subscribe(const std::vector<v1::Subscribe>& subscriptions);
  // Takes the next recorded snapshot; `reports[i]` is subscription i's report at it (nullopt when
  // none of its groups is due). False at the end of the recording or past `to`.
  bool Step(std::vector<std::optional<v1::Report>>& reports);
  // Back to `wall` (primed again): for seeking in a replay.
  Status Seek(WallTime wall);
  // The newest snapshot's recorded time (the recording's start before the first Step).
  WallTime time() const { return time_; }
  WallTime start() const { return reader_->first_wall(); }
  // Where the recording's last minute starts.
  WallTime last_chunk() const { return reader_->LastChunkWall(); }
  std::vector<std::string> TakeNotices() { return reader_->TakeNotices(); }
  // The events recorded with the snapshots stepped since the last call (docs/events.md), oldest
  // first; at most archive::kMaxEntryEvents.
  std::vector<v1::Event> TakeEvents() { return std::exchange(events_, {}); }
  const v1::ArchiveHeader& header() const { return reader_->header(); }
  // Snapshots the replay keeps for its windows (ReplayerOptions::max_snapshots at most).
  std::size_t history_capacity() const;

 private:
  Replayer() = default;
  Status Prime(WallTime from);
  void Feed(archive::Entry entry);

  ReplayerOptions options_;
  std::optional<WallTime> to_;
  std::unique_ptr<archive::ArchiveReader> reader_;
  std::unique_ptr<DaemonCore> core_;
  std::vector<Subscription> subscriptions_;
  std::vector<bool> first_;
  std::optional<archive::Entry> pending_;  // read ahead by Prime: the first to report
  std::vector<v1::Event> events_;
  WallTime time_;
};

}  // namespace neuronmon::daemon
