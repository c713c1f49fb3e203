#include "daemon/core/report/subscription.h"

#include "proto/common/duration.h"

namespace neuronmon::daemon {

Result<Subscription> Subscription::FromRequest(const v1::Subscribe& request, Nanos base_period,
                                               std::size_t max_tag_filter_bytes,
                                               TagFilterCache* cache) {
  Subscription s;
  const auto base = static_cast<std::uint64_t>(base_period.count());
  if (request.groups().empty()) {
    // Every group but the cluster view's summary and the jobs, which are asked for by name.
    for (v1::Group g : AllGroups()) {
      if (!IsNamedOnlyGroup(g)) s.key_.every[static_cast<int>(g)] = 1;
    }
  }
  for (const v1::GroupSubscription& g : request.groups()) {
    const int index = static_cast<int>(g.group());
    if (index <= 0 || index >= kGroupSlots || std::string(GroupName(g.group())) == "unknown") {
      return Status::InvalidArgument("unknown group " + std::to_string(index));
    }
    if (g.period_ns() > 86'400'000'000'000ULL) {
      return Status::InvalidArgument(std::string(GroupName(g.group())) + ": period over 1 day");
    }
    // Round up to a whole number of base periods; 0 means the base period.
    const std::uint64_t every = g.period_ns() == 0 ? 1 : (g.period_ns() + base - 1) / base;
    std::uint32_t& slot = s.key_.every[index];
    const auto e = static_cast<std::uint32_t>(every);
    slot = slot == 0 ? e : std::min(slot, e);
  }
  s.key_.tag_filter = request.tag_filter();
  s.snapshots_ = request.snapshots();
  if (!request.tag_filter().empty()) {
    Result<std::shared_ptr<const TagFilter>> filter =
        cache != nullptr ? cache->Get(request.tag_filter(), max_tag_filter_bytes)
                         : TagFilter::Compile(request.tag_filter(), max_tag_filter_bytes);
    if (!filter.ok()) return Status::InvalidArgument("tag_filter " + filter.status().message());
    s.filter_ = std::move(*filter);
  }
  return s;
}

bool Subscription::AnyDue(std::uint64_t seq) const {
  for (int g = 1; g < kGroupSlots; ++g) {
    if (key_.every[g] != 0 && seq % key_.every[g] == 0) return true;
  }
  return false;
}

bool Subscription::Matches(const std::string& tag) const {
  return filter_ == nullptr || filter_->Matches(tag);
}

std::string Subscription::Describe(Nanos base_period) const {
  std::string out;
  for (v1::Group g : AllGroups()) {
    if (!Subscribed(g)) continue;
    out += (out.empty() ? "" : ", ") + std::string(GroupName(g)) + " every " +
           FormatDuration(base_period * Every(g));
  }
  if (!key_.tag_filter.empty()) out += "; tags /" + CutForMessage(key_.tag_filter, 80) + "/";
  return out;
}

}  // namespace neuronmon::daemon
