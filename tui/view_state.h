// ViewState: what neuron-top's screen shows beyond the Model — the tab, the graph, the help, pause,
// the tree's expansion and cursor, the refresh interval, the Processes view — and Frame, where a
// rendered frame put its tabs, tree rows and processes (for mouse clicks) and what did not fit.
// The controller changes a ViewState; the view (tui/view.h) and its sections (tui/sections.h)
// read it and fill a Frame. Plain values; thread-compatible.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tui/graph.h"
#include "tui/processes.h"

namespace neuronmon::tui {

enum class GraphView { kUtilization, kHbm, kCollectiveP99 };
inline constexpr int kGraphViews = 3;

struct ViewState {
  int tab = 0;  // 0: all; n: the n-th runtime in pid order
  bool flops = false;
  bool help = false;
  bool events = false;  // the recent-event list (e)
  bool paused = false;
  GraphView graph = GraphView::kUtilization;
  GraphStyle glyphs = GraphStyle::kBraille;
  bool utf8 = true;
  std::set<std::string> expanded;  // tree node ids
  int tree_cursor = 0;             // index into the visible tree rows
  double refresh_seconds = 1;
  std::string version;
  // Non-empty in replay mode: the title's state ("REPLAY 2026-12-04 21:30:05Z 1x PAUSED").
  std::string replay;
  // Shown on the key-help row instead of the keys while non-empty (NoticeBar): "incident saved:
  // ...", "configuration reloaded: ...". Already sanitized.
  std::string notice;
  ProcessesView procs;  // the Processes view (p)
};

struct Hit {
  enum class Kind { kTab, kTreeRow, kProcess };
  Kind kind = Kind::kTab;
  int y = 0;
  int x0 = 0;
  int x1 = 0;     // exclusive
  int index = 0;  // tab number, visible tree row index, or a process's pid
};

struct Frame {
  std::vector<Hit> hits;
  std::vector<std::string> hidden;  // sections that did not fit
  int tree_page = 1;                // tree rows visible at once
  int process_page = 1;             // process table lines visible at once
  // Writes a section attempted outside the rows it was given (clipped). Always 0 unless a section
  // has a layout bug; the layout sweep test checks it.
  int overflow = 0;
};

}  // namespace neuronmon::tui
