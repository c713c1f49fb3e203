// The Processes view: a header naming the order and filter, column headings, one line per
// application (grouped by job, under a line of the group's totals), and a last line for the filter
// prompt, the signal confirmation or the count shown; the sort picker is drawn over the table.
#include <algorithm>
#include <utility>

#include "tui/process_signal.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

struct Column {
  ProcessColumn column;
  int width;
  bool right;  // figures are right-aligned
};

constexpr int kCommandMin = 12;

// The columns that fit `width`: COMMAND takes what the others leave; when they leave less than
// kCommandMin, the least needed columns go first (cores, devices, host memory), then JOB narrows,
// then user and job go.
std::vector<Column> Columns(int width) {
  std::vector<Column> cols = {
      {ProcessColumn::kPid, 7, true},        {ProcessColumn::kUser, 10, false},
      {ProcessColumn::kJob, 20, false},      {ProcessColumn::kDevices, 8, false},
      {ProcessColumn::kCores, 6, false},     {ProcessColumn::kDeviceMemory, 10, true},
      {ProcessColumn::kHostMemory, 9, true}, {ProcessColumn::kUtilization, 6, true},
      {ProcessColumn::kVerdict, 16, false},
  };
  auto used = [&] {
    int w = 0;
    for (const Column& c : cols) w += c.width + 1;
    return w;
  };
  for (ProcessColumn drop :
       {ProcessColumn::kCores, ProcessColumn::kDevices, ProcessColumn::kHostMemory,
        ProcessColumn::kJob, ProcessColumn::kUser, ProcessColumn::kJob}) {
    if (width - used() >= kCommandMin) break;
    auto it =
        std::find_if(cols.begin(), cols.end(), [&](const Column& c) { return c.column == drop; });
    if (it == cols.end()) continue;
    // The first time, JOB only narrows (an ellipsis says when it is cut).
    if (drop == ProcessColumn::kJob && it->width > 12) {
      it->width = 12;
    } else {
      cols.erase(it);
    }
  }
  cols.push_back({ProcessColumn::kCommand, std::max(0, width - used()), false});
  return cols;
}

std::string Align(const std::string& text, int width, bool right) {
  const int pad = std::max(0, width - TextWidth(text));
  return right ? std::string(static_cast<std::size_t>(pad), ' ') + text
               : text + std::string(static_cast<std::size_t>(pad), ' ');
}

Role VerdictRole(v1::Severity s) {
  return s == v1::SEVERITY_CRITICAL  ? Role::kCritical
         : s == v1::SEVERITY_WARNING ? Role::kWarning
                                     : Role::kNormal;
}

void DrawHeadings(Ctx& ctx, const std::vector<Column>& cols, int y) {
  Canvas& c = ctx.canvas;
  const ProcessesView& v = ctx.view.procs;
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kHeader);
  int x = 0;
  for (const Column& col : cols) {
    std::string name = ProcessColumnName(col.column);
    if (col.column == v.sort) {
      name += v.descending ? (ctx.view.utf8 ? "▼" : "v") : (ctx.view.utf8 ? "▲" : "^");
    }
    Text(c, x, y, col.width, Align(name, col.width, col.right), Role::kHeader);
    x += col.width + 1;
  }
}

// A group's line (tree mode): its job, how many processes, and their totals, as one text.
void DrawGroup(Ctx& ctx, const ProcessLine& group, int y) {
  Canvas& c = ctx.canvas;
  const ProcessRow& t = group.totals;
  std::string text = std::string(ctx.view.utf8 ? "▾ " : "- ") +
                     (group.job.empty() ? "no job" : "job " + group.job) + " (" +
                     std::to_string(group.members) +
                     (group.members == 1 ? " process)" : " processes)");
  text += ": devices " + ProcessCell(t, ProcessColumn::kDevices, 16) + ", " +
          (t.cores.empty() ? "n/a" : std::to_string(t.cores.size())) + " cores, device mem " +
          ProcessCell(t, ProcessColumn::kDeviceMemory, 16) + ", host mem " +
          ProcessCell(t, ProcessColumn::kHostMemory, 16) + ", util " +
          ProcessCell(t, ProcessColumn::kUtilization, 16) + ", verdict " +
          ProcessCell(t, ProcessColumn::kVerdict, 24);
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kHeader);
  Text(c, 0, y, c.width(), text, Role::kHeader);
}

// One process's line.
void DrawRow(Ctx& ctx, const std::vector<Column>& cols, const ProcessRow& row, int y,
             bool selected) {
  Canvas& c = ctx.canvas;
  const Role base = selected ? Role::kSelected : Role::kNormal;
  if (selected) c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), base);
  int x = 0;
  for (const Column& col : cols) {
    const ProcessColumn k = col.column;
    // Grouped, a process's command is indented under its group's line.
    const std::string indent = k == ProcessColumn::kCommand && ctx.view.procs.tree ? "  " : "";
    const std::string text =
        indent + ProcessCell(row, k, col.width - static_cast<int>(indent.size()));
    const Role role = selected || k != ProcessColumn::kVerdict ? base : VerdictRole(row.severity);
    // A figure the backend cannot measure reads as such, not as a number.
    Text(c, x, y, col.width, Align(text, col.width, col.right),
         text == "n/a" && !selected ? Role::kDim : role);
    x += col.width + 1;
  }
}

void DrawPromptLine(Ctx& ctx, int y, int listed, int total) {
  Canvas& c = ctx.canvas;
  const ProcessesView& v = ctx.view.procs;
  if (v.confirm_pid) {
    std::string choices;
    for (const SignalChoice& s : SignalChoices())
      choices += std::string(choices.empty() ? "" : " ") + s.key + ":" + (s.name + 3);
    // A long command is cut so that the keys stay in view.
    std::string command(TakeColumns(v.confirm_command, 40));
    if (command.size() < v.confirm_command.size()) command += ctx.glyphs.more;
    const std::string text = " Send " + SignalName(v.confirm_signal) + " to pid " +
                             std::to_string(*v.confirm_pid) + " (" + command +
                             ")?  y/Enter: send  n/Esc: cancel  " + choices;
    c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kBanner);
    Text(c, 0, y, c.width(), text, Role::kBanner);
    return;
  }
  if (v.filtering) {
    const int x = Text(c, 0, y, c.width(), " Filter: ", Role::kHeader);
    Text(c, x, y, c.width() - x, v.filter + "_   (Enter keeps it, Esc clears it)", Role::kNormal);
    return;
  }
  std::string status = " " + std::to_string(listed) + " of " + std::to_string(total) + " shown";
  if (!v.filter.empty()) status += " (filter \"" + v.filter + "\"; / changes it, Esc clears it)";
  Text(c, 0, y, c.width(), status, Role::kDim);
}

void DrawPicker(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  const int h = std::min(kProcessColumns + 2, rows);
  const int w = std::min(24, c.width());
  if (h < 3 || w < 8) return;
  for (int r = 0; r < h; ++r)
    c.Put(1, y + r, std::string(static_cast<std::size_t>(w), ' '), Role::kHelp);
  Text(c, 2, y, w - 2, "Sort by (Enter, Esc)", Role::kHelp);
  for (int i = 0; i < kProcessColumns && i + 1 < h; ++i) {
    const auto col = static_cast<ProcessColumn>(i);
    const bool on = col == ctx.view.procs.pick;
    const std::string mark = col == ctx.view.procs.sort ? "* " : "  ";
    if (on) c.Put(1, y + 1 + i, std::string(static_cast<std::size_t>(w), ' '), Role::kSelected);
    Text(c, 2, y + 1 + i, w - 2, mark + ProcessColumnName(col), on ? Role::kSelected : Role::kHelp);
  }
}

}  // namespace

void DrawProcesses(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  const ProcessesView& v = ctx.view.procs;
  const std::vector<ProcessRow> rows_shown = VisibleProcessRows(ctx.model, v);
  const int total = static_cast<int>(ctx.model.runtimes().size());
  std::string title = "Processes: " + std::to_string(total) + " Neuron applications, by " +
                      ProcessColumnName(v.sort) + (v.descending ? " (descending)" : " (ascending)");
  if (v.tree) title += ", grouped by job";
  if (rows <= 0) return;
  Header(ctx, y, title);
  if (rows <= 1) return;
  const std::vector<Column> cols = Columns(c.width());
  DrawHeadings(ctx, cols, y + 1);
  const bool prompt_line = rows >= 4;
  const int page = std::max(0, rows - 2 - (prompt_line ? 1 : 0));
  ctx.frame.process_page = std::max(1, page);
  const std::vector<ProcessLine> lines = ProcessLines(rows_shown, v.tree);
  std::vector<std::uint32_t> listed;
  for (const ProcessLine& l : lines) {
    if (!l.group) listed.push_back(rows_shown[l.row].pid);
  }
  const std::uint32_t selected = SelectedPid(listed, v);
  int cursor = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].group && rows_shown[lines[i].row].pid == selected) cursor = static_cast<int>(i);
  }
  const int count = static_cast<int>(lines.size());
  const int first = std::clamp(cursor - page + 1, 0, std::max(0, count - page));
  if (lines.empty() && page > 0) {
    Text(c, 1, y + 2, c.width() - 1,
         !ctx.model.has_data() ? "waiting for data"
         : total == 0          ? "no Neuron applications"
                               : "no application matches the filter",
         Role::kDim);
  }
  for (int i = 0; i < page && first + i < count; ++i) {
    const ProcessLine& l = lines[static_cast<std::size_t>(first + i)];
    const int row_y = y + 2 + i;
    if (l.group) {
      DrawGroup(ctx, l, row_y);
      continue;
    }
    const ProcessRow& r = rows_shown[l.row];
    DrawRow(ctx, cols, r, row_y, r.pid == selected);
    ctx.frame.hits.push_back({Hit::Kind::kProcess, row_y, 0, c.width(), static_cast<int>(r.pid)});
  }
  if (prompt_line) DrawPromptLine(ctx, y + rows - 1, static_cast<int>(listed.size()), total);
  if (v.picking) DrawPicker(ctx, y + 1, rows - 1);
}

}  // namespace neuronmon::tui
