#include "tui/view.h"

#include <algorithm>
#include <functional>

#include "tui/keymap.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

// A section's view of the canvas: its rows only. Writes outside them are dropped and counted.
class RowClip final : public Canvas {
 public:
  RowClip(Canvas& inner, int y0, int rows, int* overflow)
      : inner_(inner), y0_(y0), y1_(y0 + rows), overflow_(overflow) {}
  int width() const override { return inner_.width(); }
  int height() const override { return inner_.height(); }
  void Clear() override {}
  void Put(int x, int y, std::string_view text, Role role) override {
    if (y < y0_ || y >= y1_) {
      ++*overflow_;
      return;
    }
    inner_.Put(x, y, text, role);
  }
  void Paint(int x, int y, int count, Role role) override {
    if (y < y0_ || y >= y1_) {
      ++*overflow_;
      return;
    }
    inner_.Paint(x, y, count, role);
  }

 private:
  Canvas& inner_;
  int y0_, y1_;
  int* overflow_;
};

struct Slot {
  const char* name;
  int priority;  // lower is allocated first
  int min;
  int desired;
  std::function<void(Ctx&, int, int)> draw;
  int rows = 0;
};

std::string StateText(const Model& m, const ViewState& v) {
  std::string s;
  switch (m.connection) {
    case ConnectionState::kConnecting:
      s = "connecting";
      break;
    case ConnectionState::kLive:
      s = "live " + m.endpoint;
      break;
    case ConnectionState::kReconnecting:
      s = "reconnecting";
      if (m.reconnect_in_seconds > 0)
        s += " in " + std::to_string(static_cast<int>(m.reconnect_in_seconds + 0.999)) + "s";
      break;
    case ConnectionState::kEmbedded:
      s = "embedded simulator";
      break;
    case ConnectionState::kStopped:
      s = "daemon stopped";
      break;
  }
  if (v.paused) s = "PAUSED (Space resumes; data keeps arriving) | " + s;
  return s;
}

void DrawTitle(Ctx& ctx) {
  Canvas& c = ctx.canvas;
  const v1::InstanceInfo& info = ctx.model.inventory().instance_info();
  std::string title = "neuron-top " + ctx.view.version;
  if (ctx.model.has_inventory())
    title += " running on " + info.instance_id() + " (" + info.instance_type() + ")";
  const std::string state = StateText(ctx.model, ctx.view);
  c.Put(0, 0, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kTitle);
  const int tw = TextWidth(title);
  const int sw = TextWidth(state);
  const Role state_role = ctx.view.paused || ctx.model.connection == ConnectionState::kReconnecting
                              ? Role::kBanner
                              : Role::kTitle;
  const int state_x = c.width() - sw - 1;
  const int centered = std::max(0, (c.width() - tw) / 2);
  if (centered + tw + 2 <= state_x) {
    Text(c, centered, 0, tw, title, Role::kTitle);
    Text(c, state_x, 0, sw, state, state_role);
  } else if (tw + sw + 3 <= c.width()) {
    Text(c, 1, 0, tw, title, Role::kTitle);
    Text(c, state_x, 0, sw, state, state_role);
  } else {
    const int x = Text(c, 0, 0, c.width(), title, Role::kTitle);
    if (ctx.view.paused) Text(c, std::max(x + 1, c.width() - 6), 0, 6, "PAUSED", Role::kBanner);
  }
}

void DrawTabs(Ctx& ctx, int y) {
  Canvas& c = ctx.canvas;
  std::vector<std::string> names = {"all"};
  for (const auto& [pid, r] : ctx.model.runtimes()) names.push_back(r.tag);
  const int active = std::clamp(ctx.view.tab, 0, static_cast<int>(names.size()) - 1);
  int x = Text(c, 0, y, c.width(), "Neuron Apps  ", Role::kHeader);
  // Scroll so the active tab stays visible: start from a tab such that it fits.
  int first = 0;
  auto width_of = [&](int i) { return TextWidth(names[static_cast<std::size_t>(i)]) + 8; };
  int span = 0;
  for (int i = active; i >= 0; --i) {
    span += width_of(i);
    if (x + span > c.width()) break;
    first = i;
  }
  if (first > 0) x = Text(c, x, y, c.width() - x, "< ", Role::kDim);
  for (int i = first; i < static_cast<int>(names.size()) && x < c.width(); ++i) {
    const std::string label =
        "[" + std::to_string(i + 1) + "]:" + names[static_cast<std::size_t>(i)];
    const std::string text = i == active ? ">" + label + "<" : " " + label + " ";
    const int start = x;
    x = Text(c, x, y, c.width() - x, text, i == active ? Role::kTabActive : Role::kTab);
    ctx.frame.hits.push_back({Hit::Kind::kTab, y, start, x, i + 1});
    x = Text(c, x, y, c.width() - x, "  ", Role::kNormal);
  }
}

void DrawHelpBar(Ctx& ctx, int y) {
  Canvas& c = ctx.canvas;
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kHelp);
  Text(c, 0, y, c.width(),
       " h: help   q: quit   arrows: move tree selection   enter: expand/collapse tree item   x: "
       "expand/collapse entire tree   a/d: previous/next tab   f: FLOPS on/off   1-9: select tab",
       Role::kHelp);
}

void DrawHelpOverlay(Ctx& ctx) {
  Canvas& c = ctx.canvas;
  const std::vector<std::string> lines = HelpLines();
  int w = 0;
  for (const std::string& l : lines) w = std::max(w, TextWidth(l));
  w = std::min(w + 4, c.width());
  const int h = std::min(static_cast<int>(lines.size()) + 2, c.height());
  const int x0 = std::max(0, (c.width() - w) / 2);
  const int y0 = std::max(0, (c.height() - h) / 2);
  for (int r = 0; r < h; ++r)
    c.Put(x0, y0 + r, std::string(static_cast<std::size_t>(w), ' '), Role::kHelp);
  for (int i = 0; i + 1 < h && i < static_cast<int>(lines.size()); ++i) {
    Text(c, x0 + 2, y0 + 1 + i, w - 3, lines[static_cast<std::size_t>(i)], Role::kHelp);
  }
}

// Gives every slot its minimum in priority order while rows last, then grows them toward their
// desired size in the same order. Slots left at zero are hidden.
void Allocate(std::vector<Slot>& slots, int rows) {
  std::vector<Slot*> order;
  for (Slot& s : slots) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](Slot* a, Slot* b) { return a->priority < b->priority; });
  for (Slot* s : order) {
    if (rows >= s->min) {
      s->rows = s->min;
      rows -= s->min;
    }
  }
  for (Slot* s : order) {
    if (s->rows == 0) continue;
    const int more = std::min(rows, std::max(0, s->desired - s->rows));
    s->rows += more;
    rows -= more;
  }
  // The tree takes whatever is left.
  for (Slot* s : order) {
    if (s->rows > 0 && std::string(s->name) == "memory details") s->rows += rows;
  }
}

}  // namespace

Frame Render(const Model& model, const ViewState& view, Canvas& canvas) {
  Frame frame;
  canvas.Clear();
  if (canvas.width() <= 0 || canvas.height() <= 0) return frame;
  Ctx ctx{model, view, canvas, TabPid(model, view.tab), GlyphsFor(view.utf8), frame};
  DrawTitle(ctx);
  const int h = canvas.height();
  const bool bars = h >= 4;  // room for the tab bar and the help bar
  if (bars) {
    DrawTabs(ctx, h - 2);
    DrawHelpBar(ctx, h - 1);
  }
  // The grid is what neuron-top is for: it keeps up to half the screen before others get rows.
  const int body_rows = h - 1 - (bars ? 2 : 0);
  const int grid = GridRows(ctx);
  const int grid_min = std::min(grid, std::max(2, body_rows / 2));
  std::vector<Slot> slots = {
      {"NeuronCores", 0, grid_min, grid, DrawGrid},
      {"HBM", 4, 2, HbmRows(ctx), DrawHbm},
      {"collectives", 5, 2, CollectiveRows(ctx), DrawCollectives},
      {"diagnosis", 1, 2, DiagnosisRows(ctx), DrawDiagnosis},
      {"history", 6, 3, GraphRows(ctx), DrawGraphs},
      {"vCPU", 2, 3, 3, DrawVcpu},
      {"memory summary", 3, 3, 3, DrawMemorySummary},
      {"memory details", 7, 3, TreeRows(ctx), DrawTree},
  };
  Allocate(slots, body_rows);
  for (const Slot& s : slots) {
    if (s.rows == 0) frame.hidden.push_back(s.name);
  }
  if (!frame.hidden.empty()) {
    // One row names what is hidden; take it from the lowest-priority section shown.
    Slot* last = nullptr;
    for (Slot& s : slots) {
      if (s.rows > 0 && (last == nullptr || s.priority > last->priority)) last = &s;
    }
    if (last != nullptr) {
      last->rows -= 1;
      if (last->rows < last->min) {
        frame.hidden.push_back(last->name);
        last->rows = 0;
      }
    }
  }
  int y = 1;
  for (const Slot& s : slots) {
    if (s.rows <= 0) continue;
    RowClip clip(canvas, y, s.rows, &frame.overflow);
    Ctx section{model, view, clip, ctx.pid, ctx.glyphs, frame};
    s.draw(section, y, s.rows);
    y += s.rows;
  }
  if (!frame.hidden.empty() && y < h - (bars ? 2 : 0)) {
    std::string names;
    for (const std::string& n : frame.hidden) names += (names.empty() ? "" : ", ") + n;
    Text(canvas, 0, y, canvas.width(), "hidden (window too small): " + names, Role::kDim);
  }
  if (view.help) DrawHelpOverlay(ctx);
  return frame;
}

}  // namespace neuronmon::tui
