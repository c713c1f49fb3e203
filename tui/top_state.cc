#include "tui/top_state.h"

namespace neuronmon::tui {

const Model& ShownModel(const TopState& state) {
  return state.view.paused ? state.frozen : state.live;
}

}  // namespace neuronmon::tui
