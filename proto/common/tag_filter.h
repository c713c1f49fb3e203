// TagFilter: a runtime tag filter — the `tag_filter` of a neuron-monitor config or a Subscribe —
// compiled with RE2, so matching takes time linear in the tag whatever the pattern (std::regex
// backtracks: `(.*)*X` took seconds per tag, and deep nesting overflowed the stack). The syntax is
// RE2's, which is Go's `regexp` (what AWS's neuron-monitor configs are written for), searched
// anywhere in the tag like Go's MatchString. A pattern is refused when it is longer than the
// caller's cap or needs more than 64 KiB to compile; the budget also bounds the time a compile
// takes (about 3 ms for the costliest 256-byte patterns, Unicode classes repeated). Match results
// are cached per tag (bounded), since a filter sees the same few tags every report. Immutable after
// Compile except for the cache; not thread-safe (one owner thread).
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
  static Result<std::shared_ptr<const TagFilter>> Compile(std::string_view pattern,
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

// TagFilterCache: compiled filters by pattern, shared by everyone who asks for the same one (a
// host's clients ask for the same few), failures included, so a pattern is compiled once however
// often it is requested. Bounded: when `capacity` patterns are held, the cache starts over. Not
// thread-safe.
class TagFilterCache {
 public:
  explicit TagFilterCache(std::size_t capacity = 256) : capacity_(capacity) {}
  // Whether `pattern`'s result is cached (so Get costs no compile).
  bool Contains(std::string_view pattern) const;
  // TagFilter::Compile(pattern, max_bytes), cached. The length check is never cached.
  Result<std::shared_ptr<const TagFilter>> Get(std::string_view pattern, std::size_t max_bytes);
  std::size_t size() const { return entries_.size(); }

 private:
  std::size_t capacity_;
  std::unordered_map<std::string, Result<std::shared_ptr<const TagFilter>>> entries_;
};

// `text` cut to `max` bytes (at a UTF-8 boundary) with "..." when longer.
std::string CutForMessage(std::string_view text, std::size_t max);
// `text` quoted for a message, cut to `max` bytes (at a UTF-8 boundary) with "..." when longer.
std::string QuoteForMessage(std::string_view text, std::size_t max = 40);

}  // namespace neuronmon
