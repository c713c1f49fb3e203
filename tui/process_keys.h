// The Processes view's part of the controller: `p` shows and leaves it; inside it the arrows,
// pages, Home/End and clicks select a process (by pid, so the selection follows it through
// re-sorting), Enter opens its tab in the main view, s/F6 pick the sort column, r reverses, /
// types a filter, e/F5 group by job, and k/F9 ask to signal the selected process — sent through
// state.signals once confirmed. Internal to the controller (tui/controller.h); pure apart from the
// signal sender.
#pragma once

#include "tui/keymap.h"
#include "tui/top_state.h"

namespace neuronmon::tui {

// Applies `command` when it is the Processes view's (or `p`); false when the main view's
// handling applies.
bool ApplyProcessCommand(const Command& command, TopState& state);

}  // namespace neuronmon::tui
