// IncidentSaver: the daemon's incidents (docs/recorder.md, "Incidents"). After each sample it
// hands the analyzer's verdicts to an IncidentTracker; when an incident is due it copies the
// history around it and writes the bundle (WriteIncidentBundle) on a thread of its own, one at a
// time, with at most four waiting — one refused beyond that is refused before anything is copied.
// A saved bundle is logged, counted in DaemonStats and announced through `announce`. Borrows
// `log` and `stats`, which must outlive it. Runs on the daemon's io_context thread (`post` brings
// a finished write back to it); not thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "daemon/core/archive/incident.h"
#include "daemon/core/config/config.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/stats.h"
#include "daemon/server/log.h"
#include "daemon/server/read_thread.h"

namespace neuronmon::daemon {

class IncidentSaver {
 public:
  using Post = std::function<void(std::function<void()>)>;
  using Announce = std::function<void(const v1::Notice&, const v1::Event&)>;
  IncidentSaver(Post post, Logger& log, DaemonStats& stats, Announce announce);
  ~IncidentSaver();

  // Watches for incidents as `config` says (a change restarts the watch); nothing when
  // `config.enabled` is false or no directory is known (a warning says so).
  void Configure(const IncidentsConfig& config);
  // After a sample of `core` taken at `wall`. A due bundle keeps `config` (ConfigToJson) and the
  // header `make_header` gives.
  void Check(const DaemonCore& core, WallTime wall, const DaemonConfig& config,
             const std::function<v1::ArchiveHeader()>& make_header);
  // The device changed: every episode ends and a pending incident is dropped (its history is
  // gone). Returns whether one was pending.
  bool Reset();

 private:
  void Save(const DaemonCore& core, v1::Incident incident, const DaemonConfig& config,
            v1::ArchiveHeader header);
  void WriteNext();

  Post post_;
  Logger& log_;
  DaemonStats& stats_;
  Announce announce_;
  std::unique_ptr<IncidentTracker> tracker_;  // null: incidents off
  std::string directory_;
  IncidentLimits limits_;
  Nanos after_{0};
  std::unique_ptr<ReadThread> writer_;  // bundles are written here, one at a time
  // Bundles waiting for the writer: the write, and what follows it on this thread.
  std::deque<std::pair<std::function<void()>, ReadThread::Done>> queue_;
};

}  // namespace neuronmon::daemon
