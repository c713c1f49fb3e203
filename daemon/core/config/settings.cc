#include "daemon/core/config/settings.h"

#include <string>
#include <utility>

#include "daemon/core/config/config.h"

namespace neuronmon::daemon {

Setting::Setting(Info info)
    : key_(std::move(info.key)), doc_(std::move(info.doc)), simulator_only_(info.simulator_only) {}

bool Setting::AppliesTo(const DaemonConfig& config) const {
  return !simulator_only_ || config.backend.device != "neuron";
}

std::string Setting::Text(const DaemonConfig& config) const { return Value(config).dump(); }

void Setting::CheckAll(const DaemonConfig& config, Found& found) const {
  Check(config, found);
  for (const CrossRule& rule : rules_) rule(config, found);
}

namespace {

// ---- The file's shape: objects and their keys, in table order.

struct Node {
  std::string name;
  std::string key;                   // the path from the top
  const Setting* setting = nullptr;  // a key; null: an object
  std::vector<Node> children;
};

Node& ChildOf(Node& node, const std::string& name) {
  for (Node& c : node.children) {
    if (c.name == name) return c;
  }
  node.children.push_back({name, node.key.empty() ? name : node.key + "." + name, nullptr, {}});
  return node.children.back();
}

Node MakeTree() {
  Node root;
  for (const auto& s : ConfigSettings()) {
    Node* at = &root;
    std::string_view rest = s->key();
    for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos;) {
      at = &ChildOf(*at, std::string(rest.substr(0, dot)));
      rest.remove_prefix(dot + 1);
    }
    ChildOf(*at, std::string(rest)).setting = s.get();
  }
  return root;
}

const Node& Tree() {
  static const Node tree = MakeTree();
  return tree;
}

void ReadNode(JsonReader& r, const Node& node, DaemonConfig& config, Found& found) {
  for (const Node& child : node.children) {
    if (child.setting != nullptr) {
      child.setting->Read(r, child.name, config);
      continue;
    }
    const nlohmann::json* object = r.Object(child.name);
    if (object == nullptr) continue;
    JsonReader sub(*object, r.PathOf(child.name), &found);
    ReadNode(sub, child, config, found);
    sub.Finish();
  }
}

const std::vector<std::string>* SectionDoc(const std::string& key) {
  for (const Section& s : ConfigSections()) {
    if (s.key == key) return &s.doc;
  }
  return nullptr;
}

// Prints `node`'s members at `depth` (1: the top level).
void PrintMembers(const Node& node, int depth, const DaemonConfig& config, std::string& out) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    const Node& child = node.children[i];
    const std::vector<std::string>* doc =
        child.setting != nullptr ? &child.setting->doc() : SectionDoc(child.key);
    const bool commented = doc != nullptr && !doc->empty();
    // At the top level a comment or an object starts a paragraph; "node" shares seed's.
    if (depth == 1 && i > 0 && (commented || child.setting == nullptr) && child.key != "node") {
      out += "\n";
    }
    if (commented) {
      for (const std::string& line : *doc) out += indent + "// " + line + "\n";
    }
    out += indent + "\"" + child.name + "\": ";
    if (child.setting != nullptr) {
      out += child.setting->Text(config);
    } else {
      out += "{\n";
      PrintMembers(child, depth + 1, config, out);
      out += indent + "}";
    }
    out += i + 1 < node.children.size() ? ",\n" : "\n";
  }
}

constexpr const char* kPreamble =
    "// neuron-monitord configuration (/etc/neuron-monitor/neuron-monitord.json).\n"
    "//\n"
    "// JSON with // and /* */ comments. Every key is optional: a key left out takes the default "
    "shown\n"
    "// here, so this file as shipped changes nothing. An unknown key is an error, so a misspelt "
    "key is\n"
    "// reported instead of ignored. Command-line flags override what this file says.\n"
    "// Durations are strings with a unit: \"500ms\", \"1s\", \"1m30s\", \"2h\" (ns, us, ms, s, "
    "m, h).\n";

}  // namespace

void ReadSettings(const nlohmann::json& json, DaemonConfig& config, Found& found) {
  JsonReader r(json, "", &found);
  ReadNode(r, Tree(), config, found);
  r.Finish();
}

void CheckSettings(const DaemonConfig& config, Found& found) {
  for (const auto& s : ConfigSettings()) {
    if (s->AppliesTo(config)) s->CheckAll(config, found);
  }
}

nlohmann::ordered_json SettingsToJson(const DaemonConfig& config) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& s : ConfigSettings()) {
    nlohmann::ordered_json* at = &json;
    std::string_view rest = s->key();
    for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos;) {
      at = &(*at)[std::string(rest.substr(0, dot))];
      rest.remove_prefix(dot + 1);
    }
    (*at)[std::string(rest)] = s->Value(config);
  }
  return json;
}

std::string SettingsFileText(const DaemonConfig& config) {
  std::string out = kPreamble;
  out += "{\n";
  PrintMembers(Tree(), 1, config, out);
  out += "}\n";
  return out;
}

}  // namespace neuronmon::daemon
