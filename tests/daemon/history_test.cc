// History: the bounded ring of snapshots and its lookups by seq.
#include "daemon/core/report/history.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;

Snapshot Seq(std::uint64_t seq) {
  Snapshot s;
  s.seq = seq;
  s.device_time = seconds(static_cast<int>(seq));
  return s;
}

TEST(History, BoundedRingOldestFirst) {
  History h(3);
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.AtOrBefore(5), nullptr);
  for (std::uint64_t i = 1; i <= 5; ++i) h.Append(Seq(i));
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.oldest_seq(), 3u);
  EXPECT_EQ(h.newest_seq(), 5u);
  EXPECT_EQ(h.Find(2), nullptr);
  EXPECT_EQ(h.Find(4)->seq, 4u);
  EXPECT_EQ(h.AtOrBefore(1)->seq, 3u);  // older than retained: the oldest
  EXPECT_EQ(h.AtOrBefore(9)->seq, 5u);
  h.SetCapacity(2);
  EXPECT_EQ(h.oldest_seq(), 4u);
  EXPECT_EQ(HistoryCapacity(std::chrono::minutes(10), seconds(1)), 601u);
}

// Snapshots whose runtimes suddenly multiply (a source flooding new pids) cannot grow the history
// past its byte budget while the daemon runs: the oldest go, counted; a memory breakdown shared
// by many snapshots counts once.
TEST(History, StaysWithinItsByteBudgetWhileRunning) {
  const auto with_runtimes = [](std::uint64_t seq, std::uint32_t runtimes,
                                std::shared_ptr<const RuntimeMemory> memory) {
    Snapshot s = Seq(seq);
    for (std::uint32_t i = 0; i < runtimes; ++i) {
      RuntimeSample r;
      r.pid = static_cast<std::uint32_t>(seq * 10000 + i);
      r.tag = "rank-" + std::to_string(r.pid);
      r.memory = memory;
      s.runtimes.push_back(std::move(r));
    }
    return s;
  };
  auto shared = std::make_shared<RuntimeMemory>();
  shared->cores.resize(64);
  const std::size_t one = OwnBytes(with_runtimes(1, 2, shared)) + MemoryBytes(*shared);
  History h(600, one * 10);
  for (std::uint64_t i = 1; i <= 9; ++i) h.Append(with_runtimes(i, 2, shared));
  EXPECT_EQ(h.size(), 9u);  // the shared breakdown counts once: well within ten
  EXPECT_EQ(h.evicted_over_bytes(), 0u);
  EXPECT_LT(h.bytes(), one * 10);
  // A flood: 50 runtimes a snapshot, each with a breakdown of its own (about 25 of the small
  // snapshots' bytes each): the history keeps what fits, never fewer than two.
  const auto flood = [&](std::uint64_t i) {
    auto memory = std::make_shared<RuntimeMemory>();
    memory->cores.resize(8);
    return with_runtimes(i, 50, memory);
  };
  const std::size_t flooded = OwnBytes(flood(0)) + 50 * MemoryBytes(*flood(0).runtimes[0].memory);
  for (std::uint64_t i = 10; i <= 40; ++i) {
    h.Append(flood(i));
    EXPECT_LE(h.bytes(), std::max(one * 10, 2 * flooded)) << i;
    EXPECT_GE(h.size(), 2u);
  }
  EXPECT_EQ(h.size(), 2u);
  EXPECT_GT(h.evicted_over_bytes(), 0u);
  EXPECT_EQ(h.newest_seq(), 40u);
  // Unbounded: nothing is dropped for bytes.
  History unbounded(600);
  for (std::uint64_t i = 1; i <= 40; ++i) unbounded.Append(with_runtimes(i, 500, nullptr));
  EXPECT_EQ(unbounded.size(), 40u);
  EXPECT_EQ(unbounded.evicted_over_bytes(), 0u);
}

TEST(History, FindsAcrossSeqGaps) {
  History h(10);
  for (std::uint64_t i : {1, 2, 7, 8}) h.Append(Seq(i));
  EXPECT_EQ(h.Find(7)->seq, 7u);
  EXPECT_EQ(h.Find(3), nullptr);
  EXPECT_EQ(h.AtOrBefore(5)->seq, 2u);
}

}  // namespace
}  // namespace neuronmon::daemon
