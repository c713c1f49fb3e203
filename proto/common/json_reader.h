// JsonReader: typed, path-tracking access to a parsed JSON object for config and scenario files.
// Every getter records its key as known; Finish() reports keys nobody asked for, so a misspelt
// field is an error rather than silently ignored. Problems are collected as "FIELD: what is wrong"
// strings (FIELD is a path such as `runtimes[0].workload.parameters`), so a caller can print all of
// them
// (--check-config) or only the first. Not thread-safe; readers borrow the json they read.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon {

// Parses `text` as JSON allowing // and /* */ comments. Errors name `source` and the position.
Result<nlohmann::json> ParseJsonWithComments(std::string_view text, const std::string& source);

class JsonReader {
 public:
  // `object` and `problems` must outlive the reader. A non-object `object` records one problem.
  JsonReader(const nlohmann::json& object, std::string path, std::vector<std::string>* problems);

  bool Has(std::string_view key) const;

  // Each returns `fallback` when the key is absent, and records a problem (returning fallback)
  // when it has the wrong type or is out of range.
  std::string String(std::string_view key, std::string fallback = "");
  double Number(std::string_view key, double fallback, double min, double max);
  std::int64_t Integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                       std::int64_t max);
  bool Bool(std::string_view key, bool fallback);
  // A Go-style duration string ("1s", "500ms"); `allow_negative` accepts a leading '-'.
  Nanos Duration(std::string_view key, Nanos fallback, Nanos min, Nanos max,
                 bool allow_negative = false);
  // One of `choices`; anything else is a problem listing them.
  std::string Choice(std::string_view key, std::string fallback,
                     const std::vector<std::string>& choices);

  // The value itself, of any type, or nullptr when absent.
  const nlohmann::json* Raw(std::string_view key) { return Get(key); }
  // Sub-objects and arrays: nullptr when absent (or of the wrong type, which is a problem).
  const nlohmann::json* Object(std::string_view key);
  const nlohmann::json* Array(std::string_view key);

  // Records keys that no getter asked for.
  void Finish();

  // Records a problem about `key` (or about the object itself when key is empty).
  void Problem(std::string_view key, const std::string& what);
  std::string PathOf(std::string_view key) const;
  std::string PathOf(std::string_view key, std::size_t index) const;

 private:
  const nlohmann::json* Get(std::string_view key);

  const nlohmann::json& object_;
  std::string path_;
  std::vector<std::string>* problems_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace neuronmon
