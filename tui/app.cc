#include "tui/app.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "client/cluster_follower.h"
#include "client/recording.h"
#include "proto/common/terminal_text.h"
#include "tui/cluster_view.h"
#include "tui/controller.h"
#include "tui/frame_pacer.h"
#include "tui/keymap.h"
#include "tui/model.h"
#include "tui/ncurses_canvas.h"
#include "tui/replay_keys.h"
#include "tui/replay_player.h"
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
  co.subscribe.set_snapshots(!o.record.empty());
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

// Keeps `event`'s snapshots in *recording; when that fails, says why on the screen and stops
// recording (sets *recording to null). Returns whether the screen changes.
bool Record(const client::Event& event, client::RecordingFile*& recording, Model& live) {
  if (recording == nullptr) return false;
  Status st;
  if (event.kind == client::Event::Kind::kConnected) recording->SetWelcome(event.welcome);
  if (event.kind == client::Event::Kind::kRecord) st = recording->Add(event.record);
  if (st.ok()) return false;
  live.last_notice =
      SanitizeForTerminal("recording to " + recording->path() + " stopped: " + st.message());
  recording = nullptr;
  return true;
}

// While the client reconnects, the countdown to its next attempt; true when it was updated.
bool ShowRetry(const client::Client& c, Model& live) {
  if (live.connection != ConnectionState::kReconnecting) return false;
  std::optional<Steady::time_point> retry = c.next_retry();
  if (!retry) return false;
  live.reconnect_in_seconds =
      std::max(0.0, std::chrono::duration<double>(*retry - Steady::now()).count());
  return true;
}

// The single-host view until the user quits; with `back` set (a host opened from the cluster
// view), Escape returns instead and sets *back.
int RunInteractive(const AppOptions& o, client::Client& c, NcursesCanvas& canvas,
                   bool* back = nullptr, client::RecordingFile* recording = nullptr) {
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGHUP, OnSignal);
  const bool standalone = c.standalone();
  const std::string endpoint = c.endpoint_description();
  TopState state;
  state.view = StartView(o);
  state.view.refresh_seconds = o.delay_seconds;
  state.signals = SignalTargetFor(o.endpoint);
  bool quit = false;
  bool dirty = true;
  // Data redraws at most once per refresh interval; without any, wake each second all the same.
  FramePacer pacer(std::chrono::seconds(1));
  NoticeBar notice_bar;
  while (!quit && !g_stop) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {c.notify_fd(), POLLIN, 0}};
    const int timeout =
        pacer.WaitMillis({.changed = dirty}, state.view.refresh_seconds, Steady::now());
    if (::poll(fds, 2, timeout) < 0 && errno != EINTR) break;
    bool input = false;
    while (std::optional<Input> in = canvas.ReadInput()) {
      if (back != nullptr && in->key == Key::kEscape && !state.view.help &&
          !state.view.procs.shown) {
        *back = true;
        return 0;
      }
      quit |= !Perform(Apply(Translate(*in, KeysFor(state)), state), canvas);
      input = true;
    }
    while (std::optional<client::Event> e = c.Next(std::chrono::milliseconds(0))) {
      dirty |= Record(*e, recording, state.live);
      dirty |= Absorb(*e, standalone, endpoint, state.live);
    }
    dirty |= notice_bar.Update(state.live, state.view, Steady::now());
    dirty |= ShowRetry(c, state.live);
    if (pacer.ShouldDraw({.input = input, .changed = dirty}, state.view.refresh_seconds,
                         Steady::now())) {
      Draw(state, canvas);
      pacer.Drew(Steady::now());
      dirty = false;
    }
  }
  canvas.Stop();
  // Said once the terminal is back: the screen itself says "embedded simulator".
  if (!state.live.info.empty()) std::cerr << "neuron-top: " << state.live.info << "\n";
  return 0;
}

ClusterViewState StartClusterView(const AppOptions& o) {
  ClusterViewState state;
  state.version = NEURONMON_VERSION;
  state.utf8 = !o.ascii && LocaleIsUtf8();
  state.refresh_seconds = o.delay_seconds;
  return state;
}

// The cluster table as last drawn: the follower's rows, compared, in display order. It is copied
// and compared only when a frame is drawn or a host opened: following hundreds of hosts costs
// nothing between frames.
struct ClusterTable {
  std::vector<client::ClusterHost> rows;
  client::ClusterAnalysis analysis;
  std::vector<std::size_t> order;

  void Refresh(client::ClusterFollower& f, ClusterSort sort) {
    rows = f.Rows();
    analysis = client::AnalyzeCluster(rows);
    order = ClusterOrder(rows, analysis, sort);
  }
};

// Waits until every host has reported (or `wait` passed), then prints one cluster frame.
int RunClusterOnce(const AppOptions& o, client::ClusterFollower& follower) {
  const auto deadline = Steady::now() + std::chrono::seconds(10);
  while (Steady::now() < deadline) {
    const std::vector<client::ClusterHost> rows = follower.Rows();
    const bool all = std::all_of(rows.begin(), rows.end(), [](const client::ClusterHost& h) {
      return h.state == client::HostState::kDown ||
             (h.has_summary && h.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED);
    });
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ClusterTable table;
  table.Refresh(follower, ClusterSort::kName);
  ClusterViewState state = StartClusterView(o);
  const int height = o.once_height > 0
                         ? o.once_height
                         : static_cast<int>(6 + table.rows.size() + table.analysis.jobs.size() + 1);
  TextCanvas canvas(o.once_width, height);
  state.selected = table.rows.size();  // nothing selected
  RenderCluster(table.rows, table.analysis, table.order, state, canvas);
  std::string text = canvas.Text();
  if (!state.utf8) text = FoldToAscii(text);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

// Shows the host at display position `selected` in its own view until the user comes back (true)
// or quits (false). A host that cannot be reached sets `problem` instead.
bool OpenHost(const AppOptions& o, client::ClusterFollower& f, const ClusterTable& table,
              std::size_t selected, NcursesCanvas& canvas, std::string& problem) {
  AppOptions host = o;
  host.endpoint = f.TargetOf(table.order[selected]).endpoint;
  host.token = f.TargetOf(table.order[selected]).token;
  Result<std::unique_ptr<client::Client>> c = Connect(host);
  if (!c.ok()) {
    problem = table.rows[table.order[selected]].name + ": " + c.status().message();
    return true;
  }
  bool back = false;
  RunInteractive(host, **c, canvas, &back);
  if (!back) return false;
  canvas.Invalidate();
  return true;
}

// What the keys typed since the last look asked of the cluster view.
struct ClusterKeys {
  bool any = false;
  bool quit = false;
  bool open = false;  // the selected host's own view
};

// Applies the keys typed since the last look to `state` (a table of `hosts` rows).
ClusterKeys ReadClusterKeys(std::size_t hosts, ClusterViewState& state, NcursesCanvas& canvas) {
  ClusterKeys keys;
  while (std::optional<Input> in = canvas.ReadInput()) {
    const int page = std::max(1, canvas.height() - 5);
    const ClusterCommand command = ApplyClusterKey(*in, hosts, page, state);
    keys.any = true;
    keys.open |= command.open;
    keys.quit |= !Perform(command.effect, canvas);
  }
  return keys;
}

void DrawCluster(const ClusterTable& table, ClusterViewState& state, const std::string& problem,
                 NcursesCanvas& canvas) {
  RenderCluster(table.rows, table.analysis, table.order, state, canvas);
  if (!problem.empty()) {
    canvas.Put(0, canvas.height() - 1, SanitizeForTerminal(problem), Role::kBanner);
  }
  canvas.Present();
}

// The cluster view until the user quits.
int ShowCluster(const AppOptions& o, client::ClusterFollower& f) {
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGHUP, OnSignal);
  ClusterViewState state = StartClusterView(o);
  NcursesCanvas canvas({o.color, true});
  std::string problem;  // why a host could not be opened, shown until the next key
  ClusterTable table;
  const std::size_t hosts = o.hosts.size();  // every host has a row, reporting or not
  // The table changes by itself: a frame every refresh interval, and at once after a key.
  FramePacer pacer(std::chrono::seconds(1));
  bool dirty = true;
  while (!g_stop) {
    pollfd fds[1] = {{STDIN_FILENO, POLLIN, 0}};
    const int timeout =
        pacer.WaitMillis({.input = dirty, .periodic = true}, state.refresh_seconds, Steady::now());
    if (::poll(fds, 1, timeout) < 0 && errno != EINTR) break;
    const ClusterKeys keys = ReadClusterKeys(hosts, state, canvas);
    if (keys.any) {
      problem.clear();
      dirty = true;
    }
    if (keys.quit) break;
    if (keys.open) table.Refresh(f, state.sort);
    if (keys.open && state.selected < table.order.size()) {
      if (!OpenHost(o, f, table, state.selected, canvas, problem)) return 0;  // quit from there
      dirty = true;
    }
    if (pacer.ShouldDraw({.input = dirty, .periodic = true}, state.refresh_seconds,
                         Steady::now())) {
      table.Refresh(f, state.sort);
      DrawCluster(table, state, problem, canvas);
      pacer.Drew(Steady::now());
      dirty = false;
    }
  }
  canvas.Stop();
  return 0;
}

int RunCluster(const AppOptions& o) {
  client::ClusterFollowerOptions fo;
  fo.hosts = o.hosts;
  fo.period_seconds = o.delay_seconds;
  fo.client_name = std::string("neuron-top-cluster/") + NEURONMON_VERSION;
  Result<std::unique_ptr<client::ClusterFollower>> follower =
      client::ClusterFollower::Start(std::move(fo));
  if (!follower.ok()) {
    std::cerr << "neuron-top: " << SanitizeForTerminal(follower.status().message()) << "\n";
    return 1;
  }
  return o.once ? RunClusterOnce(o, **follower) : ShowCluster(o, **follower);
}

void ShowNotices(ReplayPlayer& player, Model& live) {
  for (const std::string& n : player.TakeNotices()) live.last_notice = n;
}

// --once on a recording: the frame as it was shown one refresh after --from (the first report
// carries every group).
int ReplayOnce(const AppOptions& o, TopState& state, ReplayPlayer& player) {
  player.Step(state.live, 1, Steady::now());
  player.TogglePause(Steady::now());  // the frame is not a paused replay
  state.view.replay = player.StatusText();
  ShowNotices(player, state.live);
  TextCanvas canvas(o.once_width, o.once_height > 0 ? o.once_height : 400);
  Render(state.live, state.view, canvas);
  const std::string text = TrimOnceFrame(canvas.Text(), o.once_height);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

// Plays the recording on the screen until the user quits.
int PlayReplay(const AppOptions& o, TopState& state, ReplayPlayer& player) {
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGHUP, OnSignal);
  NcursesCanvas canvas({o.color, true});
  ReplayPrompt prompt;
  // The player moves on after each wait, so the loop wakes every 50 ms whatever is due.
  FramePacer pacer(std::chrono::milliseconds(50));
  bool quit = false;
  NoticeBar notice_bar;
  while (!quit && !g_stop) {
    pollfd fds[1] = {{STDIN_FILENO, POLLIN, 0}};
    const int timeout = pacer.WaitMillis({}, state.view.refresh_seconds, Steady::now());
    if (::poll(fds, 1, timeout) < 0 && errno != EINTR) break;
    bool input = false;
    const Steady::time_point now = Steady::now();
    while (std::optional<Input> in = canvas.ReadInput()) {
      input = true;
      if (QuitsReplay(*in, state, prompt)) {
        quit = true;
        break;
      }
      quit |= !Perform(ApplyReplayInput(*in, state, player, prompt, now), canvas);
    }
    state.view.paused = false;  // pausing a replay stops its clock; the screen shows what it plays
    const bool played = player.Advance(state.live, now);
    ShowNotices(player, state.live);
    input |= notice_bar.Update(state.live, state.view, now);
    state.view.replay = ReplayStatus(player, prompt);
    // A paused replay redraws only for keys and for the samples stepped to.
    if (pacer.ShouldDraw({.input = input, .changed = played, .periodic = !player.paused()},
                         state.view.refresh_seconds, now)) {
      Draw(state, canvas);
      pacer.Drew(now);
    }
  }
  canvas.Stop();
  return 0;
}

int RunReplay(const AppOptions& o) {
  if (!o.open_replay) return std::cerr << "neuron-top: cannot replay recordings\n", 1;
  Result<std::unique_ptr<client::ReplaySource>> source = o.open_replay(*o.replay);
  if (!source.ok()) {
    std::cerr << "neuron-top: " << SanitizeForTerminal(source.status().message()) << "\n";
    return 1;
  }
  TopState state;
  state.view = StartView(o);
  state.view.refresh_seconds = o.delay_seconds;
  state.signals.refusal = "a recording is replayed: its pids are not running processes";
  Result<std::unique_ptr<ReplayPlayer>> started = ReplayPlayer::Start(
      std::move(*source), o.delay_seconds, o.replay_speed, state.live, Steady::now());
  if (!started.ok()) {
    std::cerr << "neuron-top: " << SanitizeForTerminal(started.status().message()) << "\n";
    return 1;
  }
  return o.once ? ReplayOnce(o, state, **started) : PlayReplay(o, state, **started);
}

}  // namespace

int RunTop(const AppOptions& o) {
  if (o.replay) return RunReplay(o);
  for (const std::string& notice : o.notices)
    std::cerr << "neuron-top: " << SanitizeForTerminal(notice) << "\n";
  if (!o.hosts.empty()) return RunCluster(o);
  Result<std::unique_ptr<client::Client>> c = Connect(o);
  if (!c.ok()) {
    std::cerr << "neuron-top: " << SanitizeForTerminal(c.status().message()) << "\n";
    return 1;
  }
  // The fallback notice (no daemon socket: running the simulator in-process) goes to stderr first.
  if (o.once) return RunOnce(o, **c);
  std::unique_ptr<client::RecordingFile> recording;
  if (!o.record.empty()) {
    auto prepared = client::RecordingFile::Prepare(o.record, "neuron-top --record");
    if (!prepared.ok()) {
      std::cerr << "neuron-top: " << SanitizeForTerminal(prepared.status().message()) << "\n";
      return 1;
    }
    recording = std::move(*prepared);
  }
  NcursesCanvas canvas({o.color, true});
  const int status = RunInteractive(o, **c, canvas, nullptr, recording.get());
  if (recording != nullptr) {
    (void)recording->Close();
    std::cerr << "neuron-top: recorded " << recording->snapshots() << " snapshots to "
              << SanitizeForTerminal(recording->path()) << "\n";
  }
  return status;
}

}  // namespace neuronmon::tui
