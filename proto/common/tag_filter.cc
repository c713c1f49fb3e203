#include "proto/common/tag_filter.h"

#include <re2/re2.h>

namespace neuronmon {
namespace {

// Tags seen by one filter: a host runs a handful of applications, so this is never reached in
// use; it bounds what a stream of distinct tags could make the cache hold.
constexpr std::size_t kMaxCachedTags = 1024;
// RE2's memory budget for one compiled pattern (program and DFA cache). A realistic filter needs
// a few KiB; the budget keeps a hostile one (\pL{1000} took 47 ms and 8 MiB at RE2's default) from
// costing more than this, and stops its compilation early. A DFA that outgrows it falls back to
// RE2's NFA, still linear.
constexpr std::int64_t kMaxPatternMemory = 64 << 10;

Status TooLong(std::size_t size, std::size_t max_bytes) {
  return Status::InvalidArgument("is " + std::to_string(size) + " bytes long; the limit is " +
                                 std::to_string(max_bytes) + " bytes");
}

}  // namespace

std::string CutForMessage(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::string QuoteForMessage(std::string_view text, std::size_t max) {
  return "\"" + CutForMessage(text, max) + "\"";
}

TagFilter::TagFilter(std::string pattern, std::unique_ptr<re2::RE2> re)
    : pattern_(std::move(pattern)), re_(std::move(re)) {}

TagFilter::~TagFilter() = default;

Result<std::shared_ptr<const TagFilter>> TagFilter::Compile(std::string_view pattern,
                                                            std::size_t max_bytes) {
  if (pattern.size() > max_bytes) return TooLong(pattern.size(), max_bytes);
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxPatternMemory);
  auto re = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    // RE2's message quotes the rest of the pattern from the error on: cut it too.
    const std::string why = re->error_code() == RE2::ErrorPatternTooLarge
                                ? "it needs more than 64 KiB of memory to compile"
                                : CutForMessage(re->error(), 60);
    return Status::InvalidArgument(QuoteForMessage(pattern) +
                                   " is not a valid regular expression: " + why);
  }
  return std::shared_ptr<const TagFilter>(new TagFilter(std::string(pattern), std::move(re)));
}

bool TagFilter::Matches(std::string_view tag) const {
  const std::string key(tag);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const bool matched = RE2::PartialMatch(re2::StringPiece(tag.data(), tag.size()), *re_);
  if (cache_.size() >= kMaxCachedTags) cache_.clear();
  cache_.emplace(key, matched);
  return matched;
}

bool TagFilterCache::Contains(std::string_view pattern) const {
  return entries_.find(std::string(pattern)) != entries_.end();
}

Result<std::shared_ptr<const TagFilter>> TagFilterCache::Get(std::string_view pattern,
                                                             std::size_t max_bytes) {
  if (pattern.size() > max_bytes) return TooLong(pattern.size(), max_bytes);  // not worth keeping
  const std::string key(pattern);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second;
  Result<std::shared_ptr<const TagFilter>> result = TagFilter::Compile(pattern, max_bytes);
  if (entries_.size() >= capacity_) entries_.clear();
  entries_.emplace(key, result);
  return result;
}

}  // namespace neuronmon
