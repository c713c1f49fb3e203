// Canvas: the surface the view draws on — a grid of one-column glyphs, each with a style role.
// The view is a pure function onto a Canvas; TextCanvas keeps the grid in memory (tests, --once),
// NcursesCanvas puts it on the terminal. Roles, not colours, travel through the view; a canvas
// maps them to colours or to monochrome attributes. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neuronmon::tui {

enum class Role : std::uint8_t {
  kNormal,
  kTitle,      // the top title bar
  kSection,    // a section's header bar
  kHeader,     // column headings
  kDim,        // secondary text
  kValue,      // figures (green in AWS's neuron-top)
  kBarUser,    // bar ticks: utilization, user CPU, HBM read
  kBarSystem,  // bar ticks: system CPU, HBM write
  kBarFree,    // the unfilled part of a bar
  kSelected,   // the selected grid row or tree row
  kTabActive,
  kTab,
  kHelp,  // the help bar
  kGood,
  kWarning,
  kCritical,
  kGraph,
  kBanner,  // paused / reconnecting banners
  kCount,
};

// Display width of UTF-8 text, counting one column per code point (the view draws no wide glyphs).
int TextWidth(std::string_view utf8);
// The first `columns` code points of `utf8`.
std::string_view TakeColumns(std::string_view utf8, int columns);
// `text` broken at spaces into lines of at most `first` columns, then `rest` columns; a word
// longer than a line is cut.
std::vector<std::string> WrapWords(const std::string& text, int first, int rest);
// `utf8` with each non-ASCII code point replaced by one ASCII character that looks like it
// (dashes '-', quotes, bullets '*', arrows '<' '>', box and block glyphs '|' '-' '#'), else '?'.
std::string FoldToAscii(std::string_view utf8);

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  // Blanks every cell.
  virtual void Clear() = 0;
  // Writes `text` from column x on row y, clipped to the canvas; negative x clips the start.
  virtual void Put(int x, int y, std::string_view text, Role role) = 0;
  // Changes the role of `count` cells from (x, y), keeping their glyphs.
  virtual void Paint(int x, int y, int count, Role role) = 0;
};

class TextCanvas final : public Canvas {
 public:
  TextCanvas(int width, int height);
  int width() const override { return width_; }
  int height() const override { return height_; }
  void Clear() override;
  void Put(int x, int y, std::string_view text, Role role) override;
  void Paint(int x, int y, int count, Role role) override;

  // The glyphs, one line per row, trailing blanks trimmed.
  std::string Text() const;
  // One line per row: the role of each cell as a letter (see RoleLetter), trailing normals trimmed.
  std::string Styles() const;
  std::string_view Glyph(int x, int y) const;
  Role RoleAt(int x, int y) const;

 private:
  struct Cell {
    char glyph[5] = {' ', 0, 0, 0, 0};
    Role role = Role::kNormal;
  };
  int width_;
  int height_;
  std::vector<Cell> cells_;
};

// A letter per role for style goldens: '.' normal, 'T' title, 'S' section, ...
char RoleLetter(Role role);

}  // namespace neuronmon::tui
