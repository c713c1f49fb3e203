// View: neuron-top's screen as a pure function of the Model, the ViewState and the canvas size.
// Sections (NeuronCore grid, HBM, collectives, diagnosis, history graphs, vCPU, memory summary and
// the memory-details tree) shrink to fit, then fold, and a line names what is hidden; nothing is
// drawn outside the canvas at any size. The Processes view (ViewState::procs.shown) replaces them
// with the table of applications (tui/processes.h). Render() also returns where tabs, tree rows
// and processes landed, for mouse clicks. Pure; thread-compatible.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tui/canvas.h"
#include "tui/graph.h"
#include "tui/model.h"
#include "tui/processes.h"

namespace neuronmon::tui {

enum class GraphView { kUtilization, kHbm, kCollectiveP99 };
inline constexpr int kGraphViews = 3;

struct ViewState {
  int tab = 0;  // 0: all; n: the n-th runtime in pid order
  bool flops = false;
  bool help = false;
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

// One row of the memory-details tree.
struct TreeRow {
  std::string id;  // "d3", "d3/c12", "d3/c12/m10001.4242", or a category "d3/c12/=Tensors"
  int depth = 0;
  bool expandable = false;
  bool expanded = false;
  std::string label;
  std::string model_id;
  double device_bytes = 0;
  double host_bytes = 0;
};

// The visible rows of the tree for the current tab and expansion state.
std::vector<TreeRow> BuildTree(const Model& model, const ViewState& view);
// Every expandable node id (for `x`, expand everything).
std::vector<std::string> AllTreeNodes(const Model& model, const ViewState& view);
// The pid of tab `tab` (0 for "all" or a tab that no longer exists).
std::uint32_t TabPid(const Model& model, int tab);
int TabCount(const Model& model);

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

Frame Render(const Model& model, const ViewState& view, Canvas& canvas);

}  // namespace neuronmon::tui
