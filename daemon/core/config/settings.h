// The settings table: every key of neuron-monitord's config file declared once — its JSON path,
// the member of DaemonConfig it sets, its default (the member's own, in its component's struct),
// its bounds and its documentation. The table drives everything done with keys: reading a file
// (types and syntax), the per-key value rules (ranges, paths) and the rules that join keys
// (the simulator's device and scenario, retention against period, a token for listeners off
// loopback), each checked at its key's place, the effective config as JSON (ConfigToJson, kept in
// incident bundles), the commented default file (--print-default-config,
// packaging/neuron-monitord.json) and the documented key lists (a test holds docs/security.md to
// the table). The rows are in settings_table.cc. Immutable; thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/json_reader.h"

namespace neuronmon::daemon {

struct DaemonConfig;

// Problems found, each "FIELD: what is wrong" (the source is prefixed later).
using Found = std::vector<std::string>;

class Setting {
 public:
  virtual ~Setting() = default;

  // "limits.queue_depth": the key's JSON path.
  const std::string& key() const { return key_; }
  // The comment above the key in the default file, one string per line; empty: none (the
  // comment above an earlier key covers it).
  const std::vector<std::string>& doc() const { return doc_; }
  // Whether the setting applies to `config` (simulator settings do not with device "neuron"):
  // its value rules are checked only then.
  bool AppliesTo(const DaemonConfig& config) const;

  // Reads the value `r` has under `name` (the key's last part) into `config`; a wrong type or a
  // syntax error is a problem recorded on `r`, and the member keeps its value.
  virtual void Read(JsonReader& r, std::string_view name, DaemonConfig& config) const = 0;
  // Appends a problem when the member's value breaks the key's value rule.
  virtual void Check(const DaemonConfig& config, Found& found) const = 0;
  // A rule that joins this key to others (retention against period, a token for a listener),
  // checked after the key's own.
  using CrossRule = std::function<void(const DaemonConfig&, Found&)>;
  void AddRule(CrossRule rule) { rules_.push_back(std::move(rule)); }
  // Check, then the cross rules.
  void CheckAll(const DaemonConfig& config, Found& found) const;
  // The member's value as the file spells it.
  virtual nlohmann::ordered_json Value(const DaemonConfig& config) const = 0;
  // The member's value as the default file prints it (numbers without a ".0").
  virtual std::string Text(const DaemonConfig& config) const;

  struct Info {
    std::string key;
    std::vector<std::string> doc;
    bool simulator_only = false;
  };

 protected:
  explicit Setting(Info info);

 private:
  std::string key_;
  std::vector<std::string> doc_;
  bool simulator_only_ = false;
  std::vector<CrossRule> rules_;
};

// An object of the file ("limits"), with the comment above it.
struct Section {
  std::string key;
  std::vector<std::string> doc;
};

// Every key, in the order of the default file.
const std::vector<std::unique_ptr<Setting>>& ConfigSettings();
// Every object of the file that has a comment, or starts a paragraph at the top level.
const std::vector<Section>& ConfigSections();

// Reads `json` (the whole file) into `config` through the table: each key into its member, each
// object's unknown keys reported. Problems go to `found`.
void ReadSettings(const nlohmann::json& json, DaemonConfig& config, Found& found);
// Each applicable key's value rule and the rules joining it to others, in table order.
void CheckSettings(const DaemonConfig& config, Found& found);
// `config` as the file's JSON, every key in table order.
nlohmann::ordered_json SettingsToJson(const DaemonConfig& config);
// The commented file of `config`'s values (DefaultConfig(): the default file).
std::string SettingsFileText(const DaemonConfig& config);

}  // namespace neuronmon::daemon
