// Device-level sections: the NeuronCore utilization grid, HBM, and the history graphs.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "proto/names/names.h"
#include "tui/format.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

int CoresPerDevice(const Model& m) {
  return static_cast<int>(neuronmon::CoresPerDevice(m.inventory()));
}

std::string DeviceLabel(int d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "ND%-2d ", d);
  return buf;
}

// Devices the current tab covers: all of them, or those the selected runtime uses.
std::vector<int> TabDevices(const Ctx& ctx) {
  std::vector<int> out;
  const int n = ctx.model.inventory().devices_size();
  const int per = CoresPerDevice(ctx.model);
  if (ctx.pid == 0) {
    for (int d = 0; d < n; ++d) out.push_back(d);
    return out;
  }
  const RuntimeView* r = ctx.model.runtime(ctx.pid);
  if (r == nullptr) return out;
  for (const v1::CoreCounters& c : r->report.neuroncore_counters().cores()) {
    const int d = static_cast<int>(c.index()) / per;
    if (out.empty() || out.back() != d) out.push_back(d);
  }
  return out;
}

// "nd5" when a straggler finding names this device.
bool IsStraggler(const Ctx& ctx, int d) {
  const std::string name = "nd" + std::to_string(d);
  for (const v1::Finding& f : ctx.model.instance_findings()) {
    if (f.kind() == v1::FINDING_KIND_STRAGGLER && f.straggler() == name) return true;
  }
  return false;
}

// The device's health, when the daemon sent it (nullptr: not known).
const v1::DeviceHealth* HealthOf(const Ctx& ctx, int d) {
  const v1::DeviceHealthStats& h = ctx.model.system().device_health();
  return d < h.devices_size() ? &h.devices(d) : nullptr;
}

// " pwr 19%" when the device's power reading is known; "" otherwise.
std::string PowerText(const Ctx& ctx, int d) {
  const v1::DeviceHealth* h = HealthOf(ctx, d);
  if (h == nullptr || !h->power().unavailable().empty()) return "";
  char buf[24];
  std::snprintf(buf, sizeof buf, " pwr %3.0f%%", h->power().average_percent());
  return buf;
}

// Rows for a list of devices, folding the tail into a "... N more" line when short of rows.
int Visible(int wanted, int rows, bool* folded) {
  *folded = wanted > rows;
  return *folded ? std::max(0, rows - 1) : wanted;
}

// `text` right-aligned in `width` columns (figures in fixed widths keep bars the same length).
std::string PadLeft(std::string text, std::size_t width) {
  return text.size() < width ? std::string(width - text.size(), ' ') + text : text;
}

// The line that ends a folded list of devices.
void SayMoreDevices(Ctx& ctx, int row, int more) {
  Text(ctx.canvas, 0, row, ctx.canvas.width(), "... " + std::to_string(more) + " more devices",
       Role::kDim);
}

bool BandwidthMeasured(const Ctx& ctx) {
  return ctx.model.system().hbm_stats().bandwidth_unavailable().empty();
}

// Starts device d's row of the HBM section: its label, then its error when it has one. Returns
// its figures, or nullptr when there are none to draw.
const v1::DeviceHbm* StartHbmRow(Ctx& ctx, int row, int d) {
  Canvas& c = ctx.canvas;
  const v1::HbmStats& hbm = ctx.model.system().hbm_stats();
  Text(c, 0, row, 5, DeviceLabel(d), Role::kHeader);
  if (d >= hbm.devices_size()) return nullptr;
  const v1::DeviceHbm& dev = hbm.devices(d);
  if (!dev.error().empty()) {
    Text(c, 5, row, c.width() - 5, dev.error(), Role::kCritical);
    return nullptr;
  }
  return &dev;
}

// Without an HBM traffic counter: the reason where the bandwidth would be, then each device's
// memory in use against its capacity.
void DrawHbmMemory(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  const v1::HbmStats& hbm = ctx.model.system().hbm_stats();
  const std::vector<int> devices = TabDevices(ctx);
  Header(ctx, y, "HBM Memory (bandwidth unavailable)");
  if (rows <= 1) return;
  Text(c, 1, y + 1, c.width() - 1, "HBM bandwidth: unavailable — " + hbm.bandwidth_unavailable(),
       Role::kDim);
  if (rows <= 2) return;
  bool folded = false;
  const int shown = Visible(static_cast<int>(devices.size()), rows - 2, &folded);
  for (int r = 0; r < shown; ++r) {
    const int d = devices[static_cast<std::size_t>(r)];
    const int row = y + 2 + r;
    const v1::DeviceHbm* dev = StartHbmRow(ctx, row, d);
    if (dev == nullptr) continue;
    const double used = static_cast<double>(dev->used_bytes());
    const double total = static_cast<double>(dev->total_bytes());
    const std::string right =
        " " + PadLeft(Bytes(used), 8) + "/" + PadLeft(Bytes(total), 8) + PowerText(ctx, d);
    const int bar = c.width() - 5 - TextWidth(right) - 1;
    if (bar >= 4 && total > 0) {
      Bar(ctx, 5, row, bar, used / total, Role::kBarUser);
      Text(c, 5 + bar, row, c.width() - 5 - bar, right, Role::kValue);
    } else {
      Text(c, 5, row, c.width() - 5, right, Role::kValue);
    }
  }
  if (folded) SayMoreDevices(ctx, y + rows - 1, static_cast<int>(devices.size()) - shown);
}

// The grid's title: the average utilization (or TFLOPS) of the tab's devices' cores, or that
// the figures are unavailable (`unavailable`: utilization; `no_flops`: TFLOPS).
std::string GridTitle(const Ctx& ctx, bool unavailable, bool no_flops,
                      const std::vector<int>& devices, const std::vector<double>& util,
                      const std::vector<std::optional<double>>& flops) {
  const int per = CoresPerDevice(ctx.model);
  const std::string version = ctx.model.inventory().hardware_info().neuroncore_version();
  double sum = 0, total_flops = 0;
  int cores = 0, with_flops = 0;
  for (int d : devices) {
    for (int k = 0; k < per; ++k) {
      const std::size_t i = static_cast<std::size_t>(d * per + k);
      if (i >= util.size()) continue;
      sum += util[i], ++cores;
      if (flops[i]) total_flops += *flops[i], ++with_flops;
    }
  }
  const double avg = cores ? sum / cores : 0;
  char title[160];
  if (unavailable || (ctx.view.flops && no_flops)) {
    std::snprintf(title, sizeof title, "NeuronCore %s Utilization (%sunavailable)",
                  version.empty() ? "v2" : version.c_str(), unavailable ? "" : "TFLOPS ");
  } else if (ctx.view.flops) {
    std::snprintf(title, sizeof title, "NeuronCore %s Utilization (Avg: %s | Total: %s)",
                  version.empty() ? "v2" : version.c_str(),
                  Tflops(with_flops ? total_flops / with_flops : 0).c_str(),
                  Tflops(total_flops).c_str());
  } else {
    std::snprintf(title, sizeof title, "NeuronCore %s Utilization (Avg: %s)",
                  version.empty() ? "v2" : version.c_str(), Percent(avg).c_str());
  }
  return title;
}

// A grid row's label: "ND3", marked "ND3!" (degraded) or "ND3X" (failed) when unhealthy, which
// the Diagnosis explains, or "ND5◀" when it is the straggler.
void DrawGridLabel(Ctx& ctx, int row, int d, int label) {
  Canvas& c = ctx.canvas;
  const v1::DeviceHealth* health = HealthOf(ctx, d);
  if (health != nullptr && health->state() >= v1::HEALTH_STATE_DEGRADED) {
    const bool failed = health->state() == v1::HEALTH_STATE_FAILED;
    Text(c, 0, row, label, "ND" + std::to_string(d) + (failed ? "X" : "!"),
         failed ? Role::kCritical : Role::kWarning);
  } else if (IsStraggler(ctx, d)) {
    Text(c, 0, row, label, "ND" + std::to_string(d) + ctx.glyphs.marker, Role::kWarning);
  } else {
    Text(c, 0, row, label, DeviceLabel(d), Role::kHeader);
  }
}

// Device d's row: its label, then a cell per core, a bar and its figure (or the figure alone
// where the cell is too narrow).
void DrawGridRow(Ctx& ctx, int row, int d, const std::vector<double>& util,
                 const std::vector<std::optional<double>>& flops) {
  Canvas& c = ctx.canvas;
  const int per = CoresPerDevice(ctx.model);
  const int label = 5;
  const int cell = std::max(4, (c.width() - label) / per);
  DrawGridLabel(ctx, row, d, label);
  for (int k = 0; k < per; ++k) {
    const std::size_t i = static_cast<std::size_t>(d * per + k);
    const double u = i < util.size() ? util[i] : 0;
    const std::optional<double> f = i < flops.size() ? flops[i] : std::optional<double>(0.0);
    const std::string figure = !ctx.view.flops ? "[" + Percent(u) + "]"
                               : f             ? "[" + Tflops(*f) + "]"
                                               : "[" + PadLeft("n/a", Tflops(0).size()) + "]";
    const int x = label + k * cell;
    const int width = std::min(cell, c.width() - x) - 1;
    if (width <= 0) break;
    if (width >= static_cast<int>(figure.size()) + 2) {
      const int bar = width - static_cast<int>(figure.size());
      Bar(ctx, x, row, bar, u / 100, Role::kBarUser);
      Text(c, x + bar, row, static_cast<int>(figure.size()), figure, Role::kValue);
    } else {
      char compact[16];
      std::snprintf(compact, sizeof compact, "%3.0f%%", u);
      Text(c, x, row, width, compact, Role::kValue);
    }
  }
}

// "HBM Bandwidth and Memory (Total: <the devices' reads and writes> of <their peak> peak)".
std::string HbmTitle(const Ctx& ctx, const std::vector<int>& devices) {
  const v1::HbmStats& hbm = ctx.model.system().hbm_stats();
  double total = 0, peak = 0;
  for (int d : devices) {
    if (d < hbm.devices_size()) {
      total += hbm.devices(d).read_bytes_per_second() + hbm.devices(d).write_bytes_per_second();
    }
    if (d < ctx.model.inventory().devices_size()) {
      peak += ctx.model.inventory().devices(d).hbm_peak_bytes_per_second();
    }
  }
  return "HBM Bandwidth and Memory (Total: " + BytesPerSecond(total) + " of " +
         BytesPerSecond(peak) + " peak)";
}

// " R <read> W <write> [<utilization>] <used>/<total>" and the power reading. Figures are
// right-aligned in fixed widths, so every row's bar has the same length and a changing figure
// does not shift the ones after it.
std::string HbmFigures(const Ctx& ctx, const v1::DeviceHbm& dev, int d) {
  const auto pad = PadLeft;
  // (The widest forms: "1000.0GB/s" and "1000.0MB".)
  return " R " + pad(BytesPerSecond(dev.read_bytes_per_second()), 10) + " W " +
         pad(BytesPerSecond(dev.write_bytes_per_second()), 10) + " [" +
         Percent(dev.bandwidth_utilization_percent()) + "] " +
         pad(Bytes(static_cast<double>(dev.used_bytes())), 8) + "/" +
         pad(Bytes(static_cast<double>(dev.total_bytes())), 8) + PowerText(ctx, d);
}

// Device d's row of the HBM section: reads then writes in one bar against its peak, then the
// figures (the bar left out when there is no room or no peak).
void DrawHbmRow(Ctx& ctx, int row, int d) {
  Canvas& c = ctx.canvas;
  const v1::DeviceHbm* figures = StartHbmRow(ctx, row, d);
  if (figures == nullptr) return;
  const v1::DeviceHbm& dev = *figures;
  const double dev_peak = d < ctx.model.inventory().devices_size()
                              ? ctx.model.inventory().devices(d).hbm_peak_bytes_per_second()
                              : 0;
  const std::string right = HbmFigures(ctx, dev, d);
  const int bar = c.width() - 5 - TextWidth(right) - 1;
  if (bar >= 4 && dev_peak > 0) {
    const int read = static_cast<int>(bar * std::min(1.0, dev.read_bytes_per_second() / dev_peak));
    const int write =
        static_cast<int>(bar * std::min(1.0, dev.write_bytes_per_second() / dev_peak));
    Bar(ctx, 5, row, bar, 0, Role::kBarUser);
    for (int i = 0; i < std::min(bar, read + write); ++i) {
      c.Put(5 + i, row, ctx.glyphs.fill, i < read ? Role::kBarUser : Role::kBarSystem);
    }
    Text(c, 5 + bar, row, c.width() - 5 - bar, right, Role::kValue);
  } else {
    Text(c, 5, row, c.width() - 5, right, Role::kValue);
  }
}

using GraphSeries = std::pair<std::string, std::vector<double>>;  // label, values

constexpr int kGraphLabel = 16;  // columns of a graph's label

// The shown graph's series (each device's, or each runtime's p99) and the top of its scale in
// `*max`.
std::vector<GraphSeries> HistorySeries(const Ctx& ctx, double* max) {
  std::vector<GraphSeries> series;
  if (ctx.view.graph == GraphView::kCollectiveP99) {
    *max = 0;
    for (const RuntimeView& r : ctx.model.runtimes()) {
      const std::uint32_t pid = r.report.pid();
      if (ctx.pid != 0 && pid != ctx.pid) continue;
      const Series& p99 = ctx.model.collective_p99(pid);
      series.emplace_back(r.report.tag(), p99.Vector());
      *max = std::max(*max, p99.Max());
    }
    return series;
  }
  const auto& all = ctx.view.graph == GraphView::kUtilization ? ctx.model.device_utilization()
                                                              : ctx.model.device_hbm();
  for (int d : TabDevices(ctx)) {
    if (d < static_cast<int>(all.size()))
      series.emplace_back(DeviceLabel(d), all[static_cast<std::size_t>(d)].Vector());
  }
  return series;
}

// A graph's latest figure, right of it.
void DrawLastValue(Ctx& ctx, int row, double last) {
  const int width = ctx.canvas.width() - kGraphLabel - 8;
  Text(ctx.canvas, kGraphLabel + width + 1, row, 7,
       ctx.view.graph == GraphView::kCollectiveP99 ? Latency(last) : Percent(last), Role::kValue);
}

// One graph per series, as tall as the rows allow (one row each when short of room).
void DrawEachGraph(Ctx& ctx, int y, int graph_rows, const std::vector<GraphSeries>& series,
                   double max) {
  Canvas& c = ctx.canvas;
  const int width = c.width() - kGraphLabel - 8;
  const GraphStyle style = ctx.view.utf8 ? ctx.view.glyphs : GraphStyle::kAscii;
  const int per = std::clamp(graph_rows / static_cast<int>(series.size()), 1, kMaxGraphRows);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const int top = y + 1 + static_cast<int>(i) * per;
    Text(c, 0, top, kGraphLabel, series[i].first, Role::kHeader);
    const auto glyphs = RenderGraph(series[i].second, max, width, per, style);
    for (int r = 0; r < per; ++r)
      Text(c, kGraphLabel, top + r, width, glyphs[static_cast<std::size_t>(r)], Role::kGraph);
    DrawLastValue(ctx, top + per - 1, series[i].second.empty() ? 0 : series[i].second.back());
  }
}

// More series than rows: one taller graph of their mean (the worst, for latencies).
void DrawCombinedGraph(Ctx& ctx, int y, int graph_rows, const std::vector<GraphSeries>& series,
                       double max) {
  Canvas& c = ctx.canvas;
  const int width = c.width() - kGraphLabel - 8;
  const GraphStyle style = ctx.view.utf8 ? ctx.view.glyphs : GraphStyle::kAscii;
  const bool worst = ctx.view.graph == GraphView::kCollectiveP99;
  std::vector<double> combined;
  const std::size_t n = series.front().second.size();
  for (std::size_t t = 0; t < n; ++t) {
    double acc = 0;
    for (const auto& s : series) {
      const double v = t < s.second.size() ? s.second[t] : 0;
      acc = worst ? std::max(acc, v) : acc + v;
    }
    combined.push_back(worst ? acc : acc / static_cast<double>(series.size()));
  }
  const auto glyphs = RenderGraph(combined, max, width, graph_rows, style);
  Text(c, 0, y + 1, kGraphLabel, worst ? "worst runtime" : "mean of devices", Role::kHeader);
  for (int r = 0; r < graph_rows; ++r)
    Text(c, kGraphLabel, y + 1 + r, width, glyphs[static_cast<std::size_t>(r)], Role::kGraph);
  DrawLastValue(ctx, y + graph_rows, combined.empty() ? 0 : combined.back());
}

}  // namespace

// Why the grid lacks figures: the utilization's reasons, and in TFLOPS mode the FLOPs' too.
Unavailable GridUnavailable(const Ctx& ctx, bool* no_flops) {
  Unavailable out = UnavailableFigures(ctx, RuntimeGroup::kCores);
  *no_flops = false;
  if (!ctx.view.flops || out.all) return out;
  Unavailable flops = UnavailableFigures(ctx, RuntimeGroup::kFlops);
  *no_flops = flops.all;
  out.lines.insert(out.lines.end(), flops.lines.begin(), flops.lines.end());
  return out;
}

int GridRows(const Ctx& ctx) {
  bool no_flops = false;
  const Unavailable unavailable = GridUnavailable(ctx, &no_flops);
  const int lines = static_cast<int>(unavailable.lines.size());
  if (unavailable.all) return 1 + lines;
  return 1 + lines + std::max<int>(1, static_cast<int>(TabDevices(ctx).size()));
}

void DrawGrid(Ctx& ctx, int y, int rows) {
  const std::vector<double> util = ctx.model.CoreUtilization(ctx.pid);
  const std::vector<std::optional<double>> flops = ctx.model.CoreFlops(ctx.pid);
  const std::vector<int> devices = TabDevices(ctx);
  bool no_flops = false;
  const Unavailable unavailable = GridUnavailable(ctx, &no_flops);
  Header(ctx, y, GridTitle(ctx, unavailable.all, no_flops, devices, util, flops));
  if (unavailable.all) {
    // No runtime shown has figures: a bar or an average would show 0 for "not measured".
    DrawUnavailable(ctx, unavailable, y + 1, rows - 1);
    return;
  }
  if (rows <= 1) return;
  // Runtimes without figures are named first; their cores show no activity of their own. Cores
  // whose FLOPs are unmeasured show "n/a" in TFLOPS mode, their utilization bars still drawn.
  const int said = DrawUnavailable(ctx, unavailable, y + 1, rows - 1);
  bool folded = false;
  const int shown = Visible(static_cast<int>(devices.size()), rows - 1 - said, &folded);
  for (int r = 0; r < shown; ++r) {
    DrawGridRow(ctx, y + 1 + said + r, devices[static_cast<std::size_t>(r)], util, flops);
  }
  if (folded) {
    const int left = static_cast<int>(devices.size()) - shown;
    Text(ctx.canvas, 0, y + rows - 1, ctx.canvas.width(),
         "... " + std::to_string(left) + " more device" + (left == 1 ? "" : "s") +
             " (enlarge the window to see them)",
         Role::kDim);
  }
}

int HbmRows(const Ctx& ctx) {
  // Without bandwidth, a row says why.
  return (BandwidthMeasured(ctx) ? 1 : 2) +
         std::max<int>(1, static_cast<int>(TabDevices(ctx).size()));
}

void DrawHbm(Ctx& ctx, int y, int rows) {
  if (!BandwidthMeasured(ctx)) {
    DrawHbmMemory(ctx, y, rows);
    return;
  }
  const std::vector<int> devices = TabDevices(ctx);
  Header(ctx, y, HbmTitle(ctx, devices));
  if (rows <= 1) return;
  if (!ctx.model.system().has_hbm_stats()) {
    Text(ctx.canvas, 1, y + 1, ctx.canvas.width() - 1, "no HBM data yet", Role::kDim);
    return;
  }
  bool folded = false;
  const int shown = Visible(static_cast<int>(devices.size()), rows - 1, &folded);
  for (int r = 0; r < shown; ++r) DrawHbmRow(ctx, y + 1 + r, devices[static_cast<std::size_t>(r)]);
  if (folded) SayMoreDevices(ctx, y + rows - 1, static_cast<int>(devices.size()) - shown);
}

int GraphRows(const Ctx& ctx) {
  const int series = static_cast<int>(TabDevices(ctx).size());
  return 1 + std::clamp(series, 3, 8);
}

int GraphSpareRows(const Ctx& ctx) {
  // Up to kMaxGraphRows rows per graph when the window has room (a tab of one or two devices).
  const int series = std::max(1, static_cast<int>(TabDevices(ctx).size()));
  return series <= 4 ? std::max(0, 1 + series * kMaxGraphRows - GraphRows(ctx)) : 0;
}

void DrawGraphs(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  static const char* const kTitles[kGraphViews] = {"NeuronCore utilization per device",
                                                   "HBM bandwidth per device (% of peak)",
                                                   "Collective p99 latency per runtime"};
  const int view = static_cast<int>(ctx.view.graph);
  Header(ctx, y, std::string("History: ") + kTitles[view] + "  (g: next graph)");
  if (rows <= 1) return;
  // A signal the backend cannot measure has no history: its reason instead of a flat line.
  if (ctx.view.graph == GraphView::kHbm && !BandwidthMeasured(ctx)) {
    Text(c, 1, y + 1, c.width() - 1,
         "HBM bandwidth: unavailable — " + ctx.model.system().hbm_stats().bandwidth_unavailable(),
         Role::kDim);
    return;
  }
  const Unavailable unavailable = UnavailableFigures(
      ctx, ctx.view.graph == GraphView::kCollectiveP99 ? RuntimeGroup::kCollectives
                                                       : RuntimeGroup::kCores);
  if (ctx.view.graph != GraphView::kHbm && unavailable.all) {
    DrawUnavailable(ctx, unavailable, y + 1, rows - 1);
    return;
  }
  double max = 100;
  const std::vector<GraphSeries> series = HistorySeries(ctx, &max);
  if (series.empty()) {
    Text(c, 1, y + 1, c.width() - 1, "no history yet", Role::kDim);
    return;
  }
  if (c.width() - kGraphLabel - 8 < 4) return;
  if (static_cast<int>(series.size()) <= rows - 1) {
    DrawEachGraph(ctx, y, rows - 1, series, max);
  } else {
    DrawCombinedGraph(ctx, y, rows - 1, series, max);
  }
}

}  // namespace neuronmon::tui
