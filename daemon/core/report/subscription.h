// Subscription: what one client asked for, normalised so identical requests compare equal and can
// share one encoded report per window. Each group's period becomes a whole number of base periods
// ("every"): the group is due in the reports whose seq is a multiple of it, and its window reaches
// back that many snapshots. Value type; thread-compatible.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <memory>
#include <string>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"
#include "proto/common/tag_filter.h"
#include "proto/names/names.h"

namespace neuronmon::daemon {

inline constexpr int kGroupSlots = 23;  // v1::Group values are below this

struct SubscriptionKey {
  std::array<std::uint32_t, kGroupSlots> every{};  // 0: not subscribed
  std::string tag_filter;
  auto operator<=>(const SubscriptionKey&) const = default;
};

class Subscription {
 public:
  // Normalises `request`. An empty group list subscribes to every group at the base period.
  // Errors (kInvalidArgument): an unknown group, a period over 1 day, a tag_filter longer than
  // `max_tag_filter_bytes` or not a valid RE2 pattern (see TagFilter).
  // `cache`, when given, supplies (and keeps) the compiled filter.
  static Result<Subscription> FromRequest(
      const v1::Subscribe& request, Nanos base_period,
      std::size_t max_tag_filter_bytes = kDefaultMaxTagFilterBytes,
      TagFilterCache* cache = nullptr);

  const SubscriptionKey& key() const { return key_; }
  bool Subscribed(v1::Group g) const { return key_.every[static_cast<int>(g)] != 0; }
  std::uint32_t Every(v1::Group g) const { return key_.every[static_cast<int>(g)]; }
  bool Due(v1::Group g, std::uint64_t seq) const {
    const std::uint32_t e = Every(g);
    return e != 0 && seq % e == 0;
  }
  bool AnyDue(std::uint64_t seq) const;
  // Subscribe.snapshots: the client records the snapshots too (not part of the key: reports are
  // the same).
  bool snapshots() const { return snapshots_; }
  // True when the runtime's tag passes the filter (RE2, searched anywhere in the tag like Go's
  // MatchString). Results are cached per tag in the filter, which copies of this Subscription
  // share: call from one thread.
  bool Matches(const std::string& tag) const;
  // One line for a Notice: "neuroncore_counters every 1s, memory_used every 5s; tags /llama/".
  std::string Describe(Nanos base_period) const;

 private:
  SubscriptionKey key_;
  std::shared_ptr<const TagFilter> filter_;  // null: every tag
  bool snapshots_ = false;
};

}  // namespace neuronmon::daemon
