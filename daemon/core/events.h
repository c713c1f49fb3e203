// Events: what changed, as it changed (docs/events.md). EventDetector compares each analysis with
// the one before — verdicts per application and for the instance, device health states, hardware
// error counters — and EventLog numbers and keeps what it finds, with the daemon's own events,
// for a bounded count and age, so a client resumes after the last seq it saw. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/analysis/analysis.h"
#include "neuronmon/v1/event.pb.h"
#include "proto/common/clock.h"
#include "proto/common/hardware_errors.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

struct EventLogOptions {
  std::size_t max_events = 10000;           // events.max_retained
  Nanos retention = std::chrono::hours(1);  // events.retention
  bool operator==(const EventLogOptions&) const = default;
};

class EventLog {
 public:
  explicit EventLog(EventLogOptions options = {});

  // Numbers `event` (the next seq), stamps it with `wall` and keeps it; returns the kept event.
  const v1::Event& Add(v1::Event event, MonoTime mono, WallTime wall);
  // Drops events older than the retention at `now`.
  void Expire(MonoTime now);
  // Kept events with seq > `after`, oldest first, at most `limit`.
  std::vector<const v1::Event*> After(std::uint64_t after, std::size_t limit) const;

  std::uint64_t newest_seq() const { return next_seq_ - 1; }
  // The oldest kept event's seq (newest_seq() + 1 when none is kept).
  std::uint64_t oldest_seq() const { return events_.empty() ? next_seq_ : events_.front().seq(); }
  std::size_t size() const { return events_.size(); }
  void set_options(EventLogOptions options) { options_ = options; }

 private:
  EventLogOptions options_;
  std::uint64_t next_seq_ = 1;
  std::deque<v1::Event> events_;
  std::deque<MonoTime> added_;  // when each kept event was added
};

// Finds the events between successive analyses. A subject's first known state is learnt, not a
// change: what held when the daemon started, a runtime's first verdict, a device's first health
// (the daemon's "started" event says where it began). A device's hardware errors are told at most
// once a kHardwareErrorEvery of sample time while they keep growing, each event with the growth
// since the last (so a failing device does not flood the log).
class EventDetector {
 public:
  static constexpr Nanos kHardwareErrorEvery = std::chrono::seconds(60);

  // The events at snapshot `end` (its seq, its runtimes' tags, its devices' hardware errors)
  // given `analysis`, the analyzer's verdicts and device health at `end`.
  std::vector<v1::Event> Detect(const Snapshot& end, const Analysis& analysis);

 private:
  struct DeviceErrors {
    HardwareErrors told;  // the totals at the last event (or when first seen)
    MonoTime told_at;     // that event's sample time
    bool told_once = false;
  };
  std::map<std::uint32_t, v1::FindingKind> verdicts_;  // by pid
  v1::FindingKind instance_ = v1::FINDING_KIND_UNSPECIFIED;
  std::vector<v1::HealthState> health_;  // by device
  std::vector<DeviceErrors> errors_;     // by device
  bool errors_seen_ = false;
  std::uint64_t epoch_ = 0;  // of `errors_`
};

// The daemon's own event: `state` is "started", "stopping", "reloaded", "stale" or "current".
v1::Event DaemonEvent(const std::string& state, const std::string& summary);

// An incident bundle saved at `path` for `subject` (a runtime tag or "instance").
v1::Event IncidentEvent(const std::string& path, const std::string& summary);

}  // namespace neuronmon::daemon
