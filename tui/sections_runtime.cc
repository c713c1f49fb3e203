// Runtime-level sections and the drawing helpers: collectives, vCPU, memory summary.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "proto/names/names.h"
#include "tui/format.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

// Whether the tab shows runtime `r` (the "all" tab shows every one).
bool Selected(const Ctx& ctx, const RuntimeView& r) {
  return ctx.pid == 0 || r.report.pid() == ctx.pid;
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
  double tensors = 0, constants = 0, code = 0, runtime = 0, scratch = 0, other = 0;
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
      other += static_cast<double>(core.other());
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
    x = item(x, y + 2, "Model Scratchpad: ", scratch);
    // The driver's own categories (driver memory, collectives, DMA rings, ...), when it lists them.
    if (other > 0) item(x, y + 2, "Driver/Other: ", other);
  }
}

}  // namespace neuronmon::tui
