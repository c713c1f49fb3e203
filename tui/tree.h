// The memory-details tree of neuron-top's screen (device -> NeuronCore -> model -> categories, as
// AWS's neuron-top shows it) as rows for the current tab and expansion, and the runtime tabs the
// tree and the other sections filter by. Pure functions of the Model and the ViewState (tree.cc,
// which also draws the tree as a section); thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tui/model.h"
#include "tui/view_state.h"

namespace neuronmon::tui {

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

}  // namespace neuronmon::tui
