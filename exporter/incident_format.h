// neuron-ls --incidents: the incident bundles a daemon saved (docs/recorder.md, "Incidents") as a
// table, one bundle in full (the verdict, its evidence, the window, the configuration), or JSON.
// Everything shown comes from files (and, through them, other users' processes): text bound for
// the terminal is stripped of control characters. Pure functions over what was read.
#pragma once

#include <string>
#include <vector>

#include "neuronmon/v1/archive.pb.h"
#include "proto/common/status.h"

namespace neuronmon::exporter {

struct IncidentFile {
  std::string path;
  std::uint64_t bytes = 0;
  v1::ArchiveHeader header;  // header.incident() is unset for a file that is not a bundle
};

// Reads the headers of the bundles at `path` — a directory of them (oldest first) or one file.
// Files that cannot be read are left out with a line each in `problems`.
Result<std::vector<IncidentFile>> ReadIncidents(const std::string& path,
                                                std::vector<std::string>* problems);

// One line per bundle under a header row: TIME (UTC), VERDICT, HELD, RUNTIME, WINDOW, SIZE, FILE.
std::string RenderIncidentTable(const std::vector<IncidentFile>& files);
// One bundle in full.
std::string RenderIncident(const IncidentFile& file);
// A JSON array with one object per bundle: {"path", "bytes", "daemon_version", "hostname",
// "description", "incident": Incident as protobuf's JSON mapping, "config" as an object}.
std::string RenderIncidentsJson(const std::vector<IncidentFile>& files);

}  // namespace neuronmon::exporter
