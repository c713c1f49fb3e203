// The config file: reading and checking it, and writing it back — each through the settings
// table (settings.h). Problems are reported as data, one string per problem, formatted
// "SOURCE: FIELD: what is wrong" (FIELD is the JSON path, e.g. `limits.queue_depth`), so a config
// check can print all of them and startup can print the first. Pure functions (LoadConfigFile
// reads one file; validating a scenario path reads that file); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/config/config.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

// The commented default file, generated from the settings table (settings.h): every key with
// its default and its documentation; it parses to DefaultConfig(). packaging/neuron-monitord.json
// is this text (a test checks it).
std::string DefaultConfigText();

// Parses and validates the text of a config file; `source` names it in problems (usually its
// path). On failure appends EVERY problem found to `problems` (when not null) — first those met
// while reading (malformed JSON with line and column, wrong types, bad syntax, unknown keys),
// then ValidateConfig's, each in field order — and returns kInvalidArgument whose message is the
// first of them. A field with a problem keeps its default, so later checks see a sane value.
Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& source,
                                 std::vector<std::string>* problems);

// Reads `path` (at most 1 MiB) and parses it as ParseConfig does with `path` as the source. A
// file that cannot be read is one problem "PATH: cannot open: <strerror>", with kNotFound when
// it does not exist (so a caller may fall back to defaults) and kIoError otherwise.
Result<DaemonConfig> LoadConfigFile(const std::string& path, std::vector<std::string>* problems);

// Checks every value rule on `config` and appends each violation, "SOURCE: FIELD: what" ("FIELD:
// what" when `source` is empty), to `problems` (when not null). Returns Ok or kInvalidArgument with
// the first problem it found.
Status ValidateConfig(const DaemonConfig& config, std::vector<std::string>* problems,
                      const std::string& source);

// `config` as the JSON of a config file (every key, effective values; durations as "10m"),
// which ParseConfig reads back to `config` (not --replay and --from, which are not in the file).
std::string ConfigToJson(const DaemonConfig& config);

}  // namespace neuronmon::daemon
