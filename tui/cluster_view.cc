#include "tui/cluster_view.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "proto/names/names.h"
#include "tui/format.h"

namespace neuronmon::tui {
namespace {

using client::ClusterHost;
using client::HostState;

constexpr int kNameWidth = 22;
constexpr int kBarWidth = 20;

Role SeverityRole(v1::Severity s) {
  switch (s) {
    case v1::SEVERITY_CRITICAL:
      return Role::kCritical;
    case v1::SEVERITY_WARNING:
      return Role::kWarning;
    case v1::SEVERITY_INFO:
      return Role::kGood;
    default:
      return Role::kDim;
  }
}

std::string Pad(std::string s, int width) {
  if (TextWidth(s) > width) s = std::string(TakeColumns(s, width));
  s.append(static_cast<std::size_t>(std::max(0, width - TextWidth(s))), ' ');
  return s;
}

// Names in the order a person expects: digit runs compare as numbers, so ip-10-0-0-9 comes
// before ip-10-0-0-10.
bool NaturalLess(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] == '0') ++ei;  // leading zeros do not count
      while (ej < b.size() && b[ej] == '0') ++ej;
      std::size_t ni = ei, nj = ej;
      while (ni < a.size() && digit(a[ni])) ++ni;
      while (nj < b.size() && digit(b[nj])) ++nj;
      if (ni - ei != nj - ej) return ni - ei < nj - ej;
      const int c = a.compare(ei, ni - ei, b, ej, nj - ej);
      if (c != 0) return c < 0;
      i = ni;
      j = nj;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

constexpr int kBodyTop = 4;  // the first row of the body

// A line of the body: a job heading, or a host's row.
struct Line {
  bool heading = false;
  std::string text;
  std::size_t position = 0;  // display position of the host
};

// " neuron-top 1.2  cluster: 6 hosts, 5 up, 1 down  sort: name  refresh 1.0s" on row 0.
void DrawTitle(const std::vector<ClusterHost>& hosts, const ClusterViewState& state, Canvas& c) {
  std::size_t up = 0, down = 0;
  for (const ClusterHost& h : hosts) {
    up += h.state == HostState::kUp ? 1 : 0;
    down += h.state == HostState::kDown ? 1 : 0;
  }
  char title[200];
  std::snprintf(title, sizeof title,
                " neuron-top %s  cluster: %zu hosts, %zu up, %zu down  sort: %s  refresh %.1fs",
                state.version.c_str(), hosts.size(), up, down, SortName(state.sort),
                state.refresh_seconds);
  c.Put(0, 0, Pad(title, c.width()), Role::kTitle);
}

// The cluster's verdict: its kind, then its summary on rows 1 and 2, wrapped at words; cut with
// "..." past that.
void DrawVerdict(const v1::Finding& v, Canvas& c) {
  const int w = c.width();
  const std::string kind = FindingKindName(v.kind());
  c.Put(1, 1, kind, SeverityRole(v.severity()));
  const int indent = 2 + TextWidth(kind);
  std::vector<std::string> summary = WrapWords(v.summary(), w - indent, w - indent);
  if (summary.size() > 2) {
    summary.resize(2);
    summary[1] = std::string(TakeColumns(summary[1], std::max(0, w - indent - 3))) + "...";
  }
  for (std::size_t k = 0; k < summary.size(); ++k)
    c.Put(indent, 1 + static_cast<int>(k), summary[k], Role::kNormal);
}

void DrawHeader(Canvas& c) {
  const std::string header = Pad("HOST", kNameWidth) + " " + Pad("STATE", 6) + " " +
                             Pad("TYPE", 15) + " " + Pad("DEV", 3) + " " +
                             Pad("UTILIZATION", kBarWidth + 9) + " " + Pad("HBM", 7) + " " +
                             Pad("COLL p99", 8) + " VERDICT";
  c.Put(0, 3, Pad(header, c.width()), Role::kHeader);
}

// "job: python train.py (4 hosts, median 52% busy, 41% in collectives)", cut to fit `w`.
std::string JobHeading(const client::ClusterJob& job, int w) {
  char buf[96];
  std::snprintf(buf, sizeof buf, " (%zu hosts, median %.0f%% busy, %.0f%% in collectives)",
                job.hosts.size(), job.median_utilization, 100 * job.median_collective_share);
  const std::string name =
      job.command.empty() ? std::string("no application") : "job: " + job.command;
  return std::string(TakeColumns(name, std::max(0, w - 60))) + buf;
}

// The body: a job heading before each job's first host, then one row per host; hosts of no job
// under "not reporting yet".
std::vector<Line> BodyLines(const client::ClusterAnalysis& analysis,
                            const std::vector<std::size_t>& order, int w) {
  std::vector<Line> lines;
  std::map<std::size_t, const client::ClusterJob*> job_of;
  for (const client::ClusterJob& j : analysis.jobs) {
    for (std::size_t i : j.hosts) job_of[i] = &j;
  }
  const client::ClusterJob* current = nullptr;
  bool unassigned_heading = false;
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    auto it = job_of.find(order[pos]);
    const client::ClusterJob* job = it == job_of.end() ? nullptr : it->second;
    if (job != nullptr && job != current) {
      lines.push_back({true, JobHeading(*job, w), 0});
      current = job;
    } else if (job == nullptr && !unassigned_heading) {
      lines.push_back({true, "not reporting yet", 0});
      unassigned_heading = true;
    }
    lines.push_back({false, "", pos});
  }
  return lines;
}

// Keeps the selected host's line among the `body_rows` shown from `state.top`.
void ScrollToSelected(const std::vector<Line>& lines, int body_rows, ClusterViewState& state) {
  int selected_line = 0;
  for (std::size_t l = 0; l < lines.size(); ++l) {
    if (!lines[l].heading && lines[l].position == state.selected)
      selected_line = static_cast<int>(l);
  }
  if (selected_line < state.top) state.top = std::max(0, selected_line - 1);
  if (selected_line >= state.top + body_rows) state.top = selected_line - body_rows + 1;
}

// A reporting host's figures from column `x`: type, devices, utilization bar, HBM, collective
// p99. Returns the verdict's column.
int DrawFigures(const ClusterHost& h, int x, int y, Canvas& c) {
  const char* tick = "|";
  c.Put(x, y, Pad(h.instance_type, 15), Role::kNormal);
  x += 16;
  c.Put(x, y, Pad(std::to_string(h.devices), 3), Role::kValue);
  x += 4;
  const double u = h.summary.utilization_percent();
  const int fill = static_cast<int>(std::clamp(u / 100, 0.0, 1.0) * kBarWidth + 0.5);
  c.Put(x, y, "[", Role::kNormal);
  for (int k = 0; k < kBarWidth; ++k)
    c.Put(x + 1 + k, y, k < fill ? tick : " ", k < fill ? Role::kBarUser : Role::kBarFree);
  c.Put(x + 1 + kBarWidth, y, "]", Role::kNormal);
  c.Put(x + 2 + kBarWidth, y, Percent(u), Role::kValue);
  x += kBarWidth + 10;
  c.Put(x, y, Percent(h.summary.hbm_used_percent()), Role::kValue);
  x += 8;
  c.Put(x, y, Pad(Latency(h.summary.collective_p99_seconds()), 8), Role::kValue);
  return x + 9;
}

// The host's verdict `f` at column `x`: its kind and, unless healthy, its summary (or what the
// host cannot measure).
void DrawVerdictCell(const ClusterHost& h, const v1::Finding& f, int x, int y, Canvas& c) {
  if (f.kind() == v1::FINDING_KIND_UNSPECIFIED) {
    c.Put(x, y, "collecting data", Role::kDim);
    return;
  }
  const std::string name = FindingKindName(f.kind());
  c.Put(x, y, name, SeverityRole(f.severity()));
  std::string detail = f.kind() == v1::FINDING_KIND_HEALTHY ? "" : f.summary();
  if (!h.summary.unavailable().empty() && detail.empty())
    detail = "unavailable: " + h.summary.unavailable();
  c.Put(x + TextWidth(name) + 1, y, detail, Role::kDim);
}

// One host's row: name, state, then its figures and verdict — or why it has none.
void DrawHostRow(const ClusterHost& h, const v1::Finding& verdict, int y, Canvas& c) {
  int x = 0;
  c.Put(x, y, Pad(h.name, kNameWidth), Role::kNormal);
  x += kNameWidth + 1;
  const char* st = h.state == HostState::kUp ? "up" : h.state == HostState::kDown ? "down" : "...";
  c.Put(x, y, st,
        h.state == HostState::kUp     ? Role::kGood
        : h.state == HostState::kDown ? Role::kCritical
                                      : Role::kDim);
  x += 7;
  if (h.state != HostState::kUp || !h.has_summary) {
    std::string why = h.state == HostState::kDown ? h.error : "connecting";
    if (h.state == HostState::kUp) why = "waiting for the first report";
    if (h.state == HostState::kDown && h.retry_in_seconds >= 0)
      why += ", retry in " + Seconds(h.retry_in_seconds);
    c.Put(x, y, why, Role::kDim);
    return;
  }
  DrawVerdictCell(h, verdict, DrawFigures(h, x, y, c), y, c);
}

}  // namespace

const char* SortName(ClusterSort sort) {
  switch (sort) {
    case ClusterSort::kUtilization:
      return "utilization";
    case ClusterSort::kVerdict:
      return "verdict";
    default:
      return "name";
  }
}

std::vector<std::size_t> ClusterOrder(const std::vector<ClusterHost>& hosts,
                                      const client::ClusterAnalysis& analysis, ClusterSort sort) {
  std::vector<std::size_t> order;
  std::vector<bool> placed(hosts.size(), false);
  auto less = [&](std::size_t a, std::size_t b) {
    switch (sort) {
      case ClusterSort::kUtilization: {
        const double ua = hosts[a].summary.utilization_percent();
        const double ub = hosts[b].summary.utilization_percent();
        if (ua != ub) return ua < ub;
        break;
      }
      case ClusterSort::kVerdict: {
        // Worst first.
        const int ra = VerdictRank(analysis.host_verdicts[a].kind());
        const int rb = VerdictRank(analysis.host_verdicts[b].kind());
        if (ra != rb) return ra > rb;
        break;
      }
      default:
        break;
    }
    if (hosts[a].name != hosts[b].name) {
      if (NaturalLess(hosts[a].name, hosts[b].name)) return true;
      if (NaturalLess(hosts[b].name, hosts[a].name)) return false;
    }
    return a < b;
  };
  for (const client::ClusterJob& job : analysis.jobs) {
    std::vector<std::size_t> members = job.hosts;
    std::sort(members.begin(), members.end(), less);
    for (std::size_t i : members) {
      order.push_back(i);
      placed[i] = true;
    }
  }
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (!placed[i]) rest.push_back(i);
  }
  std::sort(rest.begin(), rest.end(), less);
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

void RenderCluster(const std::vector<ClusterHost>& hosts, const client::ClusterAnalysis& analysis,
                   const std::vector<std::size_t>& order, ClusterViewState& state, Canvas& c) {
  c.Clear();
  const int w = c.width();
  DrawTitle(hosts, state, c);
  DrawVerdict(analysis.verdict, c);
  DrawHeader(c);
  const std::vector<Line> lines = BodyLines(analysis, order, w);
  const int body_rows = std::max(1, c.height() - kBodyTop - 1);
  if (!order.empty()) state.selected = std::min(state.selected, order.size() - 1);
  ScrollToSelected(lines, body_rows, state);
  for (int row = 0; row < body_rows; ++row) {
    const std::size_t l = static_cast<std::size_t>(state.top + row);
    if (l >= lines.size()) break;
    const int y = kBodyTop + row;
    if (lines[l].heading) {
      c.Put(0, y, Pad(lines[l].text, w), Role::kSection);
      continue;
    }
    const std::size_t i = order[lines[l].position];
    DrawHostRow(hosts[i], analysis.host_verdicts[i], y, c);
    if (lines[l].position == state.selected) c.Paint(0, y, w, Role::kSelected);
  }
  c.Put(0, c.height() - 1,
        Pad(" q quit  Up/Down select  Enter open host (Esc back)  s sort: name/utilization/verdict",
            w),
        Role::kHelp);
}

ClusterCommand ApplyClusterKey(const Input& in, std::size_t rows, int page,
                               ClusterViewState& state) {
  const std::size_t last = rows == 0 ? 0 : rows - 1;
  const auto step = static_cast<std::size_t>(std::max(1, page));
  if (in.key == Key::kHome) state.selected = 0;
  if (in.key == Key::kEnd) state.selected = last;
  if (in.key == CharKey('s') || in.key == CharKey('S')) {
    state.sort = state.sort == ClusterSort::kName          ? ClusterSort::kUtilization
                 : state.sort == ClusterSort::kUtilization ? ClusterSort::kVerdict
                                                           : ClusterSort::kName;
  }
  switch (Translate(in, false).action) {
    case Action::kQuit:
      return {Effect::kQuit};
    case Action::kResize:
      return {Effect::kResize};
    case Action::kRepaint:
      return {Effect::kRepaint};
    case Action::kUp:
      if (state.selected > 0) --state.selected;
      break;
    case Action::kDown:
      state.selected = std::min(last, state.selected + 1);
      break;
    case Action::kPageUp:
      state.selected = state.selected > step ? state.selected - step : 0;
      break;
    case Action::kPageDown:
      state.selected = std::min(last, state.selected + step);
      break;
    case Action::kToggleItem:  // Enter
      return {Effect::kNone, rows > 0};
    default:
      break;
  }
  return {};
}

}  // namespace neuronmon::tui
