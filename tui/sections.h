// The sections of neuron-top's screen. Each reports the rows it would like and draws itself into
// the rows the layout gives it (never outside them). Internal to the view; pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/view_state.h"

namespace neuronmon::tui {

struct Glyphs {
  const char* fill;    // a bar tick
  const char* empty;   // the rest of a bar
  const char* rule;    // horizontal rule
  const char* bullet;  // a finding
  const char* marker;  // the straggler marker
  const char* more;    // text goes on beyond what is shown
};
Glyphs GlyphsFor(bool utf8);

struct Ctx {
  const Model& model;
  const ViewState& view;
  Canvas& canvas;
  std::uint32_t pid;  // the selected tab's runtime; 0: all
  Glyphs glyphs;
  Frame& frame;
};

// Draws `text` clipped to `width` columns from x; returns the column after it.
int Text(Canvas& c, int x, int y, int width, std::string_view text, Role role);
// A section header bar across the canvas.
void Header(Ctx& ctx, int y, const std::string& title);
// A bar of `width` cells, `fraction` (0..1) filled.
void Bar(Ctx& ctx, int x, int y, int width, double fraction, Role fill);

// The runtime groups whose figures sections draw as bars and numbers; kFlops is the FLOPs of
// neuroncore_counters, which may be unmeasured while its utilization is not.
enum class RuntimeGroup { kCores, kVcpu, kCollectives, kFlops };
// The group's error in `report`: "" when the report lacks the group or it has no error. A group
// with an error carries no figures (its reason, e.g. a signal the backend cannot measure). For
// kFlops, neuroncore_counters' flops_unavailable.
const std::string& GroupError(const v1::RuntimeReport& report, RuntimeGroup group);
struct Unavailable {
  // "unavailable: <reason>" ("TFLOPS unavailable: <reason>" for kFlops) per distinct error of the
  // tab's runtimes, prefixed with their tags ("a, b: unavailable: ...") when others have the
  // figures. Already terminal-safe (Model).
  std::vector<std::string> lines;
  bool all = false;  // every runtime the tab shows (at least one) lacks the figures
};
Unavailable UnavailableFigures(const Ctx& ctx, RuntimeGroup group);
// Draws `unavailable.lines` from row y, at most `rows` of them; returns how many it drew.
int DrawUnavailable(Ctx& ctx, const Unavailable& unavailable, int y, int rows);

int GridRows(const Ctx& ctx);
void DrawGrid(Ctx& ctx, int y, int rows);
int HbmRows(const Ctx& ctx);
void DrawHbm(Ctx& ctx, int y, int rows);
int CollectiveRows(const Ctx& ctx);
void DrawCollectives(Ctx& ctx, int y, int rows);
int DiagnosisRows(const Ctx& ctx);
void DrawDiagnosis(Ctx& ctx, int y, int rows);
int GraphRows(const Ctx& ctx);
// The tallest a history graph is drawn, in rows, and how many rows beyond GraphRows() the
// history can use when the window has rows to spare.
inline constexpr int kMaxGraphRows = 8;
int GraphSpareRows(const Ctx& ctx);
void DrawGraphs(Ctx& ctx, int y, int rows);
void DrawVcpu(Ctx& ctx, int y, int rows);
void DrawMemorySummary(Ctx& ctx, int y, int rows);
int TreeRows(const Ctx& ctx);
void DrawTree(Ctx& ctx, int y, int rows);
// The Processes view's table over `rows` rows from y (its last row: prompt or status).
void DrawProcesses(Ctx& ctx, int y, int rows);

}  // namespace neuronmon::tui
