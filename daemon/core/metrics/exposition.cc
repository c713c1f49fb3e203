#include "daemon/core/metrics/exposition.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "proto/common/text.h"
#include "proto/common/utf8.h"

namespace neuronmon::daemon {
namespace {

// Views into a family's samples, which outlive the key during validation.
using SeriesKey = std::vector<std::pair<std::string_view, std::string_view>>;

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// Colons are legal in the format but reserved for recording rules, and promlint flags them.
bool IsValidName(std::string_view s) {
  return !s.empty() && IsNameStart(s[0]) && std::all_of(s.begin(), s.end(), IsNameChar);
}

bool HasCamelCase(std::string_view s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] >= 'a' && s[i] <= 'z' && s[i + 1] >= 'A' && s[i + 1] <= 'Z') return true;
  }
  return false;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// promlint's unit table: a unit word (optionally SI/IEC-prefixed) and the base unit to use.
constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kUnits = {{
    {"amperes", "amperes"},    {"bytes", "bytes"},     {"celsius", "celsius"},
    {"grams", "grams"},        {"joules", "joules"},   {"kelvin", "kelvin"},
    {"meters", "meters"},      {"metres", "metres"},   {"seconds", "seconds"},
    {"volts", "volts"},        {"minutes", "seconds"}, {"hours", "seconds"},
    {"days", "seconds"},       {"weeks", "seconds"},   {"kelvins", "kelvin"},
    {"fahrenheit", "celsius"}, {"rankine", "celsius"}, {"inches", "meters"},
    {"yards", "meters"},       {"miles", "meters"},    {"bits", "bytes"},
    {"calories", "joules"},    {"pounds", "grams"},    {"ounces", "grams"},
}};
constexpr std::array<std::string_view, 18> kUnitPrefixes = {
    "pico", "nano", "micro", "milli", "centi", "deci", "deca", "hecto", "kilo",
    "kibi", "mega", "mibi",  "giga",  "gibi",  "tera", "tebi", "peta",  "pebi"};
constexpr std::array<std::string_view, 14> kUnitAbbreviations = {
    "s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d"};
constexpr std::array<std::string_view, 4> kTypeWords = {"counter", "gauge", "histogram", "summary"};

// The base unit for `word` when it names a unit, else empty.
std::string_view BaseUnitOf(std::string_view word) {
  for (const auto& [unit, base] : kUnits) {
    if (word == unit) return base;
    if (!word.ends_with(unit)) continue;
    for (std::string_view prefix : kUnitPrefixes) {
      if (word.size() == prefix.size() + unit.size() && word.starts_with(prefix) &&
          word.ends_with(unit)) {
        return base;
      }
    }
  }
  return {};
}

template <std::size_t N>
bool Contains(const std::array<std::string_view, N>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// promlint's word rules: no type names or abbreviated units after the first word; the first word
// that names a unit must be a base unit.
std::string WordProblem(std::string_view name) {
  const std::string lower = ToLowerAscii(name);
  bool unit_seen = false;
  for (std::size_t start = 0, index = 0; start <= lower.size(); ++index) {
    const std::size_t end = std::min(lower.find('_', start), lower.size());
    const std::string_view word = std::string_view(lower).substr(start, end - start);
    start = end + 1;
    if (index > 0 && Contains(kTypeWords, word)) {
      return "names must not include the type " + Quoted(word);
    }
    if (index > 0 && Contains(kUnitAbbreviations, word)) {
      return "abbreviated unit " + Quoted(word) + " (spell out a base unit such as seconds)";
    }
    const std::string_view base = BaseUnitOf(word);
    if (!unit_seen && !base.empty() && base != word) {
      return "use base unit " + Quoted(base) + " instead of " + Quoted(word);
    }
    unit_seen = unit_seen || !base.empty();
  }
  return {};
}

std::string SuffixProblem(std::string_view name, MetricType type) {
  const bool counter = type == MetricType::kCounter;
  if (counter && !name.ends_with("_total")) return "counter names must end in \"_total\"";
  if (!counter && name.ends_with("_total")) return "only counter names may end in \"_total\"";
  if (type == MetricType::kInfo && !name.ends_with("_info")) {
    return "info family names must end in \"_info\"";
  }
  for (std::string_view suffix : {"_bucket", "_count", "_sum"}) {
    // promlint exempts untyped families, which keeps legacy names such as AWS's
    // system_vcpu_count available (as untyped) without failing the lint.
    if (type != MetricType::kHistogram && type != MetricType::kUnknown && name.ends_with(suffix)) {
      return "only histogram names may end in " + Quoted(suffix);
    }
  }
  return {};
}

std::string NameProblem(const MetricFamily& f) {
  if (!IsValidName(f.name)) return "not a valid metric name (want [a-zA-Z_][a-zA-Z0-9_]*)";
  if (HasCamelCase(f.name)) return "metric names must be snake_case, not camelCase";
  if (std::string p = SuffixProblem(f.name, f.type); !p.empty()) return p;
  if (!IsValidName(OpenMetricsName(f))) return "nothing is left of the name before its suffix";
  return WordProblem(f.name);
}

std::string UnitProblem(const MetricFamily& f) {
  if (!f.unit) return {};
  const std::string& unit = *f.unit;
  if (f.type == MetricType::kInfo) return "info families have no unit";
  if (unit.empty() || !std::all_of(unit.begin(), unit.end(), IsNameChar)) {
    return "unit " + Quoted(unit) + " is not a valid unit";
  }
  if (!OpenMetricsName(f).ends_with("_" + unit)) {
    return "unit " + Quoted(unit) + " must be the name's suffix (before \"_total\")";
  }
  return {};
}

std::string LabelProblem(const Label& label) {
  const auto problem = [&](std::string_view what) {
    return "label name " + Quoted(label.name) + " " + std::string(what);
  };
  if (!IsValidName(label.name)) return problem("is not valid");
  if (label.name.starts_with("__")) return problem("is reserved (\"__\" prefix)");
  if (HasCamelCase(label.name)) return problem("must be snake_case");
  if (label.name == "le" || label.name == "quantile") return problem("is reserved");
  return {};
}

bool HasDuplicateName(const std::vector<Label>& labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {  // samples have a handful of labels
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      if (labels[i].name == labels[j].name) return true;
    }
  }
  return false;
}

std::string HistogramProblem(const HistogramValue& h) {
  for (std::size_t i = 0; i < h.buckets.size(); ++i) {
    const HistogramBucket& b = h.buckets[i];
    if (std::isnan(b.upper_bound)) return "bucket upper bound is NaN";
    if (i > 0 && b.upper_bound <= h.buckets[i - 1].upper_bound) return "bucket bounds must ascend";
    if (i > 0 && b.cumulative_count < h.buckets[i - 1].cumulative_count) {
      return "bucket counts must be cumulative";
    }
  }
  if (h.buckets.empty()) return {};
  const HistogramBucket& last = h.buckets.back();
  if (last.cumulative_count > h.count) return "count is below the last bucket's count";
  if (std::isinf(last.upper_bound) && last.upper_bound > 0 && last.cumulative_count != h.count) {
    return "the +Inf bucket's count must equal count";
  }
  return {};
}

bool SameNames(const std::vector<Label>& a, const std::vector<Label>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Label& x, const Label& y) { return x.name == y.name; });
}

// `previous`: the sample before, whose label names passed; samples of a family mostly repeat them.
std::string SampleProblem(MetricType type, const MetricSample& s, const MetricSample* previous) {
  if (previous == nullptr || !SameNames(s.labels, previous->labels)) {
    for (const Label& label : s.labels) {
      if (std::string p = LabelProblem(label); !p.empty()) return p;
    }
    if (HasDuplicateName(s.labels)) return "duplicate label name";
  }
  const bool has_created = type == MetricType::kCounter || type == MetricType::kHistogram;
  if (s.created_seconds && (!has_created || !std::isfinite(*s.created_seconds))) {
    return "created_seconds needs a counter or histogram and a finite value";
  }
  if (type == MetricType::kCounter && !(s.value >= 0)) return "counter value is negative or NaN";
  if (type == MetricType::kHistogram) return HistogramProblem(s.histogram);
  return {};
}

// Prometheus treats an empty label value as an absent label.
SeriesKey KeyOf(const MetricSample& s) {
  SeriesKey key;
  key.reserve(s.labels.size());
  for (const Label& label : s.labels) {
    if (!label.value.empty()) key.emplace_back(label.name, label.value);
  }
  if (!std::is_sorted(key.begin(), key.end())) std::sort(key.begin(), key.end());
  return key;
}

// Of the values only: they are what tells a family's series apart; equal hashes are compared.
std::size_t HashOf(const SeriesKey& key) {
  std::size_t h = key.size();
  for (const auto& entry : key) h = h * 1000003 ^ std::hash<std::string_view>{}(entry.second);
  return h;
}

// HashOf(KeyOf(s)), without building the key when the labels are sorted by name, as they
// usually are.
std::size_t SeriesHash(const MetricSample& s) {
  const auto by_name = [](const Label& a, const Label& b) { return a.name < b.name; };
  if (!std::is_sorted(s.labels.begin(), s.labels.end(), by_name)) return HashOf(KeyOf(s));
  std::size_t h = static_cast<std::size_t>(std::count_if(
      s.labels.begin(), s.labels.end(), [](const Label& l) { return !l.value.empty(); }));
  for (const Label& l : s.labels) {
    if (!l.value.empty()) h = h * 1000003 ^ std::hash<std::string_view>{}(l.value);
  }
  return h;
}

// The lowest index among samples[0, end) whose label set an earlier sample already has, or
// `end`. Sorting by hash keeps this near linear and free of allocations per sample: families
// share long label prefixes (the instance's), which make ordered comparisons of keys slow.
std::size_t FirstDuplicate(const std::vector<MetricSample>& samples, std::size_t end) {
  std::vector<std::pair<std::size_t, std::size_t>> by_hash;  // (hash, index)
  by_hash.reserve(end);
  for (std::size_t i = 0; i < end; ++i) by_hash.emplace_back(SeriesHash(samples[i]), i);
  std::sort(by_hash.begin(), by_hash.end());
  std::size_t first = end;
  for (std::size_t run = 0; run < by_hash.size();) {
    std::size_t next = run + 1;
    while (next < by_hash.size() && by_hash[next].first == by_hash[run].first) ++next;
    for (std::size_t a = run; a < next; ++a) {  // runs hold one index unless hashes collide
      for (std::size_t b = a + 1; b < next; ++b) {
        if (KeyOf(samples[by_hash[a].second]) == KeyOf(samples[by_hash[b].second])) {
          first = std::min(first, by_hash[b].second);  // the later of the two, by index order
        }
      }
    }
    run = next;
  }
  return first;
}

std::string FamilyProblem(const MetricFamily& f) {
  if (std::string p = NameProblem(f); !p.empty()) return p;
  // promtool reads a blank HELP as none.
  if (f.help.find_first_not_of(" \t") == std::string::npos) return "help text is empty";
  if (std::string p = UnitProblem(f); !p.empty()) return p;
  std::size_t bad = f.samples.size();
  std::string problem;
  for (std::size_t i = 0; i < f.samples.size() && problem.empty(); ++i) {
    problem = SampleProblem(f.type, f.samples[i], i > 0 ? &f.samples[i - 1] : nullptr);
    bad = problem.empty() ? bad : i;
  }
  // The first problem in sample order, as a single pass would find it.
  const std::size_t duplicate = FirstDuplicate(f.samples, bad);
  if (duplicate < bad) {
    return "samples[" + std::to_string(duplicate) + "]: duplicate label set";
  }
  if (!problem.empty()) return "samples[" + std::to_string(bad) + "]: " + problem;
  return {};
}

std::vector<std::string> RenderedNames(const MetricFamily& f) {
  const std::string base(OpenMetricsName(f));
  switch (f.type) {
    case MetricType::kCounter:
      return {base, base + "_total", base + "_created"};
    case MetricType::kHistogram:
      return {base, base + "_bucket", base + "_sum", base + "_count", base + "_created"};
    case MetricType::kInfo:
      return {base, base + "_info"};
    case MetricType::kGauge:
    case MetricType::kUnknown:
      break;
  }
  return {base};
}

bool IsValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Parsers reject invalid UTF-8 in label values, which would fail the whole scrape.
std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceLength(s, i);
    out.append(n == 0 ? kReplacementCharacter : s.substr(i, n));
    i += std::max<std::size_t>(n, 1);
  }
  return out;
}

}  // namespace

std::string_view OpenMetricsName(const MetricFamily& family) {
  std::string_view name = family.name;
  if (family.type == MetricType::kCounter) {
    name.remove_suffix(std::min<std::size_t>(6, name.size()));
  }
  if (family.type == MetricType::kInfo) name.remove_suffix(std::min<std::size_t>(5, name.size()));
  return name;
}

Status Exposition::Add(MetricFamily family) {
  if (!IsValidUtf8(family.help)) family.help = ToValidUtf8(family.help);
  for (MetricSample& s : family.samples) {
    for (Label& label : s.labels) {
      if (!IsValidUtf8(label.value)) label.value = ToValidUtf8(label.value);
    }
  }
  const std::string context = "metric family " + Quoted(family.name) + ": ";
  if (std::string p = FamilyProblem(family); !p.empty()) {
    return Status::InvalidArgument(context + p);
  }
  const std::vector<std::string> names = RenderedNames(family);
  for (const std::string& name : names) {
    if (rendered_names_.contains(name)) {
      return Status::InvalidArgument(context + Quoted(name) + " is already used by another family");
    }
  }
  rendered_names_.insert(names.begin(), names.end());
  families_.push_back(std::move(family));
  return Status::Ok();
}

}  // namespace neuronmon::daemon
