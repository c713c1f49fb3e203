// ReplaySource: a recording (neuron-monitord's archive, or a --record file) played through the
// daemon's own report code, for the programs' --replay: the Welcome a daemon would send, then, one
// recorded snapshot at a time, the report each subscription gets — as fast as the caller steps.
// The client library depends on no daemon code: programs inject a ReplayOpener
// (client/embedded_simulator.h gives the daemon's). Not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon::client {

struct ReplayRequest {
  std::string path;  // a recording file or an archive directory
  std::string from;  // "2026-12-04T21:30:00Z", "21:30", "+10m" (from the start); "": the start
  std::string to;    // the same forms; "": the end
};

class ReplaySource {
 public:
  virtual ~ReplaySource() = default;
  // As the recording daemon's Welcome, with the inventory at the first snapshot shown.
  virtual v1::Welcome Welcome() const = 0;
  // The subscriptions to build reports for; each gets every group in its first report.
  virtual Status Subscribe(const std::vector<v1::Subscribe>& subscriptions) = 0;
  // The next recorded snapshot: `reports[i]` is subscription i's report (nullopt when none of
  // its groups is due). False at the end (or past `to`).
  virtual bool Step(std::vector<std::optional<v1::Report>>& reports) = 0;
  // Goes back or forward to `wall`; the next Step is the first snapshot at or after it.
  virtual Status Seek(WallTime wall) = 0;
  // The newest snapshot's recorded time, and the recording's first.
  virtual WallTime Time() const = 0;
  virtual WallTime Start() const = 0;
  // At most a minute before the recording's end (where its last stored chunk starts).
  virtual WallTime LastChunk() const = 0;
  // Torn tails and unreadable files met since the last call.
  virtual std::vector<std::string> TakeNotices() = 0;
  // The events recorded with the snapshots stepped since the last call, oldest first.
  virtual std::vector<v1::Event> TakeEvents() { return {}; }
  // "recording /var/lib/.../archive (sim:trn2.48xlarge, ... on host-1)"
  virtual std::string Describe() const = 0;
};

using ReplayOpener =
    std::function<Result<std::unique_ptr<ReplaySource>>(const ReplayRequest& request)>;

}  // namespace neuronmon::client
