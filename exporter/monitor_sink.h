// MonitorSink: what the neuron-monitor program does with each client event, without any I/O. It
// merges reports into a MonitorState (one per program, fed by every subscription), renders one
// complete JSON document per report for stdout, formats the notes for stderr (gaps, refusals,
// disconnects, daemon notices, progress at higher verbosity) and tells when `--count` documents
// were produced. The caller connects, polls and writes what it is handed. Notes may carry text
// from the daemon: it is stripped of control characters (SanitizeForTerminal); documents are not
// (their JSON writer escapes). The sink owns its state and buffers. Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "client/client.h"
#include "exporter/monitor_json.h"

namespace neuronmon::exporter {

struct MonitorSinkOptions {
  int verbose = 0;          // 1: connections and every daemon notice; 2: also each report's seq
  std::uint64_t count = 0;  // done after this many documents; 0: never
  bool extensions = true;   // render neuronmon's additive groups
  // Events (--events) rather than reports: each is a document. Without `follow`, done once the
  // events the daemon kept when first connected are printed.
  bool events = false;
  bool follow = false;
};

// What to write after one event, in this order: `notes` to stderr, then `document` to stdout.
struct MonitorOutput {
  std::string notes;     // zero or more lines "neuron-monitor: <text>\n"
  std::string document;  // empty, or one complete JSON document and '\n'
  bool done = false;     // the count was reached with this document: stop after writing it
};

// "neuron-monitor: " + SanitizeForTerminal(text) + "\n": one line for stderr.
std::string MonitorNote(std::string_view text);

class MonitorSink {
 public:
  explicit MonitorSink(const MonitorSinkOptions& options);

  // Handles one event of subscription `source` (the index of the client it came from; see
  // MonitorState::Apply). The result stays valid until the next call; its buffers are reused.
  // Events after `done` are still handled. REQUIRES: source < MonitorState::kMaxSources.
  const MonitorOutput& Handle(const client::Event& event, std::size_t source);

  // The note for a client that connected to `endpoint_description`: empty below verbose 1.
  std::string ConnectedNote(std::string_view endpoint_description) const;
  // The note for a client that stopped for good (the program then exits with status 1).
  static std::string GaveUpNote(std::string_view endpoint_description);

  const MonitorState& state() const { return state_; }
  // Documents rendered so far.
  std::uint64_t documents() const { return documents_; }

 private:
  void RenderReport(const v1::Report& report, std::size_t source);
  void RenderEvent(const v1::Event& event);
  void AddNote(std::string_view text);

  MonitorSinkOptions options_;
  RenderOptions render_;
  MonitorState state_;
  MonitorOutput output_;
  std::uint64_t documents_ = 0;
  std::optional<std::uint64_t> events_until_;  // without follow: the newest kept at the start
};

}  // namespace neuronmon::exporter
