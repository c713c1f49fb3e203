// Incidents (docs/recorder.md, "Incidents"): when a runtime's verdict other than healthy holds for
// a while, the daemon saves the minutes around it as one archive file — an incident bundle — for
// whoever debugs the job. IncidentTracker decides when (pure: it reads only the analyses and the
// snapshots' wall times it is given); WriteIncidentBundle and PruneIncidents do the file I/O, which
// the daemon runs off its io thread. Not thread-safe.
//
// An episode of a verdict kind lasts while any runtime has that verdict. Once it has lasted `hold`
// (errors and hang: `hold_errors`) an incident is declared, at most once per episode; `after`
// later its bundle is due, holding the snapshots from `before` the declaration to then. A kind
// whose hold is reached while a bundle is being gathered joins that bundle (Incident.also).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/analysis/analyzer.h"
#include "neuronmon/v1/archive.pb.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

struct IncidentOptions {
  Nanos hold = std::chrono::minutes(2);
  Nanos hold_errors = std::chrono::seconds(10);
  Nanos before = std::chrono::minutes(5);
  Nanos after = std::chrono::minutes(1);
  bool operator==(const IncidentOptions&) const = default;
};

class IncidentTracker {
 public:
  explicit IncidentTracker(IncidentOptions options) : options_(options) {}

  struct Step {
    // An incident declared at this snapshot (log it): kind, subject, since, summary, findings.
    std::optional<v1::Incident> declared;
    // The pending incident whose `after` has passed at this snapshot: save the snapshots from
    // window_start_unix_ns to window_end_unix_ns (this one). findings_after are set; id and
    // config are the caller's.
    std::optional<v1::Incident> due;
  };
  // The verdicts of the snapshot `seq` taken at `wall`.
  Step Update(const Analysis& analysis, std::uint64_t seq, WallTime wall);
  // The device changed (a reload): every episode ends and a pending incident is dropped (its
  // history is gone). Returns whether one was pending.
  bool Reset();

  bool pending() const { return pending_.has_value(); }
  const IncidentOptions& options() const { return options_; }

 private:
  struct Episode {
    std::int64_t since_ns = 0;
    bool declared = false;
  };
  Nanos HoldOf(v1::FindingKind kind) const;

  IncidentOptions options_;
  std::map<int, Episode> episodes_;  // by v1::FindingKind
  std::optional<v1::Incident> pending_;
};

// "20261205T051500Z-input_bound": the name (without .nmrec) of an incident declared at `wall`.
std::string IncidentId(const v1::Incident& incident);

struct IncidentLimits {
  std::uint64_t max_count = 100;
  std::uint64_t max_bytes = 256ull << 20;
  // The ArchiveHeader (incident, findings and config) at most: findings_after and then the other
  // runtimes' findings are left out beyond it. Below the reader's 1 MiB.
  std::size_t max_header_bytes = 512 << 10;
  bool operator==(const IncidentLimits&) const = default;
};

struct IncidentWritten {
  std::string path;
  std::uint64_t bytes = 0;
  std::vector<std::string> deleted;  // older bundles removed to stay within the limits
};

// Writes `snapshots` (oldest first) with `header` (whose incident names the bundle) as one archive
// file `directory`/<id>.nmrec (creating the directory, mode 0750); the file appears whole or not at
// all (written aside, synced, renamed). Then removes the oldest bundles beyond `limits`, never the
// new one.
Result<IncidentWritten> WriteIncidentBundle(const std::string& directory, v1::ArchiveHeader header,
                                            const std::vector<Snapshot>& snapshots,
                                            const v1::Inventory& inventory,
                                            const std::string& description,
                                            const IncidentLimits& limits);

}  // namespace neuronmon::daemon
