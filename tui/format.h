// Number formatting as AWS's neuron-top shows it (reference neuron-tools.md §3.2): percentages
// "56.81%" ("  100%" above 99.995), TFLOPS "  10.004TF", 1024-based sizes with one decimal
// "256.0KB", "17.5GB"; plus rates and latencies for neuronmon's own sections. Pure.
#pragma once

#include <cstdint>
#include <string>

#include "neuronmon/v1/inventory.pb.h"

namespace neuronmon::tui {

std::string Percent(double percent);  // "56.81%", "  100%", " 0.00%"
std::string Tflops(double flops);     // "%8.3fTF" of flops * 1e-12; "       0TF" below 1 GF
std::string Bytes(double bytes);      // "0.0B", "256.0KB", "12.4MB", "17.5GB", "1.2TB"
std::string BytesPerSecond(double bytes_per_s);  // "1.21TB/s", "820.0GB/s"
std::string Latency(double seconds);             // "612us", "4.3ms", "1.25s", "-" when 0
std::string Count(double per_second);            // "120/s", "4.5k/s"
// Who runs an application, what is known of it: "user mlteam, slurm job 4242 step 0",
// "pod inference/vllm-0 (container vllm)", "container 3f4e5d6c7b8a" (the id's first 12 digits),
// "pod uid 1f2e3d4c-..."; "" when nothing is. Safe for the terminal.
std::string AttributionText(const v1::Attribution& a);

// A terminal dimension from the environment ($COLUMNS, $LINES): `fallback` when unset, not a
// whole number or not positive; otherwise clamped to [min, max].
int DimensionFromEnv(const char* text, int fallback, int min, int max);

}  // namespace neuronmon::tui
