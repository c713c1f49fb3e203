// Keymap: terminal input to neuron-top actions — AWS neuron-top's keys (q, arrows, Enter, x, a/d,
// 1-9, f) plus ours (h/?/F1 help, e the recent events, +/- refresh interval, Space pause, g/G
// graphs, Ctrl-L repaint, mouse clicks, p the Processes view and its keys). Keys arrive as
// terminal-independent codes; ncurses_canvas.cc translates. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace neuronmon::tui {

enum class Key : std::int32_t {
  kNone = 0,
  kUp = 0x110000,  // above every Unicode code point; plain characters are their own code
  kDown,
  kLeft,
  kRight,
  kPageUp,
  kPageDown,
  kHome,
  kEnd,
  kEnter,
  kF1,
  kResize,
  kMouseClick,  // with a position
  kCtrlC,
  kCtrlL,
  kEscape,
  kF5,
  kF6,
  kF9,
  kBackspace,
};

inline constexpr Key CharKey(char c) { return static_cast<Key>(static_cast<unsigned char>(c)); }

enum class Action {
  kNone,
  kQuit,
  kUp,
  kDown,
  kPageUp,
  kPageDown,
  kToggleItem,   // Enter: expand/collapse the selected tree item
  kToggleTree,   // x: expand/collapse the whole tree
  kPrevTab,      // a
  kNextTab,      // d
  kSelectTab,    // 1-9 (the argument is the tab number)
  kToggleFlops,  // f
  kHelp,         // h, ?, F1
  kEvents,       // e (E in the Processes view): the recent-event list
  kFaster,       // -: shorter refresh interval
  kSlower,       // +
  kPause,        // Space
  kNextGraph,    // g: which history graph
  kNextGlyphs,   // G: braille, blocks, ascii
  kRepaint,      // Ctrl-L
  kClick,        // mouse
  kResize,
  kCloseOverlay,  // Escape or any key while help is shown
  kHome,          // Home: the first row
  kEnd,           // End: the last row
  // The Processes view.
  kProcesses,    // p: show / leave it
  kSortMenu,     // s, F6: pick the sort column
  kReverseSort,  // r
  kFilter,       // /: type a filter
  kTreeByJob,    // e, F5: group the processes by job
  kSignal,       // k, F9: signal the selected process (after a confirmation)
  kBack,         // Escape: clear the filter, else leave the view
  kPromptKey,    // any key while a prompt, the sort picker or a confirmation is open: `key`
};

struct Input {
  Key key = Key::kNone;
  int x = 0;  // for mouse clicks
  int y = 0;
};

struct Command {
  Action action = Action::kNone;
  int tab = 0;  // kSelectTab: 1-based
  int x = 0;    // kClick
  int y = 0;
  Key key = Key::kNone;  // kPromptKey
};

// What the screen shows, as far as keys go.
struct KeyContext {
  // The help or the event list is open: every key but the quit keys closes it.
  bool help_open = false;
  bool processes = false;  // the Processes view: k signals, s sorts, / filters, e groups
  // A prompt (filter), the sort picker or a signal confirmation is open: every key but Ctrl-C,
  // Ctrl-L and a resize is the prompt's (q types a q).
  bool prompt = false;
};

Command Translate(const Input& input, const KeyContext& context);
// The main view's keys: Translate(input, {help_open}).
Command Translate(const Input& input, bool help_open);

// Lines for the help overlay: every key and what it does.
std::vector<std::string> HelpLines();

}  // namespace neuronmon::tui
