#include "exporter/incident_format.h"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "proto/archive/archive.h"
#include "proto/common/duration.h"
#include "proto/common/terminal_text.h"
#include "proto/names/names.h"

namespace neuronmon::exporter {
namespace {

WallTime At(std::int64_t unix_ns) { return FromUnixNanos(unix_ns); }

std::string Seconds(std::int64_t ns) {
  return FormatDuration(std::chrono::seconds(std::max<std::int64_t>(ns, 0) / 1'000'000'000));
}

std::string Size(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20)) {
    std::snprintf(buf, sizeof buf, "%.1fMiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1fKiB", static_cast<double>(bytes) / 1024);
  }
  return buf;
}

std::string Pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string Runtime(const v1::Incident& i) {
  return SanitizeForTerminal(i.subject()) + " (" + std::to_string(i.pid()) + ")";
}

void AppendFinding(std::string& out, const v1::Finding& f) {
  const std::string who =
      f.pid() == 0 ? SanitizeForTerminal(f.subject())
                   : SanitizeForTerminal(f.subject()) + " (pid " + std::to_string(f.pid()) + ")";
  out += "    " + who + ": " + FindingKindName(f.kind()) + ", " + SeverityName(f.severity()) + "\n";
  if (!f.summary().empty()) out += "      " + SanitizeForTerminal(f.summary()) + "\n";
  if (!f.advice().empty()) out += "      advice: " + SanitizeForTerminal(f.advice()) + "\n";
  for (const v1::Evidence& e : f.evidence()) {
    std::string line = "      evidence: " + SanitizeForTerminal(e.name()) + " = " +
                       Number(e.value()) + " " + SanitizeForTerminal(e.unit());
    if (!e.comparison().empty()) {
      line += " (" + SanitizeForTerminal(e.comparison()) + " " + Number(e.threshold()) + ")";
    }
    out += line + "\n";
  }
}

}  // namespace

Result<std::vector<IncidentFile>> ReadIncidents(const std::string& path,
                                                std::vector<std::string>* problems) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::NotFound("no incidents at " + path);
  std::vector<std::string> paths;
  if (S_ISDIR(st.st_mode)) {
    Result<std::vector<std::string>> listed = archive::ListArchive(path);
    if (!listed.ok()) return listed.status();
    paths = std::move(*listed);
  } else {
    paths.push_back(path);
  }
  std::vector<IncidentFile> out;
  for (const std::string& p : paths) {
    Result<archive::ArchiveFile> index = archive::IndexFile(p);
    if (!index.ok()) {
      if (problems != nullptr) problems->push_back(index.status().message());
      continue;
    }
    IncidentFile f;
    f.path = p;
    if (::stat(p.c_str(), &st) == 0) f.bytes = static_cast<std::uint64_t>(st.st_size);
    f.header = std::move(index->header);
    out.push_back(std::move(f));
  }
  return out;
}

std::string RenderIncidentTable(const std::vector<IncidentFile>& files) {
  std::string out = Pad("TIME (UTC)", 22) + Pad("VERDICT", 18) + Pad("HELD", 8) +
                    Pad("RUNTIME", 28) + Pad("WINDOW", 8) + Pad("SIZE", 10) + "FILE\n";
  for (const IncidentFile& f : files) {
    const v1::Incident& i = f.header.incident();
    if (!f.header.has_incident()) {
      out += Pad("-", 22) + Pad("(not an incident)", 18) + Pad("", 8) + Pad("", 28) + Pad("", 8) +
             Pad(Size(f.bytes), 10) + SanitizeForTerminal(f.path) + "\n";
      continue;
    }
    std::string verdict = FindingKindName(i.kind());
    if (i.also_size() > 0) verdict += "+" + std::to_string(i.also_size());
    out += Pad(archive::FormatUtc(At(i.declared_unix_ns())), 22) + Pad(verdict, 18) +
           Pad(Seconds(i.declared_unix_ns() - i.since_unix_ns()), 8) + Pad(Runtime(i), 28) +
           Pad(Seconds(i.window_end_unix_ns() - i.window_start_unix_ns()), 8) +
           Pad(Size(f.bytes), 10) + SanitizeForTerminal(f.path) + "\n";
  }
  return out;
}

std::string RenderIncident(const IncidentFile& file) {
  const v1::ArchiveHeader& h = file.header;
  if (!h.has_incident()) return SanitizeForTerminal(file.path) + ": not an incident bundle\n";
  const v1::Incident& i = h.incident();
  std::string out = "incident " + SanitizeForTerminal(i.id()) + "\n";
  out += "  verdict:  " + std::string(FindingKindName(i.kind())) + " on " + Runtime(i) + " since " +
         archive::FormatUtc(At(i.since_unix_ns())) + ", declared " +
         archive::FormatUtc(At(i.declared_unix_ns())) + " (seq " +
         std::to_string(i.declared_seq()) + ")\n";
  out += "  summary:  " + SanitizeForTerminal(i.summary()) + "\n";
  if (i.also_size() > 0) {
    std::string also;
    for (int k : i.also()) {
      also += (also.empty() ? "" : ", ") +
              std::string(FindingKindName(static_cast<v1::FindingKind>(k)));
    }
    out += "  also:     " + also + "\n";
  }
  out += "  window:   " + archive::FormatUtc(At(i.window_start_unix_ns())) + " to " +
         archive::FormatUtc(At(i.window_end_unix_ns())) + "\n";
  out += "  replay:   neuron-top --replay " + SanitizeForTerminal(file.path) + "\n";
  out += "  recorded: by neuron-monitord " + SanitizeForTerminal(h.daemon_version()) + " on " +
         SanitizeForTerminal(h.hostname().empty() ? "?" : h.hostname()) + ", " +
         SanitizeForTerminal(h.description()) + "\n";
  out += "  findings when declared:\n";
  for (const v1::Finding& f : i.findings()) AppendFinding(out, f);
  if (i.findings_after_size() > 0) {
    out += "  findings at the window's end:\n";
    for (const v1::Finding& f : i.findings_after()) AppendFinding(out, f);
  }
  if (!i.config().empty()) {
    out += "  configuration:\n";
    std::string line;
    for (char c : i.config() + "\n") {
      if (c != '\n') {
        line += c;
        continue;
      }
      out += "    " + SanitizeForTerminal(line) + "\n";
      line.clear();
    }
  }
  return out;
}

std::string RenderIncidentsJson(const std::vector<IncidentFile>& files) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  for (const IncidentFile& f : files) {
    nlohmann::ordered_json entry = {{"path", f.path},
                                    {"bytes", f.bytes},
                                    {"daemon_version", f.header.daemon_version()},
                                    {"hostname", f.header.hostname()},
                                    {"description", f.header.description()}};
    v1::Incident incident = f.header.incident();
    const std::string config = incident.config();
    incident.clear_config();
    // Text that is not JSON (a file not written by the daemon) goes in as a string.
    const auto parsed = [](const std::string& text) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
      return j.is_discarded() ? nlohmann::ordered_json(text) : j;
    };
    std::string json;
    if (f.header.has_incident() &&
        google::protobuf::util::MessageToJsonString(incident, &json, options).ok()) {
      entry["incident"] = parsed(json);
    } else {
      entry["incident"] = nullptr;
    }
    entry["config"] = config.empty() ? nlohmann::ordered_json(nullptr) : parsed(config);
    out.push_back(std::move(entry));
  }
  return out.dump(2) + "\n";
}

}  // namespace neuronmon::exporter
