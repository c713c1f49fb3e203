// TopState: everything neuron-top's screen is drawn from — the live Model, the copy frozen on
// pause, the ViewState, the last Frame — and how the Processes view may signal the pids shown.
// The controller (tui/controller.h) and its Processes-view part (tui/process_keys.h) change it;
// the UI loop owns it. Plain values; not thread-safe.
#pragma once

#include "tui/model.h"
#include "tui/process_signal.h"
#include "tui/view_state.h"

namespace neuronmon::tui {

struct TopState {
  Model live;
  Model frozen;  // what the screen shows while paused: a copy of `live` taken on pause
  // view.refresh_seconds is the redraw interval the loop keeps (and the title shows).
  ViewState view;
  Frame frame;  // the last rendered frame: where tabs and tree rows landed, and the tree's page
  // Whether, and how, the Processes view's `k` may signal the pids shown: the loop sets it from
  // how it connected (a daemon on this host, over TCP, a recording).
  SignalTarget signals;
};

// The model the screen shows: `frozen` while paused, else `live`.
const Model& ShownModel(const TopState& state);

}  // namespace neuronmon::tui
