// Test helper: a neuron-top Model filled from a real DaemonCore over a simulated device, with fixed
// seed, times and host data, so frames are reproducible byte for byte.
#pragma once

#include <string>

#include "tui/model.h"

namespace neuronmon::tui::testing {

// Samples `device` running `scenario` once a second for `seconds` and applies every report (as
// neuron-top's start-up replay would).
Model BuildModel(const std::string& device, const std::string& scenario, int seconds = 90);

}  // namespace neuronmon::tui::testing
