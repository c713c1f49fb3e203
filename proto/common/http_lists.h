// HTTP header lists whose members carry a weight, as Accept and Accept-Encoding do: members
// separated by ',' (RFC 9110 §5.6.1), each a value and ';'-separated parameters (§5.6.6), one of
// which, q, is the member's weight (§12.4.2), 1 when absent. The one parser of them; what a
// member means (a coding, a media range) is the caller's. Pure; thread-safe.
//
// The daemon reads two such headers and each keeps the reading it has always had. They agree on
// everything a conforming client sends ("gzip;q=0.5", "text/plain;version=0.0.4;q=0.9") and
// differ only on malformed parameters, so the difference is one switch, here:
//   kStrict (Accept-Encoding, daemon/server/gzip.cc): RFC 9110 to the letter. A parameter is
//     `name=value` with no whitespace around '=' ("q =0.5" is no q parameter) and its value as
//     written; the weight is the first q parameter, whose value must be a qvalue — "0" or "1",
//     optionally followed by '.' and up to three digits, at most 1 ("1.5" counts as 1) — and
//     anything else weighs 0
//     ("q=2", "q=0.5x", "q= 0.5", "q=\"0.5\"").
//   kLenient (Accept, daemon/core/metrics/exposition_format.cc, as Prometheus' client_golang
//     negotiates): whitespace around '=' is skipped and a value may be quoted ("\"1.0.0\"" reads
//     1.0.0); the weight is the last q parameter, any decimal number its value starts with
//     ("2" weighs 2, "0.5x" 0.5, "-1" -1), and 0 when it starts with none.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

namespace neuronmon {

enum class WeightSyntax { kStrict, kLenient };

// One `name=value` parameter; a parameter without '=' is skipped. Views into the header.
struct HttpParameter {
  std::string_view name;   // as written; compare it with EqualsIgnoringCase (text.h)
  std::string_view value;  // kLenient: without the whitespace and quotes around it
};

struct WeightedMember {
  std::string_view value;  // what precedes the first ';', spaces and tabs trimmed; may be empty
  double weight = 1;       // the q parameter as the syntax reads it; 1 when there is none
  std::vector<HttpParameter> parameters;  // in header order, q included
};

// The members of `header` in header order, at most `max_members` of them: an empty member
// (",,") counts and has an empty value; a trailing ',' adds none. Views into `header`.
std::vector<WeightedMember> ParseWeightedList(
    std::string_view header, WeightSyntax syntax,
    std::size_t max_members = std::numeric_limits<std::size_t>::max());

}  // namespace neuronmon
