#include "tui/controller.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "proto/common/terminal_text.h"
#include "tui/process_keys.h"

namespace neuronmon::tui {
namespace {

// Expands or collapses visible tree row `index`, when there is one and it has children.
void ToggleRow(const Model& shown, ViewState& v, int index) {
  const std::vector<TreeRow> rows = BuildTree(shown, v);
  if (index < 0 || index >= static_cast<int>(rows.size())) return;
  const TreeRow& row = rows[static_cast<std::size_t>(index)];
  if (!row.expandable) return;
  if (!v.expanded.erase(row.id)) v.expanded.insert(row.id);
}

// Expands every node unless all are open already, then collapses them all.
void ToggleTree(const Model& shown, ViewState& v) {
  const std::vector<std::string> all = AllTreeNodes(shown, v);
  const bool any_closed = std::any_of(all.begin(), all.end(),
                                      [&](const std::string& id) { return !v.expanded.count(id); });
  v.expanded.clear();
  if (any_closed) v.expanded.insert(all.begin(), all.end());
  v.tree_cursor = 0;
}

void MoveCursor(Action action, const Model& shown, int page, ViewState& v) {
  const int last = std::max(0, static_cast<int>(BuildTree(shown, v).size()) - 1);
  switch (action) {
    case Action::kUp:
      v.tree_cursor = std::max(0, v.tree_cursor - 1);
      break;
    case Action::kDown:
      v.tree_cursor = std::min(last, v.tree_cursor + 1);
      break;
    case Action::kPageUp:
      v.tree_cursor = std::max(0, v.tree_cursor - page);
      break;
    default:  // kPageDown
      v.tree_cursor = std::min(last, v.tree_cursor + page);
      break;
  }
}

void ChangeTab(const Command& command, int tabs, ViewState& v) {
  if (command.action == Action::kPrevTab) {
    v.tab = (v.tab + tabs - 1) % tabs;
  } else if (command.action == Action::kNextTab) {
    v.tab = (v.tab + 1) % tabs;
  } else if (command.tab <= tabs) {  // kSelectTab, 1-based
    v.tab = command.tab - 1;
  }
  v.tree_cursor = 0;
}

void Click(const Command& command, const Frame& frame, const Model& shown, ViewState& v) {
  for (const Hit& h : frame.hits) {
    if (command.y != h.y || command.x < h.x0 || command.x >= h.x1) continue;
    if (h.kind == Hit::Kind::kProcess) continue;  // the Processes view's (process_keys.cc)
    if (h.kind == Hit::Kind::kTab) {
      v.tab = h.index - 1;
      v.tree_cursor = 0;
    } else {
      v.tree_cursor = h.index;
      ToggleRow(shown, v, h.index);
    }
  }
}

// The rows of `text` (each ends in '\n'; a last row without one is dropped).
std::vector<std::string> Rows(const std::string& text) {
  std::vector<std::string> rows;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    rows.push_back(text.substr(start, nl - start));
  }
  return rows;
}

std::string TrimToContent(const std::string& text) {
  const std::vector<std::string> lines = Rows(text);
  std::size_t last_body = 0;
  for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
    if (!lines[i].empty()) last_body = i;
  }
  std::string out;
  for (std::size_t i = 0; i <= last_body && i < lines.size(); ++i) out += lines[i] + "\n";
  // The tab bar, but not the key help: nobody presses keys in a printed frame.
  if (lines.size() >= 2) out += lines[lines.size() - 2] + "\n";
  return out;
}

// Moves through the tree and the tabs of `shown`, or acts on a click; false for other commands.
bool Navigate(const Command& command, const Model& shown, TopState& state) {
  ViewState& v = state.view;
  switch (command.action) {
    case Action::kUp:
    case Action::kDown:
    case Action::kPageUp:
    case Action::kPageDown:
      MoveCursor(command.action, shown, state.frame.tree_page, v);
      return true;
    case Action::kToggleItem:
      ToggleRow(shown, v, v.tree_cursor);
      return true;
    case Action::kToggleTree:
      ToggleTree(shown, v);
      return true;
    case Action::kPrevTab:
    case Action::kNextTab:
    case Action::kSelectTab:
      ChangeTab(command, TabCount(shown), v);
      return true;
    case Action::kClick:
      Click(command, state.frame, shown, v);
      return true;
    case Action::kHome:
      v.tree_cursor = 0;
      return true;
    case Action::kEnd:
      v.tree_cursor = std::max(0, static_cast<int>(BuildTree(shown, v).size()) - 1);
      return true;
    default:
      return false;
  }
}

// Changes how the screen shows what it shows: figures, help, refresh interval, pause, graphs.
void ChangeView(const Command& command, TopState& state) {
  ViewState& v = state.view;
  switch (command.action) {
    case Action::kToggleFlops:
      v.flops = !v.flops;
      break;
    case Action::kHelp:
      v.help = true;
      break;
    case Action::kEvents:
      v.events = true;
      break;
    case Action::kCloseOverlay:
      v.help = v.events = false;
      break;
    case Action::kFaster:
      v.refresh_seconds = std::max(0.1, v.refresh_seconds / 2);
      break;
    case Action::kSlower:
      v.refresh_seconds = std::min(60.0, v.refresh_seconds * 2);
      break;
    case Action::kPause:
      v.paused = !v.paused;
      if (v.paused) state.frozen = state.live;
      break;
    case Action::kNextGraph:
      v.graph = static_cast<GraphView>((static_cast<int>(v.graph) + 1) % kGraphViews);
      break;
    case Action::kNextGlyphs:
      v.glyphs = NextGraphStyle(v.glyphs, v.utf8);
      break;
    default:  // kNone, and the Processes view's keys outside it
      break;
  }
}

}  // namespace

SignalTarget SignalTargetFor(const client::Endpoint& endpoint) {
  SignalTarget target;
  if (endpoint.kind == client::Endpoint::Kind::kTcp) {
    target.refusal =
        "neuron-top is connected over TCP (--connect): the pids shown may be another host's";
    return target;
  }
  target.sender = PidfdSender();
  return target;
}

KeyContext KeysFor(const TopState& state) {
  const ProcessesView& p = state.view.procs;
  KeyContext k;
  k.help_open = state.view.help || state.view.events;
  k.processes = p.shown;
  k.prompt = p.shown && (p.filtering || p.picking || p.confirm_pid.has_value());
  return k;
}

Effect Apply(const Command& command, TopState& state) {
  const Model& shown = ShownModel(state);
  if (ApplyProcessCommand(command, state)) return Effect::kNone;
  switch (command.action) {
    case Action::kQuit:
      return Effect::kQuit;
    case Action::kRepaint:
      return Effect::kRepaint;
    case Action::kResize:
      return Effect::kResize;
    default:
      break;
  }
  if (!Navigate(command, shown, state)) ChangeView(command, state);
  return Effect::kNone;
}

bool Absorb(const client::Event& event, bool standalone, const std::string& endpoint,
            Model& model) {
  switch (event.kind) {
    case client::Event::Kind::kConnected:
      model.SetWelcome(event.welcome);
      model.connection = standalone ? ConnectionState::kEmbedded : ConnectionState::kLive;
      model.endpoint = endpoint;
      return true;
    case client::Event::Kind::kReport:
      model.Apply(event.report);
      return true;
    case client::Event::Kind::kEvent:
      model.AddEvent(event.event);
      return true;
    case client::Event::Kind::kDisconnected:
      model.connection = ConnectionState::kReconnecting;
      model.last_notice = SanitizeForTerminal(event.text);
      return true;
    case client::Event::Kind::kNotice:
      if (event.notice.kind() == v1::NOTICE_KIND_SHUTDOWN) {
        model.connection = ConnectionState::kStopped;
      }
      // A subscription's confirmation is progress, not news for the screen.
      if (event.notice.kind() == v1::NOTICE_KIND_SUBSCRIBED) return false;
      model.last_notice = SanitizeForTerminal(event.notice.text());
      return true;
    case client::Event::Kind::kInfo:
      model.info = SanitizeForTerminal(event.text);
      return false;
    default:
      return false;
  }
}

bool NoticeBar::Update(const Model& model, ViewState& view, Time now) {
  if (model.last_notice != seen_ || model.notice_count != seen_count_) {
    seen_ = model.last_notice;
    seen_count_ = model.notice_count;
    view.notice = seen_;
    until_ =
        now + (seen_.starts_with("incident") ? std::chrono::seconds(60) : std::chrono::seconds(10));
    return true;
  }
  if (view.notice.empty() || now < until_) return false;
  view.notice.clear();
  return true;
}

std::string TrimOnceFrame(std::string text, int height) {
  if (height <= 0) return TrimToContent(text);
  if (height >= 4) {
    // The last row is the key help; blank it (the frame keeps its height).
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    text += "\n";
  }
  return text;
}

}  // namespace neuronmon::tui
