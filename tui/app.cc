#include "tui/app.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "proto/common/terminal_text.h"
#include "tui/keymap.h"
#include "tui/model.h"
#include "tui/ncurses_canvas.h"
#include "tui/view.h"

namespace neuronmon::tui {
namespace {

using Steady = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

// Applies one client event; true when the screen should change.
bool Absorb(const client::Event& e, client::Client& c, Model& model) {
  switch (e.kind) {
    case client::Event::Kind::kConnected:
      model.SetWelcome(e.welcome);
      model.connection = c.standalone() ? ConnectionState::kEmbedded : ConnectionState::kLive;
      model.endpoint = c.endpoint_description();
      return true;
    case client::Event::Kind::kReport:
      model.Apply(e.report);
      return true;
    case client::Event::Kind::kDisconnected:
      model.connection = ConnectionState::kReconnecting;
      model.last_notice = SanitizeForTerminal(e.text);
      return true;
    case client::Event::Kind::kNotice:
      if (e.notice.kind() == v1::NOTICE_KIND_SHUTDOWN) model.connection = ConnectionState::kStopped;
      model.last_notice = SanitizeForTerminal(e.notice.text());
      return true;
    case client::Event::Kind::kInfo:
      model.info = SanitizeForTerminal(e.text);
      return false;
    default:
      return false;
  }
}

Result<std::unique_ptr<client::Client>> Connect(const AppOptions& o) {
  client::ClientOptions co;
  co.client_name = std::string("neuron-top/") + NEURONMON_VERSION;
  co.endpoint = o.endpoint;
  co.token = o.token;
  co.subscribe = TopSubscription(o.delay_seconds);
  co.subscribe.set_resume_after_seq(0);  // replay the daemon's history: the graphs start full
  return client::Client::Connect(std::move(co));
}

int RunOnce(const AppOptions& o, client::Client& c) {
  Model model;
  ViewState view;
  view.version = NEURONMON_VERSION;
  view.utf8 = !o.ascii && LocaleIsUtf8();
  view.glyphs = view.utf8 ? GraphStyle::kBraille : GraphStyle::kAscii;
  // Wait for a report whose window has length: a daemon that just started has none yet.
  const auto deadline = Steady::now() + std::chrono::seconds(5);
  bool ready = false;
  while (!ready && Steady::now() < deadline) {
    std::optional<client::Event> e = c.Next(std::chrono::milliseconds(100));
    if (!e) continue;
    Absorb(*e, c, model);
    if (e->kind == client::Event::Kind::kReport && !e->report.replay()) {
      ready = e->report.period_ns() > 0;
    }
  }
  if (!model.has_data()) {
    std::cerr << "neuron-top: no report from " << c.endpoint_description() << " within 5 s\n";
    return 1;
  }
  int height = o.once_height;
  if (height <= 0) {
    // As tall as every section wants: render once on a tall canvas and trim the blank tail.
    height = 400;
  }
  TextCanvas canvas(o.once_width, height);
  Render(model, view, canvas);
  std::string text = canvas.Text();
  if (o.once_height <= 0) {
    // Drop the blank rows between the body and the tab/help bars.
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
      lines.push_back(text.substr(start, nl - start));
    }
    std::size_t last_body = 0;
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
      if (!lines[i].empty()) last_body = i;
    }
    text.clear();
    for (std::size_t i = 0; i <= last_body; ++i) text += lines[i] + "\n";
    // The tab bar, but not the key help: nobody presses keys in a printed frame.
    if (lines.size() >= 2) text += lines[lines.size() - 2] + "\n";
  } else if (height >= 4) {
    // $LINES high: the last row is the key help; leave it blank (the frame keeps its height).
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    text += "\n";
  }
  if (!model.info.empty()) std::cerr << "neuron-top: " << model.info << "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

struct Ui {
  Model live;
  Model frozen;  // what the screen shows while paused
  ViewState view;
  Frame frame;
};

void Handle(const Command& cmd, Ui& ui, double* refresh, bool* quit, NcursesCanvas& canvas) {
  ViewState& v = ui.view;
  const Model& shown = v.paused ? ui.frozen : ui.live;
  const int tree = static_cast<int>(BuildTree(shown, v).size());
  auto toggle = [&](int index) {
    const std::vector<TreeRow> rows = BuildTree(shown, v);
    if (index < 0 || index >= static_cast<int>(rows.size()) ||
        !rows[static_cast<std::size_t>(index)].expandable)
      return;
    const std::string& id = rows[static_cast<std::size_t>(index)].id;
    if (!v.expanded.erase(id)) v.expanded.insert(id);
  };
  switch (cmd.action) {
    case Action::kQuit:
      *quit = true;
      break;
    case Action::kUp:
      v.tree_cursor = std::max(0, v.tree_cursor - 1);
      break;
    case Action::kDown:
      v.tree_cursor = std::min(std::max(0, tree - 1), v.tree_cursor + 1);
      break;
    case Action::kPageUp:
      v.tree_cursor = std::max(0, v.tree_cursor - ui.frame.tree_page);
      break;
    case Action::kPageDown:
      v.tree_cursor = std::min(std::max(0, tree - 1), v.tree_cursor + ui.frame.tree_page);
      break;
    case Action::kToggleItem:
      toggle(v.tree_cursor);
      break;
    case Action::kToggleTree: {
      const std::vector<std::string> all = AllTreeNodes(shown, v);
      const bool any_closed = std::any_of(
          all.begin(), all.end(), [&](const std::string& id) { return !v.expanded.count(id); });
      v.expanded.clear();
      if (any_closed) v.expanded.insert(all.begin(), all.end());
      v.tree_cursor = 0;
      break;
    }
    case Action::kPrevTab:
      v.tab = (v.tab + TabCount(shown) - 1) % TabCount(shown);
      v.tree_cursor = 0;
      break;
    case Action::kNextTab:
      v.tab = (v.tab + 1) % TabCount(shown);
      v.tree_cursor = 0;
      break;
    case Action::kSelectTab:
      if (cmd.tab <= TabCount(shown)) v.tab = cmd.tab - 1;
      v.tree_cursor = 0;
      break;
    case Action::kToggleFlops:
      v.flops = !v.flops;
      break;
    case Action::kHelp:
      v.help = true;
      break;
    case Action::kCloseOverlay:
      v.help = false;
      break;
    case Action::kFaster:
      *refresh = std::max(0.1, *refresh / 2);
      break;
    case Action::kSlower:
      *refresh = std::min(60.0, *refresh * 2);
      break;
    case Action::kPause:
      v.paused = !v.paused;
      if (v.paused) ui.frozen = ui.live;
      break;
    case Action::kNextGraph:
      v.graph = static_cast<GraphView>((static_cast<int>(v.graph) + 1) % kGraphViews);
      break;
    case Action::kNextGlyphs:
      v.glyphs = NextGraphStyle(v.glyphs, v.utf8);
      break;
    case Action::kRepaint:
      canvas.Invalidate();
      break;
    case Action::kResize:
      canvas.Resize();
      break;
    case Action::kClick:
      for (const Hit& h : ui.frame.hits) {
        if (cmd.y != h.y || cmd.x < h.x0 || cmd.x >= h.x1) continue;
        if (h.kind == Hit::Kind::kTab) {
          v.tab = h.index - 1;
          v.tree_cursor = 0;
        } else {
          v.tree_cursor = h.index;
          toggle(h.index);
        }
      }
      break;
    case Action::kNone:
      break;
  }
  v.refresh_seconds = *refresh;
}

int RunInteractive(const AppOptions& o, client::Client& c) {
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGHUP, OnSignal);
  Ui ui;
  ui.view.version = NEURONMON_VERSION;
  ui.view.utf8 = !o.ascii && LocaleIsUtf8();
  ui.view.glyphs = ui.view.utf8 ? GraphStyle::kBraille : GraphStyle::kAscii;
  double refresh = o.delay_seconds;
  ui.view.refresh_seconds = refresh;
  NcursesCanvas canvas({o.color, true});
  bool quit = false;
  bool dirty = true;
  Steady::time_point last_draw{};
  while (!quit && !g_stop) {
    const auto due = last_draw + std::chrono::duration_cast<Steady::duration>(
                                     std::chrono::duration<double>(refresh));
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(due - Steady::now()).count();
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {c.notify_fd(), POLLIN, 0}};
    const int timeout = dirty ? static_cast<int>(std::clamp<long long>(wait, 0, 1000)) : 1000;
    if (::poll(fds, 2, timeout) < 0 && errno != EINTR) break;
    bool input = false;
    while (std::optional<Input> in = canvas.ReadInput()) {
      Handle(Translate(*in, ui.view.help), ui, &refresh, &quit, canvas);
      input = true;
    }
    while (std::optional<client::Event> e = c.Next(std::chrono::milliseconds(0))) {
      dirty |= Absorb(*e, c, ui.live);
    }
    if (ui.live.connection == ConnectionState::kReconnecting) {
      if (auto retry = c.next_retry()) {
        ui.live.reconnect_in_seconds =
            std::max(0.0, std::chrono::duration<double>(*retry - Steady::now()).count());
        dirty = true;
      }
    }
    // Redraw at once for keys; for data, at most once per refresh interval.
    if (input || (dirty && Steady::now() >= due)) {
      const Model& shown = ui.view.paused ? ui.frozen : ui.live;
      if (ui.view.paused) ui.frozen.connection = ui.live.connection;
      ui.frame = Render(shown, ui.view, canvas);
      canvas.Present();
      last_draw = Steady::now();
      dirty = false;
    }
  }
  canvas.Stop();
  // Said once the terminal is back: the screen itself says "embedded simulator".
  if (!ui.live.info.empty()) std::cerr << "neuron-top: " << ui.live.info << "\n";
  return 0;
}

}  // namespace

int RunTop(const AppOptions& o) {
  Result<std::unique_ptr<client::Client>> c = Connect(o);
  if (!c.ok()) {
    std::cerr << "neuron-top: " << SanitizeForTerminal(c.status().message()) << "\n";
    return 1;
  }
  // The fallback notice (no daemon socket: running the simulator in-process) goes to stderr first.
  if (o.once) return RunOnce(o, **c);
  return RunInteractive(o, **c);
}

}  // namespace neuronmon::tui
