// History: the bounded ring of snapshots and its lookups by seq.
#include "daemon/core/report/history.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

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

TEST(History, FindsAcrossSeqGaps) {
  History h(10);
  for (std::uint64_t i : {1, 2, 7, 8}) h.Append(Seq(i));
  EXPECT_EQ(h.Find(7)->seq, 7u);
  EXPECT_EQ(h.Find(3), nullptr);
  EXPECT_EQ(h.AtOrBefore(5)->seq, 2u);
}

}  // namespace
}  // namespace neuronmon::daemon
