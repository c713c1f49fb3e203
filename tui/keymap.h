// Keymap: terminal input to neuron-top actions — AWS neuron-top's keys (q, arrows, Enter, x, a/d,
// 1-9, f) plus ours (h/?/F1 help, +/- refresh interval, Space pause, g/G graphs, Ctrl-L repaint,
// mouse clicks). Keys arrive as terminal-independent codes; ncurses_canvas.cc translates. Pure.
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
  kFaster,       // -: shorter refresh interval
  kSlower,       // +
  kPause,        // Space
  kNextGraph,    // g: which history graph
  kNextGlyphs,   // G: braille, blocks, ascii
  kRepaint,      // Ctrl-L
  kClick,        // mouse
  kResize,
  kCloseOverlay,  // Escape or any key while help is shown
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
};

// `help_open`: while the help overlay shows, every key but the quit keys closes it.
Command Translate(const Input& input, bool help_open);

// Lines for the help overlay: every key and what it does.
std::vector<std::string> HelpLines();

}  // namespace neuronmon::tui
