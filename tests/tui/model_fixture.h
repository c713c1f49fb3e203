// Test helper: a neuron-top Model filled from a real DaemonCore over a simulated device, with fixed
// seed, times and host data, so frames are reproducible byte for byte.
#pragma once

#include <memory>
#include <string>

#include "daemon/core/backend.h"
#include "proto/common/snapshot.h"
#include "tui/model.h"

namespace neuronmon::tui::testing {

// Samples `backend`, started at 1000 s of the daemon's clock, once a second for `seconds` and
// applies every report (as neuron-top's start-up replay would).
Model BuildModelOver(std::unique_ptr<daemon::Backend> backend, int seconds = 90);

// Samples `device` running `scenario` once a second for `seconds` and applies every report (as
// neuron-top's start-up replay would). With `unmeasured`, the backend does not measure those
// signals, as a real host (tests/daemon/unmeasured_backend.h).
Model BuildModel(const std::string& device, const std::string& scenario, int seconds = 90,
                 const Unmeasured* unmeasured = nullptr);

}  // namespace neuronmon::tui::testing
