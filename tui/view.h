// View: neuron-top's screen as a pure function of the Model, the ViewState and the canvas size.
// Sections (NeuronCore grid, HBM, collectives, diagnosis, history graphs, vCPU, memory summary and
// the memory-details tree) shrink to fit, then fold, and a line names what is hidden; nothing is
// drawn outside the canvas at any size. The Processes view (ViewState::procs.shown) replaces them
// with the table of applications (tui/processes.h). Render() also returns where tabs, tree rows
// and processes landed, for mouse clicks (Frame, in tui/view_state.h with ViewState; the tree's
// rows and the tabs are tui/tree.h's). Pure; thread-compatible.
#pragma once

#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/tree.h"
#include "tui/view_state.h"

namespace neuronmon::tui {

Frame Render(const Model& model, const ViewState& view, Canvas& canvas);

}  // namespace neuronmon::tui
