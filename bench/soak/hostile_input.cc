#include "bench/soak/hostile_input.h"

#include <array>
#include <cstdint>
#include <string_view>

#include "bench/soak/client_io.h"

namespace neuronmon::soak {
namespace {

std::string Varint(std::uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
  return out + static_cast<char>(v);
}

// A tag filter: mostly ordinary, some pathological for a backtracking engine, some invalid, some
// at or over the daemon's 256-byte cap (one just under the 64 KiB frame limit).
std::string RandomTagFilter(Rng& rng) {
  constexpr std::array<std::string_view, 14> kOrdinary = {
      "",           "",         "",          "",   ".*",          "llama", "^llama3-8b-rank[0-3]$",
      "rank1[0-5]", "vllm|gpt", "(?i)LLAMA", "^$", "no-such-tag", "\\d+$", "[[:alpha:]]{1,1000}"};
  constexpr std::array<std::string_view, 8> kPathological = {
      "(.*)*(.*)*X",          "((((a)))){1000}",    "(a*)*b",    "(x+x+)+y", "(a{999}){999}",
      "((a{100}){100}){100}", "(?:(?:(?:a*)*)*)*$", "\\pL{1000}"};
  constexpr std::array<std::string_view, 8> kInvalid = {"[(", "(?P<",    "*",   "a)",
                                                        "\\", "x{1001}", "(?<", "\\8"};
  const std::uint64_t roll = rng() % 40;
  if (roll < 20) return std::string(kOrdinary[rng() % kOrdinary.size()]);
  if (roll < 30) return std::string(kPathological[rng() % kPathological.size()]);
  if (roll < 36) return std::string(kInvalid[rng() % kInvalid.size()]);
  if (roll < 37) return std::string(60000, 'a');
  if (roll < 38) return std::string(256, 'a');  // exactly the cap: accepted
  std::string refused;                          // 300 bytes: over the cap
  while (refused.size() < 300) refused += "(a|b)";
  return refused;
}

}  // namespace

v1::Subscribe RandomSubscribe(Rng& rng) {
  constexpr std::array<int, 11> kGroups = {1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 20};
  constexpr std::array<int, 2> kUnknownGroups = {7, 99};
  constexpr std::array<std::uint64_t, 6> kPeriods = {
      0, 0, 1'000'000'000, 2'000'000'000, 5'000'000'000, 10'000'000'000};
  constexpr std::array<std::uint64_t, 3> kOddPeriods = {1, 25ull * 3600 * 1'000'000'000,
                                                        UINT64_MAX};
  v1::Subscribe s;
  const auto groups = rng() % 6;
  for (std::uint64_t i = 0; i < groups; ++i) {
    v1::GroupSubscription* g = s.add_groups();
    const bool odd = rng() % 20 == 0;
    g->set_group(static_cast<v1::Group>(odd ? kUnknownGroups[rng() % 2] : kGroups[rng() % 11]));
    g->set_period_ns(rng() % 20 == 0 ? kOddPeriods[rng() % 3] : kPeriods[rng() % 6]);
  }
  s.set_tag_filter(RandomTagFilter(rng));
  return s;
}

v1::Subscribe ResumeSubscribe(Rng& rng) {
  const std::array<std::uint64_t, 6> points = {0,     1,           UINT64_MAX, UINT64_MAX - 1,
                                               rng(), rng() % 1000};
  v1::Subscribe s = RandomSubscribe(rng);
  s.set_resume_after_seq(points[rng() % points.size()]);
  return s;
}

std::string GarbageBytes(Rng& rng) {
  v1::Envelope report;
  report.mutable_report()->set_seq(1);
  // Envelope{subscribe{tag_filter: "\xff\xfe"}}: a proto3 string that is not UTF-8.
  const std::string not_utf8 = std::string("\x06\x1a\x04\x12\x02\xff\xfe", 7);
  switch (rng() % 11) {
    case 0: {
      std::string random(1 + rng() % 512, '\0');
      for (char& c : random) c = static_cast<char>(rng());
      return random;
    }
    case 1:
      return "\xff\xff\xff\xff\x0f" + std::string(100, 'x');  // 4 GiB frame
    case 2:
      return Varint(70000) + std::string(1000, 'x');  // over 64 KiB
    case 3:
      return "\xff\xff\xff\xff\xff\x01";  // 6-byte varint
    case 4:
      return std::string(1, '\0');  // zero length
    case 5:
      return SubscribeFrame(RandomSubscribe(rng));  // before Hello
    case 6:
      return HelloFrame(2);  // unsupported version
    case 7:
      return HelloFrame() + HelloFrame();
    case 8:
      return HelloFrame() + Frame(report);  // clients do not send reports
    case 9:
      return HelloFrame() + not_utf8;
    default:
      return Varint(100) + std::string(10, 'x');  // truncated, then silence
  }
}

}  // namespace neuronmon::soak
