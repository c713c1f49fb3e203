#include "proto/common/json_reader.h"

#include <cmath>

#include "proto/common/duration.h"

namespace neuronmon {

Result<nlohmann::json> ParseJsonWithComments(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                                 /*ignore_comments=*/true);
  } catch (const nlohmann::json::exception& e) {
    // Syntax errors (parse_error) and numbers out of a double's range, like 1e400 (out_of_range):
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string what = e.what();
    if (const std::size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    return Status::InvalidArgument(source + ": " + what);
  }
}

JsonReader::JsonReader(const nlohmann::json& object, std::string path,
                       std::vector<std::string>* problems)
    : object_(object), path_(std::move(path)), problems_(problems) {
  if (!object_.is_object()) Problem("", "expected an object");
}

std::string JsonReader::PathOf(std::string_view key) const {
  if (key.empty()) return path_.empty() ? "(top level)" : path_;
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string JsonReader::PathOf(std::string_view key, std::size_t index) const {
  return PathOf(key) + "[" + std::to_string(index) + "]";
}

void JsonReader::Problem(std::string_view key, const std::string& what) {
  problems_->push_back(PathOf(key) + ": " + what);
}

bool JsonReader::Has(std::string_view key) const {
  return object_.is_object() && object_.contains(key);
}

const nlohmann::json* JsonReader::Get(std::string_view key) {
  seen_.emplace(key);
  if (!object_.is_object()) return nullptr;
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string JsonReader::String(std::string_view key, std::string fallback) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    Problem(key, "expected a string");
    return fallback;
  }
  return v->get<std::string>();
}

double JsonReader::Number(std::string_view key, double fallback, double min, double max) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) {
    Problem(key, "expected a number");
    return fallback;
  }
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    Problem(key, "must be between " + nlohmann::json(min).dump() + " and " +
                     nlohmann::json(max).dump() + " (got " + v->dump() + ")");
    return fallback;
  }
  return d;
}

std::int64_t JsonReader::Integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                                 std::int64_t max) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) {
    Problem(key, "expected an integer");
    return fallback;
  }
  const std::int64_t i = v->is_number_unsigned() && v->get<std::uint64_t>() > INT64_MAX
                             ? INT64_MAX
                             : v->get<std::int64_t>();
  if (i < min || i > max) {
    Problem(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                     " (got " + v->dump() + ")");
    return fallback;
  }
  return i;
}

bool JsonReader::Bool(std::string_view key, bool fallback) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    Problem(key, "expected true or false");
    return fallback;
  }
  return v->get<bool>();
}

Nanos JsonReader::Duration(std::string_view key, Nanos fallback, Nanos min, Nanos max,
                           bool allow_negative) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    Problem(key, "expected a duration string such as \"5s\"");
    return fallback;
  }
  std::string_view text = v->get_ref<const std::string&>();
  const bool negative = allow_negative && !text.empty() && text[0] == '-';
  Result<Nanos> d = ParseDuration(negative ? text.substr(1) : text);
  if (!d.ok()) {
    Problem(key, d.status().message());
    return fallback;
  }
  const Nanos value = negative ? -*d : *d;
  if (value < min || value > max) {
    Problem(key, "must be between " + std::string(min < Nanos(0) ? "-" : "") +
                     FormatDuration(min < Nanos(0) ? -min : min) + " and " + FormatDuration(max) +
                     " (got \"" + std::string(text) + "\")");
    return fallback;
  }
  return value;
}

std::string JsonReader::Choice(std::string_view key, std::string fallback,
                               const std::vector<std::string>& choices) {
  if (!Has(key)) {
    seen_.emplace(key);
    return fallback;
  }
  const std::string value = String(key, fallback);
  for (const std::string& c : choices) {
    if (c == value) return value;
  }
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  Problem(key, "\"" + value + "\" is not one of " + list);
  return fallback;
}

const nlohmann::json* JsonReader::Object(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v != nullptr && !v->is_object()) {
    Problem(key, "expected an object");
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonReader::Array(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v != nullptr && !v->is_array()) {
    Problem(key, "expected an array");
    return nullptr;
  }
  return v;
}

void JsonReader::Finish() {
  if (!object_.is_object()) return;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (seen_.find(it.key()) == seen_.end()) Problem(it.key(), "unknown field");
  }
}

}  // namespace neuronmon
