// NcursesCanvas: the terminal. The view draws into an in-memory frame; Present() compares it with
// the previous frame and hands ncurses only the cells that changed, then calls doupdate() once —
// so an idle screen writes nothing. Colours come from the roles, with a monochrome fallback
// (bold/reverse/dim) when colour is off (--no-color, NO_COLOR) or the terminal has none. This is
// the only file that includes ncurses. Not thread-safe; the UI thread owns the terminal.
#pragma once

#include <memory>
#include <optional>

#include "tui/canvas.h"
#include "tui/keymap.h"

namespace neuronmon::tui {

struct TerminalOptions {
  bool color = true;
  bool mouse = true;
};

class NcursesCanvas final : public Canvas {
 public:
  // Takes over the terminal (initscr, raw mode, keypad, mouse). Stop() or the destructor gives it
  // back exactly as it was.
  explicit NcursesCanvas(const TerminalOptions& options);
  ~NcursesCanvas() override;
  void Stop();

  int width() const override;
  int height() const override;
  void Clear() override;
  void Put(int x, int y, std::string_view text, Role role) override;
  void Paint(int x, int y, int count, Role role) override;

  // Writes the changed cells and updates the terminal once.
  void Present();
  // Forgets the previous frame so the next Present() redraws every cell (Ctrl-L).
  void Invalidate();
  // Re-reads the terminal size after a resize.
  void Resize();
  // One key, or nullopt when none is waiting.
  std::optional<Input> ReadInput();

  bool utf8() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether the locale's character set is UTF-8 (after setlocale(LC_ALL, "")).
bool LocaleIsUtf8();

}  // namespace neuronmon::tui
