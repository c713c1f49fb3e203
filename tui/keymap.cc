#include "tui/keymap.h"

namespace neuronmon::tui {

namespace {

// The Processes view's own keys; kNone for the keys it shares with the main view.
Action ProcessesKey(Key k) {
  switch (k) {
    case Key::kF5:
      return Action::kTreeByJob;
    case Key::kF6:
      return Action::kSortMenu;
    case Key::kF9:
      return Action::kSignal;
    case Key::kEscape:
      return Action::kBack;
    default:
      break;
  }
  switch (static_cast<std::int32_t>(k)) {
    case 'k':
      return Action::kSignal;
    case 's':
      return Action::kSortMenu;
    case 'r':
      return Action::kReverseSort;
    case '/':
      return Action::kFilter;
    case 'e':
      return Action::kTreeByJob;
    default:
      return Action::kNone;
  }
}

// The main view's keys that are no character: arrows, pages, Enter, F1, a click; kNone for
// the others.
Command SpecialKey(const Input& in) {
  switch (in.key) {
    case Key::kHome:
      return {Action::kHome};
    case Key::kEnd:
      return {Action::kEnd};
    case Key::kUp:
      return {Action::kUp};
    case Key::kDown:
      return {Action::kDown};
    case Key::kPageUp:
      return {Action::kPageUp};
    case Key::kPageDown:
      return {Action::kPageDown};
    case Key::kEnter:
      return {Action::kToggleItem};
    case Key::kLeft:
      return {Action::kPrevTab};
    case Key::kRight:
      return {Action::kNextTab};
    case Key::kF1:
      return {Action::kHelp};
    case Key::kMouseClick:
      return {Action::kClick, 0, in.x, in.y};
    default:
      return {};
  }
}

// The main view's character keys.
Command CharacterKey(Key k) {
  const auto c = static_cast<std::int32_t>(k);
  if (c >= '1' && c <= '9') return {Action::kSelectTab, c - '0'};
  switch (c) {
    case '\n':
    case '\r':
      return {Action::kToggleItem};
    case 'x':
    case 'X':
      return {Action::kToggleTree};
    case 'a':
    case 'A':
      return {Action::kPrevTab};
    case 'd':
    case 'D':
      return {Action::kNextTab};
    case 'f':
    case 'F':
      return {Action::kToggleFlops};
    case 'h':
    case '?':
      return {Action::kHelp};
    case 'e':
    case 'E':
      return {Action::kEvents};
    case '+':
    case '=':
      return {Action::kSlower};
    case '-':
    case '_':
      return {Action::kFaster};
    case ' ':
      return {Action::kPause};
    case 'g':
      return {Action::kNextGraph};
    case 'G':
      return {Action::kNextGlyphs};
    case 'k':
      return {Action::kUp};
    case 'j':
      return {Action::kDown};
    default:
      return {};
  }
}

}  // namespace

Command Translate(const Input& in, const KeyContext& context) {
  const Key k = in.key;
  if (k == Key::kCtrlC) return {Action::kQuit};
  if (k == Key::kResize) return {Action::kResize};
  if (k == Key::kCtrlL) return {Action::kRepaint};
  if (context.prompt && !context.help_open) {
    if (k == Key::kNone) return {};
    Command c;
    c.action = Action::kPromptKey;
    c.key = k;
    return c;
  }
  if (k == CharKey('q') || k == CharKey('Q')) return {Action::kQuit};
  if (context.help_open) return k == Key::kNone ? Command{} : Command{Action::kCloseOverlay};
  if (k == CharKey('p') || k == CharKey('P')) return {Action::kProcesses};
  if (context.processes) {
    if (const Action a = ProcessesKey(k); a != Action::kNone) return {a};
  }
  if (const Command c = SpecialKey(in); c.action != Action::kNone) return c;
  return CharacterKey(k);
}

Command Translate(const Input& in, bool help_open) {
  KeyContext context;
  context.help_open = help_open;
  return Translate(in, context);
}

std::vector<std::string> HelpLines() {
  return {
      "neuron-top keys",
      "",
      "  q, Ctrl-C       quit (the terminal is restored)",
      "  Up/Down, k/j    move the tree selection",
      "  PgUp/PgDn       move the selection a page",
      "  Enter           expand/collapse the selected tree item",
      "  x               expand/collapse the entire tree",
      "  a/d, Left/Right previous/next tab",
      "  1-9             select a tab",
      "  f               NeuronCore utilization % <-> TFLOPS",
      "  + / -           slower / faster refresh",
      "  Space           pause the view (data keeps arriving)",
      "  g               next history graph (utilization, HBM, collective p99)",
      "  G               next graph glyphs (braille, blocks, ASCII)",
      "  Ctrl-L          repaint the screen",
      "  mouse           click a tab, a tree row or a process",
      "  p               Processes view (again, or Esc, to leave)",
      "  e               the recent events (E in the Processes view); any key closes",
      "  h, ?, F1        this help; any key but q closes it",
      "",
      "Processes view (p)",
      "  Up/Down/j, PgUp/PgDn, Home/End   select a process",
      "  Enter           the process's tab in the main view",
      "  s, F6           pick the sort column (Enter sorts)   r   reverse it",
      "  /               filter: command, user, job/pod, pid (Esc clears it)",
      "  e, F5           group by job or pod, with totals",
      "  k, F9           signal it (this host's only), after a confirmation:",
      "                  t/i/h/k: TERM/INT/HUP/KILL; y/Enter sends, n/Esc does not",
      "  p, Esc          back to the main view",
      "",
      "replay (--replay)",
      "  Space           pause / resume          . / ,      one sample forward / back",
      "  [ / ]           10 s back / forward     { / }      1 min back / forward",
      "  < / >           half / twice the speed  Home/End   the recording's start / end",
      "  t               jump to a time (21:30, 2026-12-04T21:30:00Z, +10m), Enter to go",
      "",
      "colours",
      "  green  busy time, user CPU, HBM reads      red    system CPU, HBM writes",
      "  yellow warning findings                    magenta critical findings",
      "  grey   the idle part of a bar, secondary text",
      "  white on red (inverse without colour)  the selected row",
  };
}

}  // namespace neuronmon::tui
