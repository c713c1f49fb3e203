// Test helper: a small hand-made neuron-top Model for the Processes view — three applications on
// two devices of four NeuronCores each:
//   pid 100 "python train.py --lr 3e-4": user alice, Slurm array job 70 task 3 (job 77), device 0,
//           cores 0-3 at 10/20/30/40 %, 2 GiB device and 1 GiB host memory, verdict input_bound;
//   pid 200 "vllm serve": user bob, pod inference/vllm-0, device 1, cores 4-7, core activity and
//           memory unavailable (errors), no findings;
//   pid 300 (not in the inventory: it started after the Welcome; tag "late"): cores 4 and 5 at
//           50 / 70 %, 512 MiB device memory and no host memory, verdict healthy.
#pragma once

#include "tui/model.h"

namespace neuronmon::tui::testing {

// `simulated`: the inventory says the data is simulated (the pids are not this host's).
Model ProcessModel(bool simulated);

}  // namespace neuronmon::tui::testing
