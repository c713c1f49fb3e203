#include "tui/processes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "proto/names/names.h"
#include "tui/canvas.h"
#include "tui/format.h"

namespace neuronmon::tui {
namespace {

// The inventory's processes by pid (looked up once per runtime: not a scan per runtime).
std::map<std::uint32_t, const v1::Process*> InventoryProcesses(const Model& model) {
  std::map<std::uint32_t, const v1::Process*> out;
  for (const v1::Process& p : model.inventory().processes()) out.emplace(p.pid(), &p);
  return out;
}

std::vector<std::uint32_t> Sorted(std::set<std::uint32_t> ids) { return {ids.begin(), ids.end()}; }

// Cores from the inventory, else those the runtime's counters or memory name.
std::vector<std::uint32_t> CoresOf(const v1::RuntimeReport& r, const v1::Process* p) {
  std::set<std::uint32_t> ids;
  if (p != nullptr) ids.insert(p->core_ids().begin(), p->core_ids().end());
  if (ids.empty()) {
    for (const v1::CoreCounters& c : r.neuroncore_counters().cores()) ids.insert(c.index());
    for (const v1::CoreMemory& c : r.memory_used().cores()) ids.insert(c.index());
  }
  return Sorted(std::move(ids));
}

std::vector<std::uint32_t> DevicesOf(const std::vector<std::uint32_t>& cores, const v1::Process* p,
                                     std::uint32_t per_device) {
  std::set<std::uint32_t> ids;
  if (p != nullptr) ids.insert(p->device_indices().begin(), p->device_indices().end());
  if (ids.empty() && per_device > 0) {
    for (std::uint32_t c : cores) ids.insert(c / per_device);
  }
  return Sorted(std::move(ids));
}

// The mean utilization of its cores; none when the runtime's core counters are absent or carry an
// error (the backend cannot measure them).
std::optional<double> UtilizationOf(const v1::RuntimeReport& r) {
  if (!r.has_neuroncore_counters() || !r.neuroncore_counters().error().empty() ||
      r.neuroncore_counters().cores_size() == 0)
    return std::nullopt;
  double sum = 0;
  for (const v1::CoreCounters& c : r.neuroncore_counters().cores()) sum += c.utilization_percent();
  return sum / r.neuroncore_counters().cores_size();
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// -1, 0, 1 as a < b, a == b, a > b; unavailable figures compare separately (see SortProcessRows).
template <typename T>
int Compare(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// The figure `column` sorts by, for columns that can be unavailable.
std::optional<double> Figure(const ProcessRow& r, ProcessColumn column) {
  switch (column) {
    case ProcessColumn::kDeviceMemory:
      return r.device_bytes;
    case ProcessColumn::kHostMemory:
      return r.host_bytes;
    case ProcessColumn::kUtilization:
      return r.utilization;
    case ProcessColumn::kDevices:
      if (r.devices.empty()) return std::nullopt;
      return static_cast<double>(r.devices.front());
    case ProcessColumn::kCores:
      if (r.cores.empty()) return std::nullopt;
      return static_cast<double>(r.cores.size());
    default:
      return 0.0;
  }
}

int CompareBy(const ProcessRow& a, const ProcessRow& b, ProcessColumn column) {
  switch (column) {
    case ProcessColumn::kPid:
      return Compare(a.pid, b.pid);
    case ProcessColumn::kUser:
      return Compare(a.user, b.user);
    case ProcessColumn::kJob:
      return Compare(a.job, b.job);
    case ProcessColumn::kCommand:
      return Compare(a.command, b.command);
    case ProcessColumn::kVerdict:
      return Compare(std::make_pair(static_cast<int>(a.severity), static_cast<int>(a.verdict)),
                     std::make_pair(static_cast<int>(b.severity), static_cast<int>(b.verdict)));
    default:
      return Compare(*Figure(a, column), *Figure(b, column));
  }
}

void AddTo(ProcessRow& totals, const ProcessRow& r, int* util_count) {
  auto add = [](std::optional<double>& sum, const std::optional<double>& v) {
    if (v) sum = sum.value_or(0) + *v;
  };
  add(totals.device_bytes, r.device_bytes);
  add(totals.host_bytes, r.host_bytes);
  if (r.utilization) {
    totals.utilization = totals.utilization.value_or(0) + *r.utilization;
    ++*util_count;
  }
  std::set<std::uint32_t> devices(totals.devices.begin(), totals.devices.end());
  devices.insert(r.devices.begin(), r.devices.end());
  totals.devices.assign(devices.begin(), devices.end());
  std::set<std::uint32_t> cores(totals.cores.begin(), totals.cores.end());
  cores.insert(r.cores.begin(), r.cores.end());
  totals.cores.assign(cores.begin(), cores.end());
  if (r.verdict != v1::FINDING_KIND_UNSPECIFIED &&
      (totals.verdict == v1::FINDING_KIND_UNSPECIFIED || r.severity > totals.severity)) {
    totals.verdict = r.verdict;
    totals.severity = r.severity;
  }
}

}  // namespace

const char* ProcessColumnName(ProcessColumn column) {
  switch (column) {
    case ProcessColumn::kPid:
      return "PID";
    case ProcessColumn::kUser:
      return "USER";
    case ProcessColumn::kJob:
      return "JOB";
    case ProcessColumn::kDevices:
      return "DEVICES";
    case ProcessColumn::kCores:
      return "CORES";
    case ProcessColumn::kDeviceMemory:
      return "DEVICE MEM";
    case ProcessColumn::kHostMemory:
      return "HOST MEM";
    case ProcessColumn::kUtilization:
      return "UTIL";
    case ProcessColumn::kVerdict:
      return "VERDICT";
    case ProcessColumn::kCommand:
      return "COMMAND";
  }
  return "";
}

std::vector<ProcessRow> BuildProcessRows(const Model& model) {
  std::vector<ProcessRow> rows;
  const std::uint32_t per_device = CoresPerDevice(model.inventory());
  const std::map<std::uint32_t, const v1::Process*> inventory = InventoryProcesses(model);
  for (const RuntimeView& view : model.runtimes()) {
    const v1::RuntimeReport& r = view.report;
    const auto found = inventory.find(r.pid());
    const v1::Process* p = found == inventory.end() ? nullptr : found->second;
    ProcessRow row;
    row.pid = r.pid();
    row.tag = r.tag();
    const v1::Attribution& a =
        r.has_attribution() || p == nullptr ? r.attribution() : p->attribution();
    row.user = !a.user().empty() ? a.user() : a.has_uid() ? std::to_string(a.uid()) : "";
    row.job = JobOf(a);
    row.command = p != nullptr && !p->command().empty() ? p->command() : r.tag();
    row.cores = CoresOf(r, p);
    row.devices = DevicesOf(row.cores, p, per_device);
    // Memory the runtime could not report (its error), or only in part (a shared device), is
    // unavailable, not 0 and not the part.
    if (r.has_memory_used() && r.memory_used().error().empty() &&
        r.memory_used().device_unavailable().empty()) {
      row.device_bytes = static_cast<double>(r.memory_used().device_bytes());
      row.host_bytes = static_cast<double>(r.memory_used().host_bytes());
    }
    row.utilization = UtilizationOf(r);
    for (const v1::Finding& f : r.findings()) {
      if (row.verdict == v1::FINDING_KIND_UNSPECIFIED || f.severity() > row.severity) {
        row.verdict = f.kind();
        row.severity = f.severity();
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

bool MatchesFilter(const ProcessRow& row, const std::string& filter) {
  if (filter.empty()) return true;
  const std::string needle = Lower(filter);
  for (const std::string* field : {&row.command, &row.tag, &row.user, &row.job}) {
    if (Lower(*field).find(needle) != std::string::npos) return true;
  }
  return std::to_string(row.pid).find(needle) != std::string::npos;
}

void SortProcessRows(std::vector<ProcessRow>& rows, ProcessColumn column, bool descending) {
  std::stable_sort(rows.begin(), rows.end(), [&](const ProcessRow& a, const ProcessRow& b) {
    const bool a_has = Figure(a, column).has_value(), b_has = Figure(b, column).has_value();
    if (a_has != b_has) return a_has;  // unavailable last, whichever the direction
    if (a_has) {
      const int c = CompareBy(a, b, column);
      if (c != 0) return descending ? c > 0 : c < 0;
    }
    return a.pid < b.pid;
  });
}

std::vector<ProcessLine> ProcessLines(const std::vector<ProcessRow>& rows, bool tree) {
  std::vector<ProcessLine> lines;
  if (!tree) {
    for (std::size_t i = 0; i < rows.size(); ++i) lines.push_back({false, i, "", 0, {}});
    return lines;
  }
  std::vector<std::string> order;  // jobs by their first member; "" last
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto [it, fresh] = members.try_emplace(rows[i].job);
    if (fresh && !rows[i].job.empty()) order.push_back(rows[i].job);
    it->second.push_back(i);
  }
  if (members.count("")) order.push_back("");
  for (const std::string& job : order) {
    ProcessLine header{true, 0, job, 0, {}};
    int util_count = 0;
    for (std::size_t i : members[job]) {
      AddTo(header.totals, rows[i], &util_count);
      ++header.members;
    }
    if (util_count > 0) *header.totals.utilization /= util_count;
    lines.push_back(std::move(header));
    for (std::size_t i : members[job]) lines.push_back({false, i, "", 0, {}});
  }
  return lines;
}

std::vector<ProcessRow> VisibleProcessRows(const Model& model, const ProcessesView& view) {
  std::vector<ProcessRow> rows = BuildProcessRows(model);
  std::erase_if(rows, [&](const ProcessRow& r) { return !MatchesFilter(r, view.filter); });
  SortProcessRows(rows, view.sort, view.descending);
  return rows;
}

std::vector<std::uint32_t> ListedPids(const Model& model, const ProcessesView& view) {
  const std::vector<ProcessRow> rows = VisibleProcessRows(model, view);
  std::vector<std::uint32_t> pids;
  for (const ProcessLine& line : ProcessLines(rows, view.tree)) {
    if (!line.group) pids.push_back(rows[line.row].pid);
  }
  return pids;
}

std::uint32_t SelectedPid(const std::vector<std::uint32_t>& listed, const ProcessesView& view) {
  if (std::find(listed.begin(), listed.end(), view.selected) != listed.end()) return view.selected;
  return listed.empty() ? 0 : listed.front();
}

std::string RangesText(const std::vector<std::uint32_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

std::string ProcessCell(const ProcessRow& row, ProcessColumn column, int width) {
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  auto figure = [](const std::optional<double>& v, auto format) {
    return v ? format(*v) : std::string("n/a");
  };
  std::string text;
  switch (column) {
    case ProcessColumn::kPid:
      text = std::to_string(row.pid);
      break;
    case ProcessColumn::kUser:
      text = or_dash(row.user);
      break;
    case ProcessColumn::kJob:
      text = or_dash(row.job);
      break;
    case ProcessColumn::kDevices:
    case ProcessColumn::kCores: {
      const std::vector<std::uint32_t>& ids =
          column == ProcessColumn::kDevices ? row.devices : row.cores;
      text = ids.empty() ? "n/a" : RangesText(ids);
      // Too many ranges to read in the column: how many there are.
      if (TextWidth(text) > width) text = std::to_string(ids.size());
      break;
    }
    case ProcessColumn::kDeviceMemory:
      text = figure(row.device_bytes, [](double v) { return Bytes(v); });
      break;
    case ProcessColumn::kHostMemory:
      text = figure(row.host_bytes, [](double v) { return Bytes(v); });
      break;
    case ProcessColumn::kUtilization:
      text = figure(row.utilization, [](double v) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.1f%%", std::clamp(v, 0.0, 100.0));
        return std::string(buf);
      });
      break;
    case ProcessColumn::kVerdict:
      text = row.verdict == v1::FINDING_KIND_UNSPECIFIED ? "-" : FindingKindName(row.verdict);
      break;
    case ProcessColumn::kCommand:
      text = row.command;
      break;
  }
  // A user or job cut short says so (its end is often what tells pods apart).
  const bool name = column == ProcessColumn::kUser || column == ProcessColumn::kJob;
  if (name && width >= 2 && TextWidth(text) > width) {
    return std::string(TakeColumns(text, width - 1)) + "…";
  }
  return std::string(TakeColumns(text, std::max(0, width)));
}

}  // namespace neuronmon::tui
