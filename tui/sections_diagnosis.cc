// The Diagnosis section: the unhealthy devices, then the findings that apply to the tab, each
// with its summary, advice and evidence, wrapped at words in the rows it gets.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "proto/names/names.h"
#include "tui/format.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

Role SeverityRole(v1::Severity s) {
  return s == v1::SEVERITY_CRITICAL  ? Role::kCritical
         : s == v1::SEVERITY_WARNING ? Role::kWarning
                                     : Role::kGood;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

std::string EvidenceText(const v1::Finding& f) {
  std::string out;
  for (const v1::Evidence& e : f.evidence()) {
    std::string value = e.unit() == "percent"   ? Number(e.value()) + "%"
                        : e.unit() == "seconds" ? Latency(e.value())
                                                : Number(e.value());
    std::string line = e.name() + " " + value;
    if (!e.comparison().empty()) {
      line += " " + e.comparison() + " " +
              (e.unit() == "percent"   ? Number(e.threshold()) + "%"
               : e.unit() == "seconds" ? Latency(e.threshold())
                                       : Number(e.threshold()));
    }
    out += (out.empty() ? "" : ", ") + line;
  }
  char conf[32];
  std::snprintf(conf, sizeof conf, "confidence %.2f", f.confidence());
  return out + (out.empty() ? "" : ", ") + conf;
}

struct Shown {
  const v1::Finding* finding;
  int count;  // applications sharing this kind (the "all" tab groups them)
};

// The findings to show for the tab: on "all", the instance summary and then one line per kind
// the applications have (healthy ones are summed up by the instance line); on a runtime's tab, its
// own findings, or the instance summary when it has none.
std::vector<Shown> Findings(const Ctx& ctx) {
  std::vector<Shown> out;
  if (ctx.pid != 0) {
    if (const RuntimeView* r = ctx.model.runtime(ctx.pid)) {
      for (const v1::Finding& f : r->report.findings()) out.push_back({&f, 1});
    }
    // No verdict for the runtime (yet, or for want of signals): the instance summary says why.
    if (out.empty()) {
      for (const v1::Finding& f : ctx.model.instance_findings()) out.push_back({&f, 0});
    }
    return out;
  }
  for (const v1::Finding& f : ctx.model.instance_findings()) out.push_back({&f, 0});
  std::map<int, Shown> by_kind;
  for (const RuntimeView& r : ctx.model.runtimes()) {
    for (const v1::Finding& f : r.report.findings()) {
      if (f.kind() == v1::FINDING_KIND_HEALTHY) continue;
      auto [it, fresh] = by_kind.try_emplace(f.kind(), Shown{&f, 0});
      ++it->second.count;
    }
  }
  for (const auto& [kind, shown] : by_kind) out.push_back(shown);
  return out;
}

struct FindingLines {
  std::string subject;                // "llama3-8b-rank0: ", drawn after the bullet and the kind
  std::vector<std::string> text;      // summary and advice: the first after `lead`, then indented
  std::vector<std::string> evidence;  // indented
};

constexpr int kIndent = 4;

FindingLines Layout(const Ctx& ctx, const Shown& shown) {
  const v1::Finding& f = *shown.finding;
  FindingLines out;
  const std::string subject =
      shown.count > 1 ? std::to_string(shown.count) + " applications (" + f.subject() + ", ...)"
                      : f.subject();
  out.subject = subject + ": ";
  const int lead = TextWidth(ctx.glyphs.bullet) + 1 + TextWidth(FindingKindName(f.kind())) + 1 +
                   TextWidth(out.subject);
  const int w = ctx.canvas.width();
  out.text = WrapWords(f.summary() + (f.advice().empty() ? "" : " — " + f.advice()), w - lead,
                       w - kIndent);
  const std::string evidence = EvidenceText(f);
  if (!evidence.empty()) out.evidence = WrapWords(evidence, w - kIndent, w - kIndent);
  return out;
}

// One line per device that is not OK (at most kHealthLines, the last saying how many more):
// "ND3 failed: <its worst reason> (+1 more) — <what to do>".
constexpr int kHealthLines = 4;
std::vector<std::pair<std::string, Role>> HealthLines(const Ctx& ctx) {
  std::vector<std::pair<std::string, Role>> out;
  const v1::DeviceHealthStats& h = ctx.model.system().device_health();
  int unhealthy = 0;
  for (const v1::DeviceHealth& d : h.devices()) {
    if (d.state() < v1::HEALTH_STATE_DEGRADED) continue;
    ++unhealthy;
    if (static_cast<int>(out.size()) >= kHealthLines) continue;
    std::string line =
        "ND" + std::to_string(d.neuron_device_index()) + " " + HealthStateName(d.state()) + ": ";
    if (d.reasons_size() > 0) line += d.reasons(0).text();
    if (d.reasons_size() > 1) line += " (+" + std::to_string(d.reasons_size() - 1) + " more)";
    line += std::string(" — ") + HealthActionName(d.action()) + ": " + d.advice();
    out.emplace_back(std::move(line),
                     d.state() == v1::HEALTH_STATE_FAILED ? Role::kCritical : Role::kWarning);
  }
  if (unhealthy > kHealthLines) {
    out.back() = {"... " + std::to_string(unhealthy - kHealthLines + 1) +
                      " more unhealthy devices (neuron-monitor's device_health has them all)",
                  Role::kWarning};
  }
  return out;
}

// "Diagnosis", the instance's verdict, and on a runtime's tab who runs it.
std::string DiagnosisTitle(const Ctx& ctx) {
  std::string title = "Diagnosis";
  for (const v1::Finding& f : ctx.model.instance_findings()) {
    title += std::string(" (instance: ") + FindingKindName(f.kind()) + ")";
    break;
  }
  // A runtime's tab says who runs it.
  if (const RuntimeView* r = ctx.pid != 0 ? ctx.model.runtime(ctx.pid) : nullptr) {
    const std::string who = AttributionText(r->report.attribution());
    title += " — pid " + std::to_string(ctx.pid) + (who.empty() ? "" : ", " + who);
  }
  return title;
}

// Draws the unhealthy devices' lines below row y, keeping the last of `rows` free; returns how
// many it drew.
int DrawHealthLines(Ctx& ctx, int y, int rows) {
  int drawn = 0;
  for (const auto& [line, role] : HealthLines(ctx)) {
    if (rows - drawn <= 1) break;
    Text(ctx.canvas, 0, y + 1 + drawn, ctx.canvas.width(), line, role);
    ++drawn;
  }
  return drawn;
}

// Lines granted to each finding out of `budget`, a line each in turn until each has all of its
// own or the budget is spent.
std::vector<int> GrantLines(const std::vector<FindingLines>& laid, int budget) {
  std::vector<int> lines(laid.size(), 0);
  int granted = 0;
  for (bool more = true; more && granted < budget;) {
    more = false;
    for (std::size_t i = 0; i < laid.size() && granted < budget; ++i) {
      const int have = static_cast<int>(laid[i].text.size() + laid[i].evidence.size());
      if (lines[i] < have) {
        ++lines[i];
        ++granted;
        more = true;
      }
    }
  }
  return lines;
}

// `text` with the "more" mark after it, within the columns from x.
std::string WithMoreMark(const Ctx& ctx, std::string text, int x) {
  const std::string more = std::string(" ") + ctx.glyphs.more;
  const int room = ctx.canvas.width() - x - TextWidth(more);
  if (TextWidth(text) > room) {
    // Back to the last whole word that leaves room for the mark.
    std::string cut(TakeColumns(text, std::max(0, room + 1)));
    const std::size_t space = cut.rfind(' ');
    cut = space == std::string::npos ? std::string(TakeColumns(text, std::max(0, room)))
                                     : cut.substr(0, space);
    text = cut;
  }
  return text + more;
}

// Draws the first `granted` lines of finding `f` from `row`, before `end`: the bullet, its kind
// and subject, then its text and evidence, the last line marked when more does not fit. Returns
// the row after them.
int DrawFinding(Ctx& ctx, int row, int end, const v1::Finding& f, const FindingLines& l,
                int granted) {
  Canvas& c = ctx.canvas;
  const Role role = SeverityRole(f.severity());
  std::vector<std::pair<std::string, bool>> body;  // text, is evidence
  for (const std::string& t : l.text) body.emplace_back(t, false);
  for (const std::string& e : l.evidence) body.emplace_back(e, true);
  const int n = std::min(granted, static_cast<int>(body.size()));
  for (int k = 0; k < n && row < end; ++k, ++row) {
    std::string text = body[static_cast<std::size_t>(k)].first;
    int x = kIndent;
    if (k == 0) {
      x = Text(c, 0, row, c.width(), std::string(ctx.glyphs.bullet) + " ", role);
      x = Text(c, x, row, c.width() - x, std::string(FindingKindName(f.kind())) + " ", role);
      x = Text(c, x, row, c.width() - x, l.subject, Role::kHeader);
    }
    // More than fits: say so.
    if (k == n - 1 && n < static_cast<int>(body.size())) text = WithMoreMark(ctx, text, x);
    Text(c, x, row, c.width() - x, text,
         body[static_cast<std::size_t>(k)].second ? Role::kDim : Role::kNormal);
  }
  return row;
}

}  // namespace

int DiagnosisRows(const Ctx& ctx) {
  int rows = static_cast<int>(HealthLines(ctx).size());
  for (const Shown& shown : Findings(ctx)) {
    const FindingLines l = Layout(ctx, shown);
    rows += static_cast<int>(l.text.size() + l.evidence.size());
  }
  return 1 + std::max(1, rows);
}

void DrawDiagnosis(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  const std::vector<Shown> findings = Findings(ctx);
  Header(ctx, y, DiagnosisTitle(ctx));
  if (rows <= 1) return;
  // Unhealthy devices first: they outlast any verdict and ask for action on the host.
  const int health = DrawHealthLines(ctx, y, rows);
  y += health;
  rows -= health;
  if (rows <= 1) return;
  if (findings.empty()) {
    Text(c, 1, y + 1, c.width() - 1,
         ctx.model.has_data() ? "no findings yet: the analyzer needs a few windows of data"
                              : "waiting for data",
         Role::kDim);
    return;
  }
  // Every finding gets its first line before any gets a second: with little room, each says
  // what it is; with more, summaries, advice and evidence follow in full, wrapped at words.
  const int end = y + rows;
  std::vector<FindingLines> laid;
  for (const Shown& shown : findings) laid.push_back(Layout(ctx, shown));
  const std::vector<int> lines = GrantLines(laid, rows - 1);
  int row = y + 1;
  for (std::size_t i = 0; i < laid.size() && row < end; ++i) {
    row = DrawFinding(ctx, row, end, *findings[i].finding, laid[i], lines[i]);
  }
}

}  // namespace neuronmon::tui
