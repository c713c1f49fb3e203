#include "daemon/core/report/history.h"

#include <algorithm>
#include <cassert>

namespace neuronmon::daemon {

History::History(std::size_t capacity, std::size_t max_bytes)
    : capacity_(std::max<std::size_t>(2, capacity)), max_bytes_(max_bytes) {}

void History::Count(const Snapshot& s, int sign) {
  const std::size_t own = OwnBytes(s);
  bytes_ = sign > 0 ? bytes_ + own : bytes_ - own;
  for (const RuntimeSample& r : s.runtimes) {
    if (r.memory == nullptr) continue;
    auto& [references, bytes] = shared_[r.memory.get()];
    if (sign > 0) {
      if (references++ == 0) {
        bytes = MemoryBytes(*r.memory);
        bytes_ += bytes;
      }
    } else if (--references == 0) {
      bytes_ -= bytes;
      shared_.erase(r.memory.get());
    }
  }
}

void History::PopOldest() {
  Count(ring_.front(), -1);
  ring_.pop_front();
}

void History::Append(Snapshot snapshot) {
  assert(ring_.empty() || snapshot.seq > ring_.back().seq);
  Count(snapshot, +1);
  ring_.push_back(std::move(snapshot));
  while (ring_.size() > capacity_) PopOldest();
  while (max_bytes_ != 0 && bytes_ > max_bytes_ && ring_.size() > 2) {
    PopOldest();
    ++evicted_over_bytes_;
  }
}

void History::SetCapacity(std::size_t capacity) {
  capacity_ = std::max<std::size_t>(2, capacity);
  while (ring_.size() > capacity_) PopOldest();
}

const Snapshot* History::Find(std::uint64_t seq) const {
  // Sequence numbers are consecutive except across a backend restart, so index first, then search.
  if (ring_.empty() || seq < ring_.front().seq || seq > ring_.back().seq) return nullptr;
  const std::size_t guess = static_cast<std::size_t>(seq - ring_.front().seq);
  if (guess < ring_.size() && ring_[guess].seq == seq) return &ring_[guess];
  auto it = std::lower_bound(ring_.begin(), ring_.end(), seq,
                             [](const Snapshot& s, std::uint64_t v) { return s.seq < v; });
  return it != ring_.end() && it->seq == seq ? &*it : nullptr;
}

const Snapshot* History::AtOrBefore(std::uint64_t seq) const {
  if (ring_.empty()) return nullptr;
  auto it = std::upper_bound(ring_.begin(), ring_.end(), seq,
                             [](std::uint64_t v, const Snapshot& s) { return v < s.seq; });
  if (it == ring_.begin()) return &ring_.front();
  return &*(it - 1);
}

std::size_t HistoryCapacity(Nanos retention, Nanos period) {
  return static_cast<std::size_t>(retention / period) + 1;
}

std::vector<Snapshot> History::Between(WallTime from, WallTime to) const {
  std::vector<Snapshot> out;
  for (const Snapshot& s : ring_) {
    if (s.wall >= from && s.wall <= to) out.push_back(s);
  }
  return out;
}

}  // namespace neuronmon::daemon
