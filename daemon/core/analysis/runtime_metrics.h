// Internals of the Analyzer (analyzer.h): what one runtime did over an evaluation's window, read
// from the window's report — the figures neuron-top, neuron-monitor and /metrics show for a window
// of that length — plus what only the snapshots tell (memory still growing, who holds memory on
// the fullest device). The rules (rules.h) and the hang rule (hangs.h) judge these figures; the
// Analyzer fills in the progress fields. Also the few text helpers the analysis's findings share.
// Not part of the daemon's API. Pure; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/core/report/history.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/names/names.h"

namespace neuronmon::daemon::analysis_internal {

// What one runtime did over the window.
struct RuntimeMetrics {
  std::uint32_t pid = 0;
  std::string tag;
  std::string command;
  double utilization = 0;     // percent, mean over its cores
  double flops_fraction = 0;  // of the cores' BF16 peak
  double hbm = 0;             // percent of its devices' peak bandwidth
  double collective = 0;      // share of the window in collectives (0..1)
  std::uint64_t executions = 0;
  std::uint64_t errors = 0;  // failed executions and hardware errors
  std::uint64_t transient = 0;
  bool loading = false;  // device memory still growing
  std::string device_error;
  std::vector<int> devices;
  std::vector<double> device_utilization;  // per device, same order
  double process_cpus = 0;                 // CPUs the process used over the window
  // Progress: seconds its cores and process have been idle with no execution completing, and how
  // long its recent step times say a pause may last (stop_after 0: unknown — a signal is
  // unmeasured, or no step seen yet).
  double idle_seconds = 0;
  double stop_after = 0;
  bool waiting = false;  // in a collective that did not complete in the newest period
  // Memory pressure: the fullest device it holds memory on (-1: none), its use of it, and who
  // else holds the most there ("pid 812 (serve) holds 2.7 GiB"; empty: nobody).
  int memory_device = -1;
  double memory_percent = 0;
  double memory_used = 0, memory_total = 0, memory_own = 0;
  std::string memory_category;  // its largest category on that device, with its size
  std::string memory_neighbour;
  bool pressured = false;  // its verdict is memory_pressure already (the threshold relaxes)
  std::string pod;         // "pod inference/vllm-0 (container vllm)" when its pod is known

  // It stopped: idle for longer than its steps say a pause may last.
  bool Stopped() const { return stop_after > 0 && idle_seconds >= stop_after; }
  // Why each signal the rules read could not be measured over the window (empty: it was); the
  // figure of an unmeasured signal above is 0 and must not be read.
  std::array<std::string, kSignals> unavailable;

  const std::string& Unavailable(Signal s) const {
    return unavailable[static_cast<std::size_t>(s)];
  }
  bool Has(Signal s) const { return Unavailable(s).empty(); }
};

// The window's report: the groups the rules read, for every runtime.
v1::Report WindowReport(const Snapshot& start, const Snapshot& end, const v1::Inventory& inv);

// The snapshot a window of `length` ending at `end` starts at, samples being `period` apart (at
// least one sample back); null when `history` no longer holds it.
const Snapshot* WindowStart(const History& history, const Snapshot& end, Nanos length,
                            Nanos period);

// A runtime's figures over the window from its report `r` (and the window's `hbm_stats`), and
// its samples at the window's end and start. Leaves the progress and memory-pressure fields,
// `command` and `pod` for the caller.
RuntimeMetrics Measure(const v1::RuntimeReport& r, const v1::HbmStats& hbm_stats,
                       const RuntimeSample& now, const RuntimeSample& before,
                       const v1::Inventory& inv);

// Each runtime's device memory by device, from the newest snapshot `end`; then, for each runtime
// of `all`, the fullest device it holds memory on, its largest category there, and the biggest
// other holder.
void MeasureMemory(std::vector<RuntimeMetrics>& all, const Snapshot& end, const v1::HbmStats& hbm,
                   const v1::Inventory& inv);

// printf with one or two doubles, at most 159 characters.
std::string Fmt(const char* format, double a, double b = 0);
// "nd3".
std::string DeviceName(int d);
// "2.7 GiB".
std::string GiB(double bytes);

}  // namespace neuronmon::daemon::analysis_internal
