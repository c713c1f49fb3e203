// History keeps the most recent snapshots, oldest first, in a bounded ring: appending to a full
// history evicts the oldest. It is bounded in bytes too: snapshots whose runtimes suddenly
// multiply (a source flooding new pids) cannot grow it past max_bytes, counted as each snapshot's
// own bytes plus each shared memory breakdown once; over it, the oldest are evicted (at least two
// are kept) and counted. Sequence numbers are assigned by the caller and strictly increase.
// Not thread-safe: the daemon's io_context thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

class History {
 public:
  // REQUIRES: capacity >= 2 (a window needs two snapshots). max_bytes 0: no byte bound.
  explicit History(std::size_t capacity, std::size_t max_bytes = 0);

  // Appends `snapshot`. REQUIRES: snapshot.seq > newest_seq().
  void Append(Snapshot snapshot);
  // Changes the capacity, evicting the oldest snapshots if needed.
  void SetCapacity(std::size_t capacity);
  // Changes the byte bound (0: none); takes effect at the next Append.
  void SetMaxBytes(std::size_t max_bytes) { max_bytes_ = max_bytes; }
  // The retained snapshots' bytes, as the byte bound counts them.
  std::size_t bytes() const { return bytes_; }
  // Snapshots evicted to keep within max_bytes (not because of the capacity), since construction.
  std::uint64_t evicted_over_bytes() const { return evicted_over_bytes_; }

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
  void PopOldest();
  // Adds (+1) or removes (-1) `s`'s bytes: its own, and each memory breakdown it shares once.
  void Count(const Snapshot& s, int sign);

  std::size_t capacity_;
  std::size_t max_bytes_;
  std::deque<Snapshot> ring_;
  std::size_t bytes_ = 0;
  // References to each shared memory breakdown, and its bytes.
  std::unordered_map<const void*, std::pair<std::size_t, std::size_t>> shared_;
  std::uint64_t evicted_over_bytes_ = 0;
};

// History capacity for a retention and period: enough snapshots to span the retention.
std::size_t HistoryCapacity(Nanos retention, Nanos period);

}  // namespace neuronmon::daemon
