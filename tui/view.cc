#include "tui/view.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "proto/common/clock.h"
#include "proto/names/names.h"
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

// A canvas that forwards every write to another, changing its text or its role on the way.
class Filter : public Canvas {
 public:
  explicit Filter(Canvas& inner) : inner_(inner) {}
  int width() const override { return inner_.width(); }
  int height() const override { return inner_.height(); }
  void Clear() override { inner_.Clear(); }
  void Put(int x, int y, std::string_view text, Role role) override {
    inner_.Put(x, y, MapText(text), MapRole(role));
  }
  void Paint(int x, int y, int count, Role role) override {
    inner_.Paint(x, y, count, MapRole(role));
  }

 protected:
  virtual std::string MapText(std::string_view text) const { return std::string(text); }
  virtual Role MapRole(Role role) const { return role; }

 private:
  Canvas& inner_;
};

// Without UTF-8 (a non-UTF-8 locale or --ascii) every glyph reaching the terminal is ASCII, text
// from the daemon included: each other code point becomes one ASCII look-alike, so widths hold.
class AsciiOnly final : public Filter {
 public:
  using Filter::Filter;

 private:
  std::string MapText(std::string_view text) const override { return FoldToAscii(text); }
};

// While the daemon is out of reach the figures on screen are stale: drawn dim (section bars keep
// their look, so the layout still reads), and the title's banner says why.
class Stale final : public Filter {
 public:
  using Filter::Filter;

 private:
  Role MapRole(Role r) const override {
    return r == Role::kSection || r == Role::kSelected || r == Role::kBarFree ? r : Role::kDim;
  }
};

struct Slot {
  const char* name;
  int priority;  // lower is allocated first
  int min;
  int desired;
  std::function<void(Ctx&, int, int)> draw;
  int rows = 0;
  int spare = 0;  // rows beyond `desired` it can use when the window has rows left over
};

// The connection state for the title; `brief` drops the endpoint and the pause hint, for narrow
// terminals (the state must always show, the title's instance may be cut).
std::string StateText(const Model& m, const ViewState& v, bool brief) {
  std::string s;
  if (!v.replay.empty()) return v.replay;
  switch (m.connection) {
    case ConnectionState::kConnecting:
      s = brief ? "connecting" : "connecting to " + m.endpoint;
      break;
    case ConnectionState::kLive:
      s = brief ? "live" : "live " + m.endpoint;
      break;
    case ConnectionState::kReconnecting:
      s = brief || m.endpoint.empty() ? "reconnecting" : "reconnecting to " + m.endpoint;
      if (m.reconnect_in_seconds > 0)
        s += " in " + std::to_string(static_cast<int>(m.reconnect_in_seconds + 0.999)) + "s";
      break;
    case ConnectionState::kEmbedded:
      s = brief ? "embedded" : "embedded simulator";
      break;
    case ConnectionState::kStopped:
      s = "daemon stopped";
      break;
  }
  if (v.paused) s = (brief ? "PAUSED | " : "PAUSED (Space resumes; data keeps arriving) | ") + s;
  // A refresh interval other than the default 1 s (from --delay or + / -) stays in view, so a
  // slow screen is not taken for a stuck one.
  if (v.refresh_seconds != 1) {
    char every[32];
    std::snprintf(every, sizeof every, " | every %gs", v.refresh_seconds);
    s += every;
  }
  return s;
}

void DrawTitle(Ctx& ctx) {
  Canvas& c = ctx.canvas;
  const v1::InstanceInfo& info = ctx.model.inventory().instance_info();
  std::string title = "neuron-top " + ctx.view.version;
  if (ctx.model.has_inventory()) {
    title += " running on " + info.instance_id() + " (" + info.instance_type() + ")";
    // A real host without per-application figures says why (e.g. install aws-neuronx-tools).
    const std::string& runtime = ctx.model.inventory().runtime_status();
    if (!runtime.empty()) title += " | " + runtime;
  }
  c.Put(0, 0, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kTitle);
  const Role state_role = ctx.view.paused || !ctx.view.replay.empty() ||
                                  ctx.model.connection == ConnectionState::kReconnecting
                              ? Role::kBanner
                              : Role::kTitle;
  const int tw = TextWidth(title);
  std::string state = StateText(ctx.model, ctx.view, false);
  if (tw + TextWidth(state) + 3 > c.width()) state = StateText(ctx.model, ctx.view, true);
  const int sw = std::min(TextWidth(state), c.width());
  const int state_x = c.width() - sw - (sw < c.width() ? 1 : 0);
  const int centered = std::max(0, (c.width() - tw) / 2);
  if (centered + tw + 2 <= state_x) {
    Text(c, centered, 0, tw, title, Role::kTitle);
  } else {
    // The title gives way to the state: its end (instance id and type) is cut first.
    Text(c, std::min(1, state_x - 1), 0, std::max(0, state_x - 2), title, Role::kTitle);
  }
  Text(c, state_x, 0, sw, state, state_role);
}

void DrawTabs(Ctx& ctx, int y) {
  Canvas& c = ctx.canvas;
  std::vector<std::string> names = {"all"};
  for (const RuntimeView& r : ctx.model.runtimes()) names.push_back(r.report.tag());
  const int active = std::clamp(ctx.view.tab, 0, static_cast<int>(names.size()) - 1);
  int x = Text(c, 0, y, c.width(), "Neuron Apps  ", Role::kHeader);
  // Scroll so the active tab stays visible: start from a tab such that it fits, leaving room for
  // the "< " and " >" markers.
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < names.size(); ++i)
    labels.push_back("[" + std::to_string(i + 1) + "]:" + names[i]);
  int first = 0;
  int span = 0;
  for (int i = active; i >= 0; --i) {
    span += TextWidth(labels[static_cast<std::size_t>(i)]) + 4;
    if (x + span + (i > 0 ? 2 : 0) > c.width() - 2) break;
    first = i;
  }
  if (first > 0) x = Text(c, x, y, c.width() - x, "< ", Role::kDim);
  const int count = static_cast<int>(names.size());
  int active_end = 0;
  int i = first;
  for (; i < count && x < c.width(); ++i) {
    const std::string& label = labels[static_cast<std::size_t>(i)];
    const std::string text = i == active ? ">" + label + "<" : " " + label + " ";
    const int start = x;
    x = Text(c, x, y, c.width() - x, text, i == active ? Role::kTabActive : Role::kTab);
    ctx.frame.hits.push_back({Hit::Kind::kTab, y, start, x, i + 1});
    if (i == active) active_end = x;
    if (start + TextWidth(text) > c.width()) break;  // cut: more follows
    x = Text(c, x, y, c.width() - x, "  ", Role::kNormal);
  }
  // Tabs beyond the right edge (cut or not drawn): say so, as "< " does on the left.
  if (i < count && c.width() >= 2 && active_end <= c.width() - 2)
    Text(c, c.width() - 2, y, 2, " >", Role::kDim);
}

void DrawHelpBar(Ctx& ctx, int y) {
  Canvas& c = ctx.canvas;
  if (!ctx.view.notice.empty()) {
    c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kBanner);
    Text(c, 0, y, c.width(), " " + ctx.view.notice, Role::kBanner);
    return;
  }
  c.Put(0, y, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kHelp);
  if (ctx.view.procs.shown) {
    Text(c, 0, y, c.width(),
         " h: help   q: quit   p/Esc: back   arrows: select   s/F6: sort   r: reverse   /: filter"
         "   e/F5: group by job   k/F9: signal   enter: its tab",
         Role::kHelp);
    return;
  }
  Text(c, 0, y, c.width(),
       " h: help   q: quit   p: processes   arrows: move tree selection   enter: expand/collapse "
       "tree item   x: "
       "expand/collapse entire tree   a/d: previous/next tab   f: FLOPS on/off   1-9: select tab",
       Role::kHelp);
}

// `lines` in a framed box over the middle of the screen.
void DrawOverlay(Ctx& ctx, const std::vector<std::string>& lines) {
  Canvas& c = ctx.canvas;
  int w = 0;
  for (const std::string& l : lines) w = std::max(w, TextWidth(l));
  w = std::min(w + 4, c.width());
  if (c.width() - w <= 2) w = c.width();  // no sliver of the screen behind at the edges
  const int h = std::min(static_cast<int>(lines.size()) + 2, c.height());
  const int x0 = std::max(0, (c.width() - w) / 2);
  const int y0 = std::max(0, (c.height() - h) / 2);
  for (int r = 0; r < h; ++r)
    c.Put(x0, y0 + r, std::string(static_cast<std::size_t>(w), ' '), Role::kHelp);
  // A frame around it, so it reads as a box over the screen rather than part of it.
  if (w >= 2 && h >= 2) {
    const bool utf8 = ctx.view.utf8;
    std::string top = utf8 ? "┌" : "+", bottom = utf8 ? "└" : "+";
    for (int i = 0; i < w - 2; ++i) top += utf8 ? "─" : "-", bottom += utf8 ? "─" : "-";
    top += utf8 ? "┐" : "+";
    bottom += utf8 ? "┘" : "+";
    c.Put(x0, y0, top, Role::kHelp);
    c.Put(x0, y0 + h - 1, bottom, Role::kHelp);
    for (int r = 1; r + 1 < h; ++r) {
      c.Put(x0, y0 + r, utf8 ? "│" : "|", Role::kHelp);
      c.Put(x0 + w - 1, y0 + r, utf8 ? "│" : "|", Role::kHelp);
    }
  }
  for (int i = 0; i + 2 < h && i < static_cast<int>(lines.size()); ++i) {
    Text(c, x0 + 2, y0 + 1 + i, w - 4, lines[static_cast<std::size_t>(i)], Role::kHelp);
  }
}

// "device 3 core 2", "pid 4242 (train)", "instance": whom an event is about.
std::string EventSubjectText(const v1::EventSubject& s) {
  if (s.pid() != 0) {
    return "pid " + std::to_string(s.pid()) +
           (s.runtime_tag().empty() ? "" : " (" + s.runtime_tag() + ")");
  }
  std::string out;
  if (s.has_neuron_device_index()) out = "device " + std::to_string(s.neuron_device_index());
  if (s.has_neuroncore_index()) out += " core " + std::to_string(s.neuroncore_index());
  return out.empty() ? "instance" : out;
}

// The recent-event list (e): newest first, as many as the screen holds.
void DrawEventsOverlay(Ctx& ctx) {
  const std::deque<v1::Event>& events = ctx.model.events();
  std::vector<std::string> lines = {"recent events, newest first (times UTC; any key closes)", ""};
  if (events.empty()) lines.push_back("none since neuron-top connected");
  const auto room = static_cast<std::size_t>(std::max(1, ctx.canvas.height() - 4));
  for (auto it = events.rbegin(); it != events.rend() && lines.size() < room + 2; ++it) {
    const WallTime when = FromUnixNanos(it->unix_ns());
    std::string change = it->before().empty() ? it->after() : it->before() + " -> " + it->after();
    lines.push_back(FormatUtcMillis(when).substr(11, 8) + "  " + EventKindName(it->kind()) + "  " +
                    EventSubjectText(it->subject()) + "  " + change + "  " + it->summary());
  }
  DrawOverlay(ctx, lines);
}

void DrawOverlays(Ctx& ctx) {
  if (ctx.view.help) {
    DrawOverlay(ctx, HelpLines());
  } else if (ctx.view.events) {
    DrawEventsOverlay(ctx);
  }
}

// The slots in priority order (screen order among equals).
std::vector<Slot*> ByPriority(std::vector<Slot>& slots) {
  std::vector<Slot*> order;
  for (Slot& s : slots) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](Slot* a, Slot* b) { return a->priority < b->priority; });
  return order;
}

// Grows the shown slots toward their desired size, in priority order, while `rows` last.
void GrowToDesired(const std::vector<Slot*>& order, int& rows) {
  for (Slot* s : order) {
    if (s->rows == 0 || rows <= 0) continue;
    const int more = std::min(rows, std::max(0, s->desired - s->rows));
    s->rows += more;
    rows -= more;
  }
}

// Gives every slot its minimum in priority order while rows last, then grows them toward their
// desired size in the same order. Slots left at zero are hidden.
void Allocate(std::vector<Slot>& slots, int rows) {
  const std::vector<Slot*> order = ByPriority(slots);
  for (Slot* s : order) {
    if (rows >= s->min) {
      s->rows = s->min;
      rows -= s->min;
    }
  }
  GrowToDesired(order, rows);
  // Rows left over make graphs taller, then go to the tree.
  for (Slot* s : order) {
    if (s->rows == 0 || s->spare <= 0) continue;
    const int more = std::min(rows, s->spare);
    s->rows += more;
    rows -= more;
  }
  for (Slot* s : order) {
    if (s->rows > 0 && std::string(s->name) == "memory details") s->rows += rows;
  }
}

// Whether the data shown is out of date: the daemon is out of reach and what is shown is the
// last it sent.
bool ShownStale(const Model& model) {
  const bool out_of_reach = model.connection == ConnectionState::kReconnecting ||
                            model.connection == ConnectionState::kStopped;
  return out_of_reach && model.has_data();
}

// The Processes view: the table in place of the sections and the tab bar, the key help below.
void RenderProcesses(Ctx& ctx) {
  const int h = ctx.canvas.height();
  const bool bar = h >= 3;
  if (bar) DrawHelpBar(ctx, h - 1);
  const int rows = h - 1 - (bar ? 1 : 0);
  Stale stale(ctx.canvas);
  Canvas& body = ShownStale(ctx.model) ? static_cast<Canvas&>(stale) : ctx.canvas;
  RowClip clip(body, 1, rows, &ctx.frame.overflow);
  Ctx section{ctx.model, ctx.view, clip, ctx.pid, ctx.glyphs, ctx.frame};
  DrawProcesses(section, 1, rows);
  DrawOverlays(ctx);
}

// The main view's sections in screen order, with their priorities and the rows they want.
std::vector<Slot> Sections(const Ctx& ctx, int body_rows) {
  // The grid is what neuron-top is for: it keeps up to half the screen before others get rows.
  const int grid = GridRows(ctx);
  const int grid_min = std::min(grid, std::max(2, body_rows / 2));
  return {
      {"NeuronCores", 0, grid_min, grid, DrawGrid},
      // A header and a fold line alone would show no device: at least one device row, or none.
      {"HBM", 4, std::min(3, HbmRows(ctx)), HbmRows(ctx), DrawHbm},
      {"collectives", 5, 2, CollectiveRows(ctx), DrawCollectives},
      {"diagnosis", 1, 2, DiagnosisRows(ctx), DrawDiagnosis},
      {"history", 6, 3, GraphRows(ctx), DrawGraphs, 0, GraphSpareRows(ctx)},
      {"vCPU", 2, 3, 3, DrawVcpu},
      {"memory summary", 3, 3, 3, DrawMemorySummary},
      {"memory details", 7, 3, TreeRows(ctx), DrawTree},
  };
}

// Names in `hidden` the sections that got no rows, in screen order. When there are any, the row
// that names them comes from the lowest-priority section shown, which is hidden too when that
// leaves it less than its minimum.
void Hide(std::vector<Slot>& slots, int body_rows, std::vector<std::string>& hidden) {
  for (const Slot& s : slots) {
    if (s.rows == 0) hidden.push_back(s.name);
  }
  if (hidden.empty()) return;
  Slot* last = nullptr;
  for (Slot& s : slots) {
    if (s.rows > 0 && (last == nullptr || s.priority > last->priority)) last = &s;
  }
  if (last != nullptr) {
    last->rows -= 1;
    if (last->rows < last->min) {
      hidden.push_back(last->name);
      last->rows = 0;
      // Its other rows go to the sections still shown that want more (the grid first).
      int free = body_rows - 1;
      for (const Slot& s : slots) free -= s.rows;
      GrowToDesired(ByPriority(slots), free);
    }
  }
  std::vector<std::string> in_order;
  for (const Slot& s : slots) {
    if (std::find(hidden.begin(), hidden.end(), s.name) != hidden.end()) in_order.push_back(s.name);
  }
  hidden = std::move(in_order);
}

// Draws the sections with rows from row 1 down, each clipped to its rows; returns the row after
// them.
int DrawSections(Ctx& ctx, const std::vector<Slot>& slots) {
  int y = 1;
  Stale stale(ctx.canvas);
  Canvas& body = ShownStale(ctx.model) ? static_cast<Canvas&>(stale) : ctx.canvas;
  for (const Slot& s : slots) {
    if (s.rows <= 0) continue;
    RowClip clip(body, y, s.rows, &ctx.frame.overflow);
    Ctx section{ctx.model, ctx.view, clip, ctx.pid, ctx.glyphs, ctx.frame};
    s.draw(section, y, s.rows);
    y += s.rows;
  }
  return y;
}

}  // namespace

Frame Render(const Model& model, const ViewState& view, Canvas& target) {
  Frame frame;
  AsciiOnly ascii(target);
  Canvas& canvas = view.utf8 ? target : ascii;
  canvas.Clear();
  if (canvas.width() <= 0 || canvas.height() <= 0) return frame;
  Ctx ctx{model, view, canvas, TabPid(model, view.tab), GlyphsFor(view.utf8), frame};
  DrawTitle(ctx);
  const int h = canvas.height();
  if (view.procs.shown) {
    RenderProcesses(ctx);
    return frame;
  }
  const bool bars = h >= 4;  // room for the tab bar and the help bar
  if (bars) {
    DrawTabs(ctx, h - 2);
    DrawHelpBar(ctx, h - 1);
  }
  const int body_rows = h - 1 - (bars ? 2 : 0);
  std::vector<Slot> slots = Sections(ctx, body_rows);
  Allocate(slots, body_rows);
  Hide(slots, body_rows, frame.hidden);
  const int y = DrawSections(ctx, slots);
  if (!frame.hidden.empty() && y < h - (bars ? 2 : 0)) {
    std::string names;
    for (const std::string& n : frame.hidden) names += (names.empty() ? "" : ", ") + n;
    Text(canvas, 0, y, canvas.width(), "hidden (window too small): " + names, Role::kDim);
  }
  DrawOverlays(ctx);
  return frame;
}

}  // namespace neuronmon::tui
