#include "tui/app.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "proto/common/terminal_text.h"
#include "tui/controller.h"
#include "tui/keymap.h"
#include "tui/model.h"
#include "tui/ncurses_canvas.h"
#include "tui/view.h"

namespace neuronmon::tui {
namespace {

using Steady = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

Result<std::unique_ptr<client::Client>> Connect(const AppOptions& o) {
  client::ClientOptions co;
  co.client_name = std::string("neuron-top/") + NEURONMON_VERSION;
  co.endpoint = o.endpoint;
  co.token = o.token;
  co.subscribe = TopSubscription(o.delay_seconds);
  co.subscribe.set_resume_after_seq(0);  // replay the daemon's history: the graphs start full
  return client::Client::Connect(std::move(co));
}

ViewState StartView(const AppOptions& o) {
  ViewState view;
  view.version = NEURONMON_VERSION;
  view.utf8 = !o.ascii && LocaleIsUtf8();
  view.glyphs = view.utf8 ? GraphStyle::kBraille : GraphStyle::kAscii;
  return view;
}

int RunOnce(const AppOptions& o, client::Client& c) {
  Model model;
  const bool standalone = c.standalone();
  const std::string endpoint = c.endpoint_description();
  // Wait for a report whose window has length: a daemon that just started has none yet.
  const auto deadline = Steady::now() + std::chrono::seconds(5);
  bool ready = false;
  while (!ready && Steady::now() < deadline) {
    std::optional<client::Event> e = c.Next(std::chrono::milliseconds(100));
    if (!e) continue;
    Absorb(*e, standalone, endpoint, model);
    if (e->kind == client::Event::Kind::kReport && !e->report.replay()) {
      ready = e->report.period_ns() > 0;
    }
  }
  if (!model.has_data()) {
    std::cerr << "neuron-top: no report from " << endpoint << " within 5 s\n";
    return 1;
  }
  // Without $LINES, as tall as every section wants: a tall canvas, trimmed to its content.
  TextCanvas canvas(o.once_width, o.once_height > 0 ? o.once_height : 400);
  Render(model, StartView(o), canvas);
  const std::string text = TrimOnceFrame(canvas.Text(), o.once_height);
  if (!model.info.empty()) std::cerr << "neuron-top: " << model.info << "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

// Runs the loop's part of a command; false to quit.
bool Perform(Effect effect, NcursesCanvas& canvas) {
  switch (effect) {
    case Effect::kQuit:
      return false;
    case Effect::kRepaint:
      canvas.Invalidate();
      break;
    case Effect::kResize:
      canvas.Resize();
      break;
    case Effect::kNone:
      break;
  }
  return true;
}

void Draw(TopState& state, NcursesCanvas& canvas) {
  if (state.view.paused) state.frozen.connection = state.live.connection;
  state.frame = Render(ShownModel(state), state.view, canvas);
  canvas.Present();
}

int RunInteractive(const AppOptions& o, client::Client& c) {
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGHUP, OnSignal);
  const bool standalone = c.standalone();
  const std::string endpoint = c.endpoint_description();
  TopState state;
  state.view = StartView(o);
  state.view.refresh_seconds = o.delay_seconds;
  NcursesCanvas canvas({o.color, true});
  bool quit = false;
  bool dirty = true;
  Steady::time_point last_draw{};
  while (!quit && !g_stop) {
    const auto due = last_draw + std::chrono::duration_cast<Steady::duration>(
                                     std::chrono::duration<double>(state.view.refresh_seconds));
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(due - Steady::now()).count();
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {c.notify_fd(), POLLIN, 0}};
    const int timeout = dirty ? static_cast<int>(std::clamp<long long>(wait, 0, 1000)) : 1000;
    if (::poll(fds, 2, timeout) < 0 && errno != EINTR) break;
    bool input = false;
    while (std::optional<Input> in = canvas.ReadInput()) {
      quit |= !Perform(Apply(Translate(*in, state.view.help), state), canvas);
      input = true;
    }
    while (std::optional<client::Event> e = c.Next(std::chrono::milliseconds(0))) {
      dirty |= Absorb(*e, standalone, endpoint, state.live);
    }
    if (state.live.connection == ConnectionState::kReconnecting) {
      if (auto retry = c.next_retry()) {
        state.live.reconnect_in_seconds =
            std::max(0.0, std::chrono::duration<double>(*retry - Steady::now()).count());
        dirty = true;
      }
    }
    // Redraw at once for keys; for data, at most once per refresh interval.
    if (input || (dirty && Steady::now() >= due)) {
      Draw(state, canvas);
      last_draw = Steady::now();
      dirty = false;
    }
  }
  canvas.Stop();
  // Said once the terminal is back: the screen itself says "embedded simulator".
  if (!state.live.info.empty()) std::cerr << "neuron-top: " << state.live.info << "\n";
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
