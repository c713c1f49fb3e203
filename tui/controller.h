// Controller: what neuron-top does with a key, a client event, or a --once frame, apart from the
// terminal and the connection. TopState (tui/top_state.h) is everything the screen is drawn from;
// Apply() changes it for one Command and returns what only the loop can do (quit, repaint,
// resize); Absorb() merges one client event into a Model; TrimOnceFrame() turns a rendered frame
// into --once's output.
// Pure: no I/O, no clocks. Not thread-safe; the UI thread owns the state.
#pragma once

#include <chrono>
#include <string>

#include "client/client.h"
#include "tui/keymap.h"
#include "tui/model.h"
#include "tui/process_signal.h"
#include "tui/top_state.h"
#include "tui/view.h"

namespace neuronmon::tui {

// What keys mean on the screen `state` shows (help, Processes view, an open prompt).
KeyContext KeysFor(const TopState& state);

// How the Processes view may signal the pids a client connected to `endpoint` shows: with kill(2)
// when the daemon is on this host (its unix socket, or in-process), refused over TCP.
SignalTarget SignalTargetFor(const client::Endpoint& endpoint);

// What the loop must do after a command, beyond redrawing from the state.
enum class Effect {
  kNone,
  kQuit,
  kRepaint,  // redraw every cell: the terminal's contents are not what we drew
  kResize,   // the terminal changed size
};

// Applies `command` to `state`. Tree navigation stays on the visible rows of the shown model
// (pages are state.frame.tree_page rows); tabs wrap, and a tab number past the last is ignored;
// clicks act on state.frame.hits; the refresh interval halves and doubles within 0.1..60 s.
// In the Processes view (tui/process_keys.h) the arrows select a process, Enter opens its tab, and
// `k` signals it through state.signals after a confirmation; what happened, or why nothing was
// sent, goes to state.live's notice.
Effect Apply(const Command& command, TopState& state);

// Merges one client event into `model`: a connection (the Welcome and `endpoint`; embedded when
// `standalone`, else live), a report, a lost connection (reconnecting), a notice (a shutdown
// notice means stopped) or the client's info line. Daemon and client text is sanitized for the
// terminal. Returns whether the screen changes (false for info, gaps and errors).
bool Absorb(const client::Event& event, bool standalone, const std::string& endpoint, Model& model);

// The latest notice (model.last_notice) on the key-help row for a while: an incident's ("incident
// saved: ...", or a replayed bundle's "incident: ...") for a minute, any other for 10 s.
class NoticeBar {
 public:
  using Time = std::chrono::steady_clock::time_point;
  // Sets or clears view.notice; returns whether it changed.
  bool Update(const Model& model, ViewState& view, Time now);

 private:
  std::string seen_;
  std::uint64_t seen_count_ = 0;
  Time until_{};
};

// --once's output from `text`, a TextCanvas::Text() of a frame whose last two rows are the tab bar
// and the key help. With `height` <= 0 the frame was rendered taller than needed: the blank rows
// between the body and the tab bar are dropped, and the tab bar is kept but not the key help. With
// an explicit `height` of 4 rows or more, the frame keeps its height and its last row is blanked.
std::string TrimOnceFrame(std::string text, int height);

}  // namespace neuronmon::tui
