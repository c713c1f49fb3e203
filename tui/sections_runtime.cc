// Runtime-level sections and the drawing helpers: collectives, diagnosis, vCPU, memory summary.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "proto/names/names.h"
#include "tui/format.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

// Whether the tab shows runtime `r` (the "all" tab shows every one).
bool Selected(const Ctx& ctx, const RuntimeView& r) {
  return ctx.pid == 0 || r.report.pid() == ctx.pid;
}

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

}  // namespace

Glyphs GlyphsFor(bool utf8) {
  if (utf8) return {"|", ".", "─", "●", "◀", "…"};
  return {"|", ".", "-", "*", "<", "..."};
}

int Text(Canvas& c, int x, int y, int width, std::string_view text, Role role) {
  if (width <= 0) return x;
  const std::string_view shown = TakeColumns(text, width);
  c.Put(x, y, shown, role);
  return x + TextWidth(shown);
}

void Header(Ctx& ctx, int y, const std::string& title) {
  Canvas& c = ctx.canvas;
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kSection);
  Text(c, 0, y, c.width(), title, Role::kSection);
}

void Bar(Ctx& ctx, int x, int y, int width, double fraction, Role fill) {
  const int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
  for (int i = 0; i < width; ++i) {
    ctx.canvas.Put(x + i, y, i < filled ? ctx.glyphs.fill : ctx.glyphs.empty,
                   i < filled ? fill : Role::kBarFree);
  }
}

int CollectiveRows(const Ctx& ctx) {
  int n = 0;
  for (const RuntimeView& r : ctx.model.runtimes()) {
    if (Selected(ctx, r) && r.report.collectives_stats().operations_size() > 0) ++n;
  }
  const int lines =
      static_cast<int>(UnavailableFigures(ctx, RuntimeGroup::kCollectives).lines.size());
  return 1 + std::max(1, n + lines);
}

void DrawCollectives(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  Header(ctx, y, "Collectives (operations/s, p50 / p99 latency, share of time)");
  if (rows <= 1) return;
  // Runtimes whose collectives cannot be measured are not runtimes without collectives.
  const int said =
      DrawUnavailable(ctx, UnavailableFigures(ctx, RuntimeGroup::kCollectives), y + 1, rows - 1);
  std::vector<const RuntimeView*> list;
  for (const RuntimeView& r : ctx.model.runtimes()) {
    if (Selected(ctx, r) && r.report.collectives_stats().operations_size() > 0) list.push_back(&r);
  }
  if (list.empty()) {
    if (said == 0) Text(c, 1, y + 1, c.width() - 1, "no collective operations", Role::kDim);
    return;
  }
  y += said;
  rows -= said;
  if (rows <= 1) return;
  const int capacity = rows - 1;
  const bool folded = static_cast<int>(list.size()) > capacity;
  const int shown = folded ? capacity - 1 : static_cast<int>(list.size());
  if (shown == 0) {
    // One row for many runtimes: their mean share of time and the worst p99.
    double share = 0, p99 = 0;
    for (const RuntimeView* r : list) {
      share += r->report.collectives_stats().time_share();
      for (const v1::CollectiveStats& op : r->report.collectives_stats().operations()) {
        p99 = std::max(p99, op.latency().p99());
      }
    }
    char line[160];
    std::snprintf(
        line, sizeof line, "%zu runtimes: %.1f%% of time in collectives on average, worst p99 %s",
        list.size(), 100 * share / static_cast<double>(list.size()), Latency(p99).c_str());
    Text(c, 0, y + 1, c.width(), line, Role::kNormal);
    return;
  }
  for (int i = 0; i < shown; ++i) {
    const RuntimeView& r = *list[static_cast<std::size_t>(i)];
    const v1::CollectivesStats& s = r.report.collectives_stats();
    const int row = y + 1 + i;
    char share[32];
    std::snprintf(share, sizeof share, "%5.1f%%  ", 100 * s.time_share());
    int x = std::max(Text(c, 0, row, 22, r.report.tag(), Role::kHeader), 22);
    x = Text(c, x, row, c.width() - x, share, s.time_share() > 0.3 ? Role::kWarning : Role::kValue);
    for (const v1::CollectiveStats& op : s.operations()) {
      const std::string text =
          std::string(CollectiveOpName(op.op())) + " " + Count(op.operations_per_second()) + " " +
          Latency(op.latency().p50()) + "/" + Latency(op.latency().p99()) + "  ";
      x = Text(c, x, row, c.width() - x, text, Role::kNormal);
    }
  }
  if (folded) {
    Text(c, 0, y + rows - 1, c.width(),
         "... " + std::to_string(static_cast<int>(list.size()) - shown) + " more runtimes",
         Role::kDim);
  }
}

namespace {

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
  Header(ctx, y, title);
  if (rows <= 1) return;
  // Unhealthy devices first: they outlast any verdict and ask for action on the host.
  for (const auto& [line, role] : HealthLines(ctx)) {
    if (rows <= 1) return;
    Text(c, 0, y + 1, c.width(), line, role);
    ++y;
    --rows;
  }
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
  const int budget = rows - 1;
  std::vector<int> lines(laid.size(), 0);  // lines granted to each finding
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
  int row = y + 1;
  for (std::size_t i = 0; i < laid.size() && row < end; ++i) {
    const FindingLines& l = laid[i];
    const v1::Finding& f = *findings[i].finding;
    const Role role = SeverityRole(f.severity());
    std::vector<std::pair<std::string, bool>> body;  // text, is evidence
    for (const std::string& t : l.text) body.emplace_back(t, false);
    for (const std::string& e : l.evidence) body.emplace_back(e, true);
    const int n = std::min(lines[i], static_cast<int>(body.size()));
    for (int k = 0; k < n && row < end; ++k, ++row) {
      std::string text = body[static_cast<std::size_t>(k)].first;
      int x = kIndent;
      if (k == 0) {
        x = Text(c, 0, row, c.width(), std::string(ctx.glyphs.bullet) + " ", role);
        x = Text(c, x, row, c.width() - x, std::string(FindingKindName(f.kind())) + " ", role);
        x = Text(c, x, row, c.width() - x, l.subject, Role::kHeader);
      }
      if (k == n - 1 && n < static_cast<int>(body.size())) {  // more than fits: say so
        const std::string more = std::string(" ") + ctx.glyphs.more;
        const int room = c.width() - x - TextWidth(more);
        if (TextWidth(text) > room) {
          // Back to the last whole word that leaves room for the mark.
          std::string cut(TakeColumns(text, std::max(0, room + 1)));
          const std::size_t space = cut.rfind(' ');
          cut = space == std::string::npos ? std::string(TakeColumns(text, std::max(0, room)))
                                           : cut.substr(0, space);
          text = cut;
        }
        text += more;
      }
      Text(c, x, row, c.width() - x, text,
           body[static_cast<std::size_t>(k)].second ? Role::kDim : Role::kNormal);
    }
  }
}

void DrawVcpu(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  Header(ctx, y, "vCPU Utilization");
  const v1::CpuUsage& avg = ctx.model.system().vcpu_usage().average();
  const double sys_user = avg.user() + avg.nice();
  const double sys_system = avg.system() + avg.io_wait() + avg.irq() + avg.soft_irq();
  double rt_user = 0, rt_system = 0;
  for (const RuntimeView& r : ctx.model.runtimes()) {
    if (!Selected(ctx, r)) continue;
    rt_user += r.report.vcpu_usage().user_percent();
    rt_system += r.report.vcpu_usage().system_percent();
  }
  const std::pair<const char*, std::pair<double, double>> lines[2] = {
      {"System vCPU Usage  ", {sys_user, sys_system}},
      {"Runtime vCPU Usage ", {rt_user, rt_system}}};
  const Unavailable runtime_unavailable = UnavailableFigures(ctx, RuntimeGroup::kVcpu);
  for (int i = 0; i < 2 && i + 1 < rows; ++i) {
    const int row = y + 1 + i;
    if (i == 1 && runtime_unavailable.all) {
      // No runtime shown has CPU figures: the reason rather than a 0 % bar.
      std::string reasons;
      for (const std::string& l : runtime_unavailable.lines)
        reasons += (reasons.empty() ? "" : "; ") + l;
      const int x = Text(c, 0, row, c.width(), lines[i].first, Role::kHeader);
      Text(c, x, row, c.width() - x, reasons, Role::kDim);
      continue;
    }
    const auto [user, system] = lines[i].second;
    char figure[48];
    std::snprintf(figure, sizeof figure, "[%5.2f%%,%5.2f%%]", std::min(100.0, user),
                  std::min(100.0, system));
    const int x = Text(c, 0, row, c.width(), lines[i].first, Role::kHeader);
    const int bar = c.width() - x - static_cast<int>(std::string(figure).size()) - 1;
    if (bar >= 4) {
      const int u = static_cast<int>(std::lround(bar * std::clamp(user / 100, 0.0, 1.0)));
      const int s = static_cast<int>(std::lround(bar * std::clamp(system / 100, 0.0, 1.0)));
      for (int k = 0; k < bar; ++k) {
        const bool is_user = k < u;
        const bool is_system = !is_user && k < u + s;
        c.Put(x + k, row, is_user || is_system ? ctx.glyphs.fill : ctx.glyphs.empty,
              is_user     ? Role::kBarUser
              : is_system ? Role::kBarSystem
                          : Role::kBarFree);
      }
      Text(c, x + bar, row, c.width() - x - bar, figure, Role::kValue);
    } else {
      Text(c, x, row, c.width() - x, figure, Role::kValue);
    }
  }
}

void DrawMemorySummary(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  Header(ctx, y, "Memory Usage Summary");
  v1::HostMemoryBreakdown host;
  double host_total = 0, device_total = 0;
  double tensors = 0, constants = 0, code = 0, runtime = 0, scratch = 0;
  for (const RuntimeView& r : ctx.model.runtimes()) {
    if (!Selected(ctx, r)) continue;
    const v1::MemoryUsed& m = r.report.memory_used();
    host_total += static_cast<double>(m.host_bytes());
    device_total += static_cast<double>(m.device_bytes());
    host.set_application_memory(host.application_memory() + m.host().application_memory());
    host.set_constants(host.constants() + m.host().constants());
    host.set_dma_buffers(host.dma_buffers() + m.host().dma_buffers());
    host.set_tensors(host.tensors() + m.host().tensors());
    for (const v1::CoreMemory& core : m.cores()) {
      tensors += static_cast<double>(core.tensors());
      constants += static_cast<double>(core.constants());
      code += static_cast<double>(core.model_code());
      runtime += static_cast<double>(core.runtime_memory());
      scratch += static_cast<double>(core.model_shared_scratchpad());
    }
  }
  // A category is shown whole or not at all: a label without its figure says nothing.
  auto item = [&](int x, int row, const char* name, double v) {
    const std::string value = Bytes(v);
    if (x + TextWidth(name) + TextWidth(value) > c.width()) return c.width();
    x = Text(c, x, row, c.width() - x, name, Role::kNormal);
    return Text(c, x, row, c.width() - x, value + "  ", Role::kValue);
  };
  if (rows > 1) {
    int x = Text(c, 0, y + 1, c.width(), "Host Used Memory    ", Role::kHeader);
    x = item(x, y + 1, "Total: ", host_total);
    x = item(x, y + 1, "Tensors: ", static_cast<double>(host.tensors()));
    x = item(x, y + 1, "Constants: ", static_cast<double>(host.constants()));
    x = item(x, y + 1, "DMA Buffers: ", static_cast<double>(host.dma_buffers()));
    item(x, y + 1, "App. Memory: ", static_cast<double>(host.application_memory()));
  }
  if (rows > 2) {
    int x = Text(c, 0, y + 2, c.width(), "Device Used Memory  ", Role::kHeader);
    x = item(x, y + 2, "Total: ", device_total);
    x = item(x, y + 2, "Tensors: ", tensors);
    x = item(x, y + 2, "Constants: ", constants);
    x = item(x, y + 2, "Model Code: ", code);
    x = item(x, y + 2, "Runtime Memory: ", runtime);
    item(x, y + 2, "Model Scratchpad: ", scratch);
  }
}

}  // namespace neuronmon::tui
