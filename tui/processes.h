// The Processes view's table (like htop's and nvtop's process lists): one row per Neuron
// application — pid, user, job or pod, devices and cores, device and host memory, utilization,
// verdict and command — built from the Model, then filtered, sorted and, in tree mode, grouped
// by job with a header line carrying each group's totals. A figure the backend cannot measure is
// unavailable (std::nullopt, shown "n/a"), never 0. Pure; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tui/model.h"

namespace neuronmon::tui {

enum class ProcessColumn {
  kPid,
  kUser,
  kJob,
  kDevices,
  kCores,
  kDeviceMemory,
  kHostMemory,
  kUtilization,
  kVerdict,
  kCommand,
};
inline constexpr int kProcessColumns = 10;
// The heading shown above the column ("PID", "DEVICE MEM", ...).
const char* ProcessColumnName(ProcessColumn column);

struct ProcessRow {
  std::uint32_t pid = 0;
  std::string tag;
  std::string user;                    // "" when unknown; "uid 1000" when only the uid is known
  std::string job;                     // JobOf() (proto/names); "" when none
  std::string command;                 // the inventory's command line, else the tag
  std::vector<std::uint32_t> devices;  // ascending; empty when unknown
  std::vector<std::uint32_t> cores;    // global logical cores, ascending; empty when unknown
  std::optional<double> device_bytes;
  std::optional<double> host_bytes;
  std::optional<double> utilization;                       // mean percent over its cores
  v1::FindingKind verdict = v1::FINDING_KIND_UNSPECIFIED;  // its worst finding; none: unspecified
  v1::Severity severity = v1::SEVERITY_UNSPECIFIED;
};

// One row per runtime of `model`, in pid order. Command, devices and cores come from the
// inventory's process with the same pid when there is one, else from the runtime's counters.
std::vector<ProcessRow> BuildProcessRows(const Model& model);

// The longest filter kept; longer input is ignored.
inline constexpr std::size_t kMaxFilterLength = 64;
// Whether `row` matches `filter`: a case-insensitive substring of its command, tag, user, job or
// pid. The empty filter matches every row.
bool MatchesFilter(const ProcessRow& row, const std::string& filter);

// Sorts `rows` by `column` (ties by pid ascending); unavailable figures sort last either way.
void SortProcessRows(std::vector<ProcessRow>& rows, ProcessColumn column, bool descending);

// One line of the table: a group header (tree mode) or a process.
struct ProcessLine {
  bool group = false;
  std::size_t row = 0;  // a process line: index into the rows
  // A group header: its job ("" for processes without one), member count and totals.
  std::string job;
  int members = 0;
  ProcessRow totals;  // memory summed, utilization averaged, worst verdict
};

// The table's lines: every row in order, or (tree) grouped under their job, groups in the order
// of their first member, processes without a job last.
std::vector<ProcessLine> ProcessLines(const std::vector<ProcessRow>& rows, bool tree);

// What the Processes view keeps between frames.
struct ProcessesView {
  bool shown = false;
  ProcessColumn sort = ProcessColumn::kUtilization;
  bool descending = true;
  bool tree = false;
  std::string filter;                        // printable ASCII, at most kMaxFilterLength
  bool filtering = false;                    // the filter prompt is open
  bool picking = false;                      // the sort-column picker is open
  ProcessColumn pick = ProcessColumn::kPid;  // the picker's highlighted column
  std::uint32_t selected = 0;                // pid of the selected row; 0: the first
  // A signal waiting for confirmation: its target and the signal (SIGTERM unless changed).
  std::optional<std::uint32_t> confirm_pid;
  std::string confirm_command;
  int confirm_signal = 15;
};

// The rows the view shows: built, filtered and sorted as `view` says.
std::vector<ProcessRow> VisibleProcessRows(const Model& model, const ProcessesView& view);

// The pids in the order the table lists them (tree mode: group by group).
std::vector<std::uint32_t> ListedPids(const Model& model, const ProcessesView& view);
// The row the view selects: `view.selected` while it is listed, else the first listed; 0 when
// nothing is.
std::uint32_t SelectedPid(const std::vector<std::uint32_t>& listed, const ProcessesView& view);

// "0-3", "0-3,8,10-11": ascending ids as ranges.
std::string RangesText(const std::vector<std::uint32_t>& ids);
// The text of `column` for `row`, at most `width` columns ("n/a" for unavailable figures; a user
// or job too long for it ends in "…").
std::string ProcessCell(const ProcessRow& row, ProcessColumn column, int width);

}  // namespace neuronmon::tui
