#include "tui/ncurses_canvas.h"

#include <langinfo.h>
#include <ncurses.h>

#include <algorithm>
#include <clocale>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace neuronmon::tui {
namespace {

struct Look {
  short fg;
  short bg;
  attr_t mono;   // attributes without colour
  attr_t extra;  // attributes added in colour too
};

// AWS neuron-top's palette: blue title, cyan section bars, green figures and busy ticks, red system
// ticks, grey for the rest. Figures, graphs and busy ticks share one look, so that the terminal
// needs no attribute change between a bar and its figure; bold and dim are kept for the few places
// that need them, since turning either off costs a full attribute reset on most terminals.
Look LookOf(Role r) {
  switch (r) {
    case Role::kTitle:
      return {COLOR_WHITE, COLOR_BLUE, A_REVERSE | A_BOLD, A_BOLD};
    case Role::kSection:
      return {COLOR_BLACK, COLOR_CYAN, A_REVERSE, 0};
    case Role::kHeader:
      return {COLOR_CYAN, -1, A_BOLD, 0};
    case Role::kDim:
      return {COLOR_WHITE, -1, A_DIM, A_DIM};
    case Role::kValue:
      return {COLOR_GREEN, -1, A_NORMAL, 0};
    case Role::kBarUser:
      return {COLOR_GREEN, -1, A_BOLD, 0};
    case Role::kBarSystem:
      return {COLOR_RED, -1, A_NORMAL, 0};
    case Role::kBarFree:
      return {COLOR_WHITE, -1, A_DIM, A_DIM};
    case Role::kSelected:
      return {COLOR_WHITE, COLOR_RED, A_REVERSE, A_BOLD};
    case Role::kTabActive:
      return {COLOR_BLACK, COLOR_GREEN, A_REVERSE | A_BOLD, A_BOLD};
    case Role::kTab:
      return {COLOR_WHITE, -1, A_NORMAL, 0};
    case Role::kHelp:
      return {COLOR_BLACK, COLOR_WHITE, A_REVERSE, 0};
    case Role::kGood:
      return {COLOR_GREEN, -1, A_BOLD, A_BOLD};
    case Role::kWarning:
      return {COLOR_YELLOW, -1, A_BOLD, A_BOLD};
    case Role::kCritical:
      return {COLOR_MAGENTA, -1, A_BOLD | A_UNDERLINE, A_BOLD};
    case Role::kGraph:
      return {COLOR_GREEN, -1, A_NORMAL, 0};
    case Role::kBanner:
      return {COLOR_BLACK, COLOR_YELLOW, A_REVERSE | A_BOLD, A_BOLD};
    default:
      return {-1, -1, A_NORMAL, 0};
  }
}

// The key of a getch() code other than KEY_MOUSE: ncurses' named keys, the control keys neuron-top
// uses, and characters (kNone beyond Unicode).
Key KeyOf(int ch) {
  switch (ch) {
    case KEY_UP:
      return Key::kUp;
    case KEY_DOWN:
      return Key::kDown;
    case KEY_LEFT:
      return Key::kLeft;
    case KEY_RIGHT:
      return Key::kRight;
    case KEY_PPAGE:
      return Key::kPageUp;
    case KEY_NPAGE:
      return Key::kPageDown;
    case KEY_HOME:
      return Key::kHome;
    case KEY_END:
      return Key::kEnd;
    case KEY_ENTER:
    case '\n':
    case '\r':
      return Key::kEnter;
    case KEY_F(1):
      return Key::kF1;
    case KEY_F(5):
      return Key::kF5;
    case KEY_F(6):
      return Key::kF6;
    case KEY_F(9):
      return Key::kF9;
    case KEY_BACKSPACE:
    case 127:
    case 8:
      return Key::kBackspace;
    case KEY_RESIZE:
      return Key::kResize;
    case 3:
      return Key::kCtrlC;
    case 12:
      return Key::kCtrlL;
    case 27:
      return Key::kEscape;
    default:
      return ch >= 0 && ch < 0x110000 ? static_cast<Key>(ch) : Key::kNone;
  }
}

}  // namespace

bool LocaleIsUtf8() {
  const char* codeset = nl_langinfo(CODESET);
  return codeset != nullptr &&
         (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

struct NcursesCanvas::State {
  bool started = false;
  bool color = false;
  bool utf8 = false;
  int w = 0, h = 0;
  TextCanvas next{0, 0};
  TextCanvas prev{0, 0};
  bool full_redraw = true;
  attr_t attrs[static_cast<int>(Role::kCount)] = {};
};

NcursesCanvas::NcursesCanvas(const TerminalOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.utf8 = LocaleIsUtf8();
  initscr();
  s.started = true;
  raw();  // Ctrl-C arrives as a key, so quitting always restores the terminal
  noecho();
  keypad(stdscr, TRUE);
  nodelay(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  if (options.mouse) mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, nullptr);
  s.color = options.color && has_colors();
  if (s.color) {
    start_color();
    use_default_colors();
  }
  // Grey, where the terminal has it, instead of dim white: a colour change is cheaper to send.
  const bool grey = s.color && COLORS >= 16;
  std::vector<std::pair<short, short>> pairs;  // one colour pair per distinct (fg, bg)
  for (int r = 0; r < static_cast<int>(Role::kCount); ++r) {
    Look look = LookOf(static_cast<Role>(r));
    if (grey && look.fg == COLOR_WHITE && look.bg < 0 && look.extra == A_DIM) {
      look.fg = 8;
      look.extra = A_NORMAL;
    }
    if (s.color && (look.fg >= 0 || look.bg >= 0)) {
      auto it = std::find(pairs.begin(), pairs.end(), std::make_pair(look.fg, look.bg));
      if (it == pairs.end()) {
        pairs.emplace_back(look.fg, look.bg);
        init_pair(static_cast<short>(pairs.size()), look.fg, look.bg);
        it = pairs.end() - 1;
      }
      s.attrs[r] = COLOR_PAIR(static_cast<int>(it - pairs.begin()) + 1) | look.extra;
    } else {
      s.attrs[r] = s.color ? look.extra : look.mono;
    }
  }
  Resize();
}

NcursesCanvas::~NcursesCanvas() { Stop(); }

void NcursesCanvas::Stop() {
  if (!state_->started) return;
  state_->started = false;
  curs_set(1);
  endwin();
}

int NcursesCanvas::width() const { return state_->w; }
int NcursesCanvas::height() const { return state_->h; }
void NcursesCanvas::Clear() { state_->next.Clear(); }
void NcursesCanvas::Put(int x, int y, std::string_view text, Role role) {
  state_->next.Put(x, y, text, role);
}
void NcursesCanvas::Paint(int x, int y, int count, Role role) {
  state_->next.Paint(x, y, count, role);
}
bool NcursesCanvas::utf8() const { return state_->utf8; }

void NcursesCanvas::Resize() {
  State& s = *state_;
  getmaxyx(stdscr, s.h, s.w);
  s.next = TextCanvas(s.w, s.h);
  s.prev = TextCanvas(s.w, s.h);
  s.full_redraw = true;
  clearok(curscr, TRUE);
}

void NcursesCanvas::Invalidate() {
  state_->full_redraw = true;
  clearok(curscr, TRUE);
}

void NcursesCanvas::Present() {
  State& s = *state_;
  std::string run;
  for (int y = 0; y < s.h; ++y) {
    int x = 0;
    while (x < s.w) {
      if (!s.full_redraw && s.next.Glyph(x, y) == s.prev.Glyph(x, y) &&
          s.next.RoleAt(x, y) == s.prev.RoleAt(x, y)) {
        ++x;
        continue;
      }
      // A run of changed cells with the same role, written in one call.
      const Role role = s.next.RoleAt(x, y);
      const int start = x;
      run.clear();
      while (x < s.w && s.next.RoleAt(x, y) == role &&
             (s.full_redraw || s.next.Glyph(x, y) != s.prev.Glyph(x, y) ||
              s.next.RoleAt(x, y) != s.prev.RoleAt(x, y))) {
        run += s.next.Glyph(x, y);
        ++x;
      }
      // Writing the bottom-right cell makes waddstr report ERR (the cursor cannot advance past
      // it), but the cell is stored, and doupdate paints it without scrolling (ncurses uses the
      // terminal's auto-margin or insert-character capabilities for that cell).
      attrset(s.attrs[static_cast<int>(role)]);
      mvaddstr(y, start, run.c_str());
    }
  }
  attrset(A_NORMAL);
  s.full_redraw = false;
  std::swap(s.prev, s.next);
  s.next = TextCanvas(s.w, s.h);
  wnoutrefresh(stdscr);
  doupdate();
}

std::optional<Input> NcursesCanvas::ReadInput() {
  const int ch = getch();
  if (ch == ERR) return std::nullopt;
  Input in;
  if (ch != KEY_MOUSE) {
    in.key = KeyOf(ch);
    return in;
  }
  MEVENT event;
  if (getmouse(&event) != OK) return Input{};
  in.key = Key::kMouseClick;
  in.x = event.x;
  in.y = event.y;
  return in;
}

}  // namespace neuronmon::tui
