// Fuzzes how the daemon reads a Subscribe: Subscription::FromRequest (groups, periods, the tag
// filter) with and without a TagFilterCache, then Matches, Due/AnyDue and Describe; and
// TagFilter::Compile on the raw input, as neuron-monitor -c and the daemon compile tag filters.
// The first byte picks the base period (the daemon's allowed range, 10 ms to 1 h), the filter
// size cap and whether the Subscribe is parsed from protobuf bytes or built field by field.
// Invariants: the cache changes nothing (same success, same key, same matches); an accepted
// subscription has every group it names subscribed at a period of at least one base period; a
// filter is refused when over its cap.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/report/subscription.h"
#include "proto/common/tag_filter.h"
#include "proto/names/names.h"
#include "proto/wire/protobuf_logs.h"
#include "tests/fuzz/fuzz_fail.h"
#include "tests/fuzz/fuzz_input.h"

namespace neuronmon::fuzz {
namespace {

using std::chrono::milliseconds;

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("subscription_fuzz", what);
}

Nanos BasePeriod(FuzzInput& in) {
  constexpr Nanos kMin = milliseconds(10);
  constexpr Nanos kMax = std::chrono::hours(1);
  const Nanos periods[] = {std::chrono::seconds(1), milliseconds(100), kMin, kMax,
                           std::chrono::seconds(5)};
  const std::size_t p = in.Pick(std::size(periods) + 1);
  if (p < std::size(periods)) return periods[p];
  return kMin + Nanos(in.U64() % static_cast<std::uint64_t>((kMax - kMin).count() + 1));
}

v1::Subscribe BuildSubscribe(FuzzInput& in) {
  v1::Subscribe s;
  const std::size_t groups = in.Pick(16);
  for (std::size_t i = 0; i < groups; ++i) {
    v1::GroupSubscription& g = *s.add_groups();
    const std::uint8_t which = in.U8();
    g.set_group(static_cast<v1::Group>(which < 240 ? which % 24 : static_cast<int>(in.U32())));
    const std::uint64_t periods[] = {0, 1, 1'000'000'000, 86'400'000'000'000ULL,
                                     86'400'000'000'001ULL};
    const std::size_t p = in.Pick(std::size(periods) + 1);
    g.set_period_ns(p < std::size(periods) ? periods[p] : in.U64());
  }
  s.set_tag_filter(in.String(300));
  if (in.Bool()) s.set_resume_after_seq(in.U64());
  return s;
}

void CheckAccepted(const v1::Subscribe& request, const daemon::Subscription& sub) {
  for (const v1::GroupSubscription& g : request.groups()) {
    if (!sub.Subscribed(g.group()) || sub.Every(g.group()) < 1) {
      Fail("an accepted group is not subscribed");
    }
  }
  if (request.groups().empty()) {
    for (v1::Group g : AllGroups()) {
      if (sub.Every(g) != (IsNamedOnlyGroup(g) ? 0u : 1u)) {
        Fail("an empty group list must subscribe every group but those named only, every period");
      }
    }
  }
}

void Exercise(FuzzInput& in, const v1::Subscribe& request, Nanos base, std::size_t max_bytes) {
  TagFilterCache cache(4);
  Result<daemon::Subscription> plain = daemon::Subscription::FromRequest(request, base, max_bytes);
  Result<daemon::Subscription> cached =
      daemon::Subscription::FromRequest(request, base, max_bytes, &cache);
  Result<daemon::Subscription> again =
      daemon::Subscription::FromRequest(request, base, max_bytes, &cache);
  if (plain.ok() != cached.ok() || plain.ok() != again.ok()) Fail("the cache changed the answer");
  if (!plain.ok()) {
    if (plain.status().message().empty()) Fail("a refusal without a message");
    return;
  }
  if (!(plain->key() == cached->key()) || !(plain->key() == again->key())) {
    Fail("the cache changed the key");
  }
  if (request.tag_filter().size() > max_bytes) Fail("a filter over the cap was accepted");
  CheckAccepted(request, *plain);
  std::vector<std::string> tags = {"", "llama3-8b-rank0", "vllm-replica3", "12345"};
  for (int i = 0; i < 3; ++i) tags.push_back(in.String(80));
  for (const std::string& tag : tags) {
    if (plain->Matches(tag) != cached->Matches(tag) || plain->Matches(tag) != again->Matches(tag)) {
      Fail("copies of one filter disagree");
    }
  }
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t seq = in.U64();
    bool any = false;
    for (v1::Group g : AllGroups()) any = any || plain->Due(g, seq);
    if (any != plain->AnyDue(seq)) Fail("AnyDue disagrees with Due");
  }
  (void)plain->Describe(base);
}

void CompileDirectly(std::string_view pattern, FuzzInput& in) {
  Result<std::shared_ptr<const TagFilter>> filter = TagFilter::Compile(pattern, 65536);
  if (!filter.ok()) return;
  if ((*filter)->pattern() != pattern) Fail("the filter lost its pattern");
  for (int i = 0; i < 3; ++i) {
    const std::string tag = in.String(120);
    if ((*filter)->Matches(tag) != (*filter)->Matches(tag)) Fail("the match cache disagrees");
  }
}

}  // namespace
}  // namespace neuronmon::fuzz

// Protobuf logs each string field with invalid UTF-8 it meets; thousands a second drown the
// fuzzer's output and slow it down (the daemon's own silencing; FATAL still shows).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  neuronmon::wire::SilenceProtobufParseLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::fuzz;
  FuzzInput in(data, size);
  const std::uint8_t mode = in.U8();
  const neuronmon::Nanos base = BasePeriod(in);
  const std::size_t caps[] = {256, 65536, 1, 40};
  const std::size_t max_bytes = caps[(mode >> 1) & 3];
  if (mode & 1) {
    // The rest is a serialized Subscribe, as it arrives inside an Envelope; tags come from it.
    neuronmon::v1::Subscribe request;
    const std::string_view rest = in.Rest();
    if (!request.ParseFromArray(rest.data(), static_cast<int>(rest.size()))) return 0;
    FuzzInput tags(data + 1, size - 1);
    Exercise(tags, request, base, max_bytes);
  } else if (mode & 8) {
    const std::string pattern = in.String(4096);
    CompileDirectly(pattern, in);
  } else {
    const neuronmon::v1::Subscribe request = BuildSubscribe(in);
    Exercise(in, request, base, max_bytes);
  }
  return 0;
}
