// TagFilter: a runtime tag filter — the `tag_filter` of a neuron-monitor config or a Subscribe —
// compiled with RE2, so matching takes time linear in the tag whatever the pattern (std::regex
// backtracks: `(.*)*X` took seconds per tag, and deep nesting overflowed the stack). The syntax is
// RE2's, which is Go's `regexp` (what AWS's neuron-monitor configs are written for), searched
// anywhere in the tag like Go's MatchString. A pattern is refused when it is longer than the
// caller's cap or needs more than a bounded amount of memory to compile. Match results are cached
// per tag (bounded), since a filter sees the same few tags every report.
// Immutable after Compile except for the cache; not thread-safe (one owner thread).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proto/common/status.h"

namespace re2 {
class RE2;
}

namespace neuronmon {

inline constexpr std::size_t kDefaultMaxTagFilterBytes = 256;

class TagFilter {
 public:
  // Compiles `pattern` (non-empty). Errors are kInvalidArgument, worded to follow the field's
  // name, and never echo more than the first 40 bytes of the pattern: `"llama[(" is not a valid
  // regular expression: missing ]: [(`, `is 70000 bytes long; the limit is 256 bytes`.
  static Result<std::unique_ptr<TagFilter>> Compile(std::string_view pattern,
                                                    std::size_t max_bytes);
  ~TagFilter();

  // True when the pattern matches anywhere in `tag`.
  bool Matches(std::string_view tag) const;
  const std::string& pattern() const { return pattern_; }

 private:
  TagFilter(std::string pattern, std::unique_ptr<re2::RE2> re);

  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
  mutable std::unordered_map<std::string, bool> cache_;
};

// `text` cut to `max` bytes (at a UTF-8 boundary) with "..." when longer.
std::string CutForMessage(std::string_view text, std::size_t max);
// `text` quoted for a message, cut to `max` bytes (at a UTF-8 boundary) with "..." when longer.
std::string QuoteForMessage(std::string_view text, std::size_t max = 40);

}  // namespace neuronmon
