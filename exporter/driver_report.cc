#include "exporter/driver_report.h"

#include <ostream>
#include <vector>

#include "exporter/json_writer.h"
#include "neurondev/sources.h"
#include "neurondev/sysfs_tree.h"
#include "proto/common/driver_version.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::exporter {
namespace {

void Strings(JsonWriter& w, std::string_view key, const std::vector<std::string>& values) {
  w.Key(key);
  w.BeginArray();
  for (const std::string& v : values) w.String(v);
  w.EndArray();
}

void Lines(std::ostream& out, const char* what, const std::vector<std::string>& values) {
  for (const std::string& v : values) out << "  " << what << SanitizeForTerminal(v) << "\n";
}

}  // namespace

std::string LayoutGeneration(const std::string& driver_version) {
  const std::optional<DriverVersion> v = ParseDriverVersion(driver_version);
  if (!v || v->parts[0] != 2) return "unknown";
  if (v->AtLeast({2, 31})) return "2.31+ (reorganised)";
  if (v->AtLeast({2, 30, 2})) return "2.30.2";
  if (v->AtLeast({2, 28})) return "2.28-2.30.1";
  return v->AtLeast({2, 24}) ? "2.24-2.27" : "before 2.24";
}

int PrintDriverReport(const neurondev::HostOptions& host, bool json, std::ostream& out,
                      std::ostream& err) {
  const std::string& sysfs_root = host.sysfs_root;
  const neurondev::SysfsTree tree(sysfs_root);
  Result<std::vector<int>> devices = tree.ListDevices();
  if (!devices.ok() || devices->empty()) {
    err << "neuron-ls: no Neuron devices under " << SanitizeForTerminal(sysfs_root)
        << (devices.ok() ? " (is the aws-neuronx-dkms driver loaded?)"
                         : ": " + SanitizeForTerminal(devices.status().message()))
        << "\n";
    return 1;
  }
  const std::string version = tree.DriverVersion();
  const std::string generation = LayoutGeneration(version);
  const neurondev::SourceFacts facts = neurondev::ProbeSources(host);
  const std::vector<neurondev::SignalSource> sources = neurondev::SignalSources(facts);
  if (json) {
    std::string text;
    JsonWriter w(text, JsonWriter::Style::kIndented);
    w.BeginObject();
    w.Key("sysfs_root");
    w.String(sysfs_root);
    w.Key("driver_version");
    w.String(version);
    w.Key("layout_generation");
    w.String(generation);
    w.Key("devices");
    w.BeginArray();
    for (int n : *devices) {
      const neurondev::NodeIndex nodes = tree.IndexDevice(n, version);
      w.BeginObject();
      w.Key("neuron_device");
      w.Int(n);
      Strings(w, "found", nodes.found());
      w.Key("moved");
      w.BeginArray();
      for (const auto& m : nodes.moved()) {
        w.BeginObject();
        w.Key("node");
        w.String(m.canonical);
        w.Key("path");
        w.String(m.found);
        w.EndObject();
      }
      w.EndArray();
      Strings(w, "missing", nodes.missing());
      Strings(w, "unknown", nodes.unknown());
      w.Key("truncated");
      w.Bool(nodes.truncated());
      w.EndObject();
    }
    w.EndArray();
    w.Key("datastores");
    w.String(facts.datastores);
    w.Key("datastores_unavailable");
    w.String(facts.datastores_unavailable);
    w.Key("sources");
    w.BeginArray();
    for (const neurondev::SignalSource& s : sources) {
      w.BeginObject();
      w.Key("signal");
      w.String(s.signal);
      Strings(w, "sources", s.sources);
      w.Key("unavailable");
      w.String(s.unavailable);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    out << text << "\n";
    return 0;
  }
  out << "driver: " << (version.empty() ? "version unknown" : SanitizeForTerminal(version))
      << ", layout " << generation << " (" << SanitizeForTerminal(sysfs_root) << ")\n";
  for (int n : *devices) {
    const neurondev::NodeIndex nodes = tree.IndexDevice(n, version);
    out << "neuron" << n << ": " << nodes.found().size() << " nodes where expected, "
        << nodes.moved().size() << " moved, " << nodes.missing().size() << " missing, "
        << nodes.unknown().size() << " unknown" << (nodes.truncated() ? " (walk cut short)" : "")
        << "\n";
    for (const auto& m : nodes.moved()) {
      out << "  moved:   " << SanitizeForTerminal(m.canonical) << " -> "
          << SanitizeForTerminal(m.found) << "\n";
    }
    Lines(out, "missing: ", nodes.missing());
    Lines(out, "unknown: ", nodes.unknown());
  }
  out << "runtime datastores: "
      << SanitizeForTerminal(facts.datastores.empty()
                                 ? "unavailable: " + facts.datastores_unavailable
                                 : facts.datastores)
      << "\nsources (the first serves, then the fallbacks in order):\n";
  for (const neurondev::SignalSource& s : sources) {
    out << "  " << s.signal << ": ";
    if (s.sources.empty()) out << "unavailable: " << SanitizeForTerminal(s.unavailable);
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
      out << (i == 0 ? "" : "; then ") << SanitizeForTerminal(s.sources[i]);
    }
    out << "\n";
  }
  return 0;
}

}  // namespace neuronmon::exporter
