// History keeps the most recent snapshots, oldest first, in a bounded ring: appending to a full
// history evicts the oldest. Sequence numbers are assigned by the caller and strictly increase.
// Not thread-safe: the daemon's io_context thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

class History {
 public:
  // REQUIRES: capacity >= 2 (a window needs two snapshots).
  explicit History(std::size_t capacity);

  // Appends `snapshot`. REQUIRES: snapshot.seq > newest_seq().
  void Append(Snapshot snapshot);
  // Changes the capacity, evicting the oldest snapshots if needed.
  void SetCapacity(std::size_t capacity);

  bool empty() const { return ring_.empty(); }
  std::size_t size() const { return ring_.size(); }
  std::size_t capacity() const { return capacity_; }
  // 0 when empty.
  std::uint64_t oldest_seq() const { return ring_.empty() ? 0 : ring_.front().seq; }
  std::uint64_t newest_seq() const { return ring_.empty() ? 0 : ring_.back().seq; }

  // The snapshot with `seq`, or nullptr when it is not retained. Pointers stay valid until the
  // next Append or SetCapacity.
  const Snapshot* Find(std::uint64_t seq) const;
  // The newest snapshot with seq <= `seq`, or the oldest one when all are newer; nullptr if empty.
  const Snapshot* AtOrBefore(std::uint64_t seq) const;
  const Snapshot* newest() const { return ring_.empty() ? nullptr : &ring_.back(); }
  // Copies of the snapshots taken from `from` to `to` (wall time, both included), oldest first.
  std::vector<Snapshot> Between(WallTime from, WallTime to) const;

 private:
  std::size_t capacity_;
  std::deque<Snapshot> ring_;
};

// History capacity for a retention and period: enough snapshots to span the retention.
std::size_t HistoryCapacity(Nanos retention, Nanos period);

}  // namespace neuronmon::daemon
