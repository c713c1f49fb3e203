// Internals of the settings table (settings.h), shared by settings.cc (what the table drives) and
// settings_table.cc (the rows): the kinds of setting — integer, duration, bool, text, number, and
// a string parsed into a typed member — and the builder the rows are written with. Not part of
// the config's API. Immutable once built; thread-safe.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "daemon/core/config/config.h"
#include "daemon/core/config/settings.h"
#include "proto/common/duration.h"

namespace neuronmon::daemon::settings_internal {

inline constexpr std::int64_t kAnyInt = std::numeric_limits<std::int64_t>::max();

// The member a setting sets. Settings only read through it when given a const config.
template <typename T>
using Member = T& (*)(DaemonConfig&);

template <typename T>
T& Of(Member<T> member, const DaemonConfig& config) {
  return member(const_cast<DaemonConfig&>(config));
}

inline std::string FormatNumber(double d) {
  char buffer[32];
  const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof buffer, d);
  return std::string(buffer, end.ptr);
}

inline std::string RangeProblem(const std::string& key, std::int64_t v, std::int64_t min,
                                std::int64_t max) {
  return key + ": must be between " + std::to_string(min) + " and " + std::to_string(max) +
         " (got " + std::to_string(v) + ")";
}

// An integer member (of any integral type, or a double that holds whole numbers), min..max.
template <typename T>
class IntegerSetting final : public Setting {
 public:
  IntegerSetting(Info info, Member<T> member, std::int64_t min, std::int64_t max)
      : Setting(std::move(info)), member_(member), min_(min), max_(max) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    const nlohmann::json* v = r.Raw(name);
    // JsonReader::Integer clamps values above INT64_MAX; refuse them rather than read another.
    if (v != nullptr && v->is_number_unsigned() && v->get<std::uint64_t>() > kAnyInt) {
      r.Problem(name, "too large (got " + v->dump() + ")");
      return;
    }
    T& member = member_(config);
    const std::int64_t read = r.Integer(name, Get(member), -kAnyInt - 1, kAnyInt);
    // A value the member cannot hold (a negative count) is out of range here already.
    if (std::is_unsigned_v<T> && read < 0) {
      r.Problem(name, RangeProblem("", read, min_, max_).substr(2));
      return;
    }
    member = static_cast<T>(read);
  }
  void Check(const DaemonConfig& config, Found& found) const override {
    const std::int64_t v = Get(Of(member_, config));
    if (v < min_ || v > max_) found.push_back(RangeProblem(key(), v, min_, max_));
  }
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return Get(Of(member_, config));
  }

 private:
  static std::int64_t Get(T v) {
    if constexpr (std::is_unsigned_v<T>) {
      return static_cast<std::int64_t>(std::min<std::uint64_t>(v, kAnyInt));
    } else {
      return static_cast<std::int64_t>(v);
    }
  }
  Member<T> member_;
  std::int64_t min_, max_;
};

inline std::string Quoted(Nanos d) {
  return d < Nanos::zero() ? "a negative duration" : "\"" + FormatDuration(d) + "\"";
}

class DurationSetting final : public Setting {
 public:
  DurationSetting(Info info, Member<Nanos> member, Nanos min, Nanos max)
      : Setting(std::move(info)), member_(member), min_(min), max_(max) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    Nanos& member = member_(config);
    member = r.Duration(name, member, Nanos::zero(), Nanos::max());
  }
  void Check(const DaemonConfig& config, Found& found) const override {
    const Nanos v = Of(member_, config);
    if (v >= min_ && v <= max_) return;
    found.push_back(key() + ": must be between " + FormatDuration(min_) + " and " +
                    FormatDuration(max_) + " (got " + Quoted(v) + ")");
  }
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return FormatDuration(std::max(Of(member_, config), Nanos::zero()));
  }

 private:
  Member<Nanos> member_;
  Nanos min_, max_;
};

class BoolSetting final : public Setting {
 public:
  BoolSetting(Info info, Member<bool> member) : Setting(std::move(info)), member_(member) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    bool& member = member_(config);
    member = r.Bool(name, member);
  }
  void Check(const DaemonConfig&, Found&) const override {}
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return Of(member_, config);
  }

 private:
  Member<bool> member_;
};

// What is wrong with a value, or "" when nothing is.
template <typename T>
using ValueRule = std::function<std::string(const T&)>;

class TextSetting final : public Setting {
 public:
  TextSetting(Info info, Member<std::string> member, ValueRule<std::string> rule)
      : Setting(std::move(info)), member_(member), rule_(std::move(rule)) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    std::string& member = member_(config);
    member = r.String(name, member);
  }
  void Check(const DaemonConfig& config, Found& found) const override {
    if (!rule_) return;
    if (std::string problem = rule_(Of(member_, config)); !problem.empty()) {
      found.push_back(key() + ": " + problem);
    }
  }
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return Of(member_, config);
  }

 private:
  Member<std::string> member_;
  ValueRule<std::string> rule_;
};

class NumberSetting final : public Setting {
 public:
  NumberSetting(Info info, Member<double> member, ValueRule<double> rule)
      : Setting(std::move(info)), member_(member), rule_(std::move(rule)) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    double& member = member_(config);
    const double any = std::numeric_limits<double>::max();
    member = r.Number(name, member, -any, any);
  }
  void Check(const DaemonConfig& config, Found& found) const override {
    if (std::string problem = rule_(Of(member_, config)); !problem.empty()) {
      found.push_back(key() + ": " + problem);
    }
  }
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return Of(member_, config);
  }
  std::string Text(const DaemonConfig& config) const override {
    return FormatNumber(Of(member_, config));
  }

 private:
  Member<double> member_;
  ValueRule<double> rule_;
};

// A list of strings (["CurveP256", "X25519"]): at most kMaxListItems of at most kMaxItemBytes each.
class StringListSetting final : public Setting {
 public:
  static constexpr std::size_t kMaxListItems = 256;
  static constexpr std::size_t kMaxItemBytes = 1024;

  StringListSetting(Info info, Member<std::vector<std::string>> member)
      : Setting(std::move(info)), member_(member) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    const nlohmann::json* v = r.Array(name);
    if (v == nullptr) return;
    if (v->size() > kMaxListItems) {
      return r.Problem(name, "at most " + std::to_string(kMaxListItems) + " items (got " +
                                 std::to_string(v->size()) + ")");
    }
    std::vector<std::string> items;
    for (const nlohmann::json& item : *v) {
      if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
        return r.Problem(name, "expected a list of non-empty strings");
      }
      if (item.get_ref<const std::string&>().size() > kMaxItemBytes) {
        return r.Problem(name,
                         "an item is longer than " + std::to_string(kMaxItemBytes) + " bytes");
      }
      items.push_back(item.get<std::string>());
    }
    member_(config) = std::move(items);
  }
  void Check(const DaemonConfig&, Found&) const override {}
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return Of(member_, config);
  }

 private:
  Member<std::vector<std::string>> member_;
};

// A string the file spells one way and the member holds parsed: an address, a file mode, a level.
template <typename T>
struct Syntax {
  std::function<Result<T>(std::string_view)> parse;
  std::function<std::string(const T&)> format;
};

template <typename T>
class ParsedSetting final : public Setting {
 public:
  ParsedSetting(Info info, Member<T> member, Syntax<T> syntax, ValueRule<T> rule)
      : Setting(std::move(info)), member_(member), syntax_(std::move(syntax)), rule_(rule) {}

  void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const override {
    const nlohmann::json* v = r.Raw(name);
    if (v == nullptr) return;
    if (!v->is_string()) return r.Problem(name, "expected a string");
    Result<T> parsed = syntax_.parse(v->get_ref<const std::string&>());
    if (!parsed.ok()) return r.Problem(name, parsed.status().message());
    member_(config) = std::move(parsed).value();
  }
  void Check(const DaemonConfig& config, Found& found) const override {
    if (!rule_) return;
    if (std::string problem = rule_(Of(member_, config)); !problem.empty()) {
      found.push_back(key() + ": " + problem);
    }
  }
  nlohmann::ordered_json Value(const DaemonConfig& config) const override {
    return syntax_.format(Of(member_, config));
  }

 private:
  Member<T> member_;
  Syntax<T> syntax_;
  ValueRule<T> rule_;
};

class Table {
 public:
  // The comment of the next key or section.
  Table& Doc(std::vector<std::string> lines) {
    doc_ = std::move(lines);
    return *this;
  }
  // The next key applies to the simulator only (not checked with device "neuron").
  Table& Simulated() {
    simulated_ = true;
    return *this;
  }
  // A rule joining several keys, checked (in table order) after the last key added.
  Table& Rule(Setting::CrossRule rule) {
    settings.back()->AddRule(std::move(rule));
    return *this;
  }
  Table& Section(std::string key) {
    sections_.push_back({std::move(key), std::exchange(doc_, {})});
    return *this;
  }
  template <typename T>
  Table& Integer(std::string key, Member<T> m, std::int64_t min, std::int64_t max) {
    return Add(std::make_unique<IntegerSetting<T>>(Next(std::move(key)), m, min, max));
  }
  Table& Duration(std::string key, Member<Nanos> m, Nanos min, Nanos max) {
    return Add(std::make_unique<DurationSetting>(Next(std::move(key)), m, min, max));
  }
  Table& Bool(std::string key, Member<bool> m) {
    return Add(std::make_unique<BoolSetting>(Next(std::move(key)), m));
  }
  Table& Text(std::string key, Member<std::string> m, ValueRule<std::string> rule = nullptr) {
    return Add(std::make_unique<TextSetting>(Next(std::move(key)), m, std::move(rule)));
  }
  Table& Number(std::string key, Member<double> m, ValueRule<double> rule) {
    return Add(std::make_unique<NumberSetting>(Next(std::move(key)), m, std::move(rule)));
  }
  Table& Strings(std::string key, Member<std::vector<std::string>> m) {
    return Add(std::make_unique<StringListSetting>(Next(std::move(key)), m));
  }
  template <typename T>
  Table& Parsed(std::string key, Member<T> m, Syntax<T> syntax, ValueRule<T> rule = nullptr) {
    return Add(std::make_unique<ParsedSetting<T>>(Next(std::move(key)), m, std::move(syntax),
                                                  std::move(rule)));
  }

  std::vector<std::unique_ptr<Setting>> settings;
  std::vector<daemon::Section> sections_;

 private:
  Setting::Info Next(std::string key) {
    return {std::move(key), std::exchange(doc_, {}), std::exchange(simulated_, false)};
  }
  Table& Add(std::unique_ptr<Setting> setting) {
    settings.push_back(std::move(setting));
    return *this;
  }
  std::vector<std::string> doc_;
  bool simulated_ = false;
};

// The table, built once.
const Table& SettingsTable();

}  // namespace neuronmon::daemon::settings_internal
