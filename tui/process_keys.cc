#include "tui/process_keys.h"

#include <algorithm>
#include <string>
#include <vector>

namespace neuronmon::tui {
namespace {

// What neuron-top says on the key-help row (NoticeBar): the same text twice shows twice.
void Notify(TopState& state, std::string text) {
  state.live.last_notice = std::move(text);
  ++state.live.notice_count;
}

void Move(Action action, const Model& shown, int page, ProcessesView& p) {
  const std::vector<std::uint32_t> listed = ListedPids(shown, p);
  if (listed.empty()) return;
  const auto at = std::find(listed.begin(), listed.end(), SelectedPid(listed, p));
  const int i = static_cast<int>(at - listed.begin());
  const int last = static_cast<int>(listed.size()) - 1;
  int to = i;
  switch (action) {
    case Action::kUp:
      to = i - 1;
      break;
    case Action::kDown:
      to = i + 1;
      break;
    case Action::kPageUp:
      to = i - page;
      break;
    case Action::kPageDown:
      to = i + page;
      break;
    case Action::kHome:
      to = 0;
      break;
    default:  // kEnd
      to = last;
      break;
  }
  p.selected = listed[static_cast<std::size_t>(std::clamp(to, 0, last))];
}

// `k`: the confirmation for the selected process, or why there is none.
void AskToSignal(TopState& state) {
  ProcessesView& p = state.view.procs;
  const Model& shown = ShownModel(state);
  const std::uint32_t pid = SelectedPid(ListedPids(shown, p), p);
  if (pid == 0) return Notify(state, "no process selected");
  // Refused before asking: the pids shown are not processes neuron-top may signal.
  const std::string refusal = SignalRefusal(state.live, state.signals, pid);
  if (!refusal.empty()) return Notify(state, refusal);
  for (const ProcessRow& r : BuildProcessRows(shown)) {
    if (r.pid == pid) p.confirm_command = r.command;
  }
  p.selected = pid;
  p.confirm_pid = pid;
  p.confirm_signal = SignalChoices().front().number;
}

void Confirm(TopState& state) {
  ProcessesView& p = state.view.procs;
  const std::uint32_t pid = *p.confirm_pid;
  p.confirm_pid.reset();
  // The live model, not a paused copy: a process that has left since is not signalled (its pid
  // may be another process's by now).
  if (state.live.runtime(pid) == nullptr) {
    return Notify(state,
                  "not sent: pid " + std::to_string(pid) + " is no longer a Neuron application");
  }
  Notify(state, SendSignal(state.live, state.signals, pid, p.confirm_signal, p.confirm_command));
}

void ConfirmKey(Key key, TopState& state) {
  ProcessesView& p = state.view.procs;
  const auto c = static_cast<std::int32_t>(key);
  if (key == Key::kEnter || c == '\n' || c == '\r' || c == 'y' || c == 'Y') return Confirm(state);
  if (key == Key::kEscape || c == 'n' || c == 'N') {
    p.confirm_pid.reset();
    return Notify(state, "no signal sent");
  }
  for (const SignalChoice& s : SignalChoices()) {
    if (c == s.key) p.confirm_signal = s.number;
  }
}

void FilterKey(Key key, ProcessesView& p) {
  const auto c = static_cast<std::int32_t>(key);
  if (key == Key::kEnter || c == '\n' || c == '\r') {
    p.filtering = false;
  } else if (key == Key::kEscape) {
    p.filtering = false;
    p.filter.clear();
  } else if (key == Key::kBackspace || c == 127 || c == 8) {
    if (!p.filter.empty()) p.filter.pop_back();
  } else if (c >= 0x20 && c < 0x7f && p.filter.size() < kMaxFilterLength) {
    p.filter.push_back(static_cast<char>(c));  // printable ASCII only: safe on the terminal
  }
}

void PickerKey(Key key, ProcessesView& p) {
  const auto c = static_cast<std::int32_t>(key);
  const int at = static_cast<int>(p.pick);
  if (key == Key::kUp || c == 'k') {
    p.pick = static_cast<ProcessColumn>((at + kProcessColumns - 1) % kProcessColumns);
  } else if (key == Key::kDown || c == 'j') {
    p.pick = static_cast<ProcessColumn>((at + 1) % kProcessColumns);
  } else if (key == Key::kEnter || c == '\n' || c == '\r') {
    p.sort = p.pick;
    p.picking = false;
  } else if (key == Key::kEscape || key == Key::kF6 || c == 's') {
    p.picking = false;
  }
}

void PromptKey(Key key, TopState& state) {
  ProcessesView& p = state.view.procs;
  if (p.confirm_pid) return ConfirmKey(key, state);
  if (p.filtering) return FilterKey(key, p);
  if (p.picking) return PickerKey(key, p);
}

// Enter: the main view, on the selected process's tab.
void OpenTab(TopState& state) {
  ProcessesView& p = state.view.procs;
  const Model& shown = ShownModel(state);
  const std::uint32_t pid = SelectedPid(ListedPids(shown, p), p);
  const std::vector<RuntimeView>& runtimes = shown.runtimes();
  for (std::size_t i = 0; i < runtimes.size(); ++i) {
    if (runtimes[i].report.pid() == pid) state.view.tab = static_cast<int>(i) + 1;
  }
  state.view.tree_cursor = 0;
  p.shown = false;
}

void Click(const Command& command, TopState& state) {
  for (const Hit& h : state.frame.hits) {
    if (h.kind == Hit::Kind::kProcess && command.y == h.y && command.x >= h.x0 && command.x < h.x1)
      state.view.procs.selected = static_cast<std::uint32_t>(h.index);
  }
}

}  // namespace

bool ApplyProcessCommand(const Command& command, TopState& state) {
  ProcessesView& p = state.view.procs;
  if (command.action == Action::kProcesses) {
    p.shown = !p.shown;
    p.filtering = p.picking = false;
    p.confirm_pid.reset();
    return true;
  }
  if (!p.shown) return false;
  switch (command.action) {
    case Action::kPromptKey:
      PromptKey(command.key, state);
      return true;
    case Action::kUp:
    case Action::kDown:
    case Action::kPageUp:
    case Action::kPageDown:
    case Action::kHome:
    case Action::kEnd:
      Move(command.action, ShownModel(state), state.frame.process_page, p);
      return true;
    case Action::kToggleItem:
      OpenTab(state);
      return true;
    case Action::kClick:
      Click(command, state);
      return true;
    case Action::kSortMenu:
      p.picking = true;
      p.pick = p.sort;
      return true;
    case Action::kReverseSort:
      p.descending = !p.descending;
      return true;
    case Action::kFilter:
      p.filtering = true;
      return true;
    case Action::kTreeByJob:
      p.tree = !p.tree;
      return true;
    case Action::kSignal:
      AskToSignal(state);
      return true;
    case Action::kBack:
      if (p.filter.empty()) p.shown = false;
      p.filter.clear();
      return true;
    default:
      return false;
  }
}

}  // namespace neuronmon::tui
