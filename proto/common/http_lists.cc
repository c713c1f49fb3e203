#include "proto/common/http_lists.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <system_error>

#include "proto/common/text.h"

namespace neuronmon {
namespace {

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), read leniently above 1 (capped).
double StrictWeight(std::string_view value) {
  if (value.empty() || value.size() > 5 || (value[0] != '0' && value[0] != '1')) return 0;
  if (value.size() > 1 && value[1] != '.') return 0;
  double q = value[0] - '0';
  double scale = 0.1;
  for (std::size_t i = 2; i < value.size(); ++i, scale /= 10) {
    if (value[i] < '0' || value[i] > '9') return 0;
    q += (value[i] - '0') * scale;
  }
  return std::min(q, 1.0);
}

double LenientWeight(std::string_view value) {
  double q = 0;
  if (std::from_chars(value.data(), value.data() + value.size(), q).ec != std::errc{}) return 0;
  return q;
}

std::string_view Unquoted(std::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

std::optional<HttpParameter> ParseParameter(std::string_view text, WeightSyntax syntax) {
  text = Trim(text);
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  HttpParameter p{text.substr(0, eq), text.substr(eq + 1)};
  if (syntax == WeightSyntax::kLenient) {
    p.name = Trim(p.name);
    p.value = Unquoted(Trim(p.value));
  }
  return p;
}

WeightedMember ParseMember(std::string_view member, WeightSyntax syntax) {
  WeightedMember out;
  std::size_t semicolon = member.find(';');
  out.value = Trim(member.substr(0, semicolon));
  bool weighed = false;
  while (semicolon != std::string_view::npos) {
    member.remove_prefix(semicolon + 1);
    semicolon = member.find(';');
    const std::optional<HttpParameter> p = ParseParameter(member.substr(0, semicolon), syntax);
    if (!p) continue;
    out.parameters.push_back(*p);
    if (!EqualsIgnoringCase(p->name, "q")) continue;
    if (syntax == WeightSyntax::kLenient) {
      out.weight = LenientWeight(p->value);
    } else if (!weighed) {
      out.weight = StrictWeight(p->value);
    }
    weighed = true;
  }
  return out;
}

}  // namespace

std::vector<WeightedMember> ParseWeightedList(std::string_view header, WeightSyntax syntax,
                                              std::size_t max_members) {
  std::vector<WeightedMember> members;
  while (!header.empty() && members.size() < max_members) {
    const std::size_t comma = header.find(',');
    members.push_back(ParseMember(header.substr(0, comma), syntax));
    header.remove_prefix(comma == std::string_view::npos ? header.size() : comma + 1);
  }
  return members;
}

}  // namespace neuronmon
