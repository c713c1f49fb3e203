// Cluster view: neuron-top following many hosts (--connect h1:p,h2:p,... or --hosts FILE). One
// row per host — connection state, instance type, devices, mean NeuronCore utilization bar, HBM
// in use, collective p99, the host's verdict — grouped by job (hosts running the same command
// line), the cluster's verdict on top naming the slow or stuck node. Sorted by name, utilization
// or verdict. Pure: rows and analysis in, cells out. Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "client/cluster.h"
#include "tui/canvas.h"
#include "tui/controller.h"
#include "tui/keymap.h"

namespace neuronmon::tui {

enum class ClusterSort { kName, kUtilization, kVerdict };

struct ClusterViewState {
  ClusterSort sort = ClusterSort::kName;
  std::size_t selected = 0;  // position in the display order
  int top = 0;               // first display position on screen
  bool utf8 = true;
  double refresh_seconds = 1;
  std::string version;
};

// Host indices in display order: jobs in order of their first host in the list, hosts not
// reporting (no job yet) last; within a group, by the sort key (ties by name).
std::vector<std::size_t> ClusterOrder(const std::vector<client::ClusterHost>& hosts,
                                      const client::ClusterAnalysis& analysis, ClusterSort sort);

// Draws the view; adjusts `state.top` so the selected row is visible.
void RenderCluster(const std::vector<client::ClusterHost>& hosts,
                   const client::ClusterAnalysis& analysis, const std::vector<std::size_t>& order,
                   ClusterViewState& state, Canvas& canvas);

// What a key does in the cluster view: the single-host view's keys (Translate) where they mean
// the same — quit, repaint, resize, Up/Down, k/j, PgUp/PgDn, Enter (here: open the host) — plus
// Home/End and `s` (sort). `effect` is for the loop (Perform), as the single-host view's.
struct ClusterCommand {
  Effect effect = Effect::kNone;
  bool open = false;  // open the selected host's full view
};
ClusterCommand ApplyClusterKey(const Input& input, std::size_t rows, int page,
                               ClusterViewState& state);

const char* SortName(ClusterSort sort);

}  // namespace neuronmon::tui
