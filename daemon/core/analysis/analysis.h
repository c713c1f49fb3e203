// What the Analyzer (analyzer.h) is given and gives: its thresholds, one table (docs/diagnosis.md),
// and its verdicts. Apart from analyzer.h so that the Analyzer's parts in this folder use them
// without including the class they make up. Plain values; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "neuronmon/v1/report.pb.h"
#include "proto/common/clock.h"

namespace neuronmon::daemon {

struct AnalyzerThresholds {
  double busy_percent = 80;  // below this, the runtime is losing time
  double idle_percent = 5;   // below this with no executions: cores held, unused
  // A process using this many CPUs works on the host (reads input, writes a checkpoint): its idle
  // cores wait for it, they are not held unused.
  double host_busy_cpus = 0.5;
  double collective_share = 0.25;          // time in collectives that makes them the bottleneck
  double fast_collective_share = 0.15;     // below this, collectives are not the problem
  double hbm_percent = 85;                 // HBM bandwidth near its peak ...
  double flops_fraction = 0.35;            // ... while FLOP/s stay below this fraction of peak
  double straggler_gap_points = 12;        // utilization above the peers' median, percentage points
  double straggler_peer_share = 0.15;      // peers' median time in collectives (they wait)
  Nanos window = std::chrono::seconds(5);  // metrics window per evaluation
  Nanos memory = std::chrono::seconds(15);  // evaluations a verdict is voted over
  double majority = 0.6;                    // share of votes a new verdict needs
  // A change also comes at once when the last fast_votes candidates agree on it and the last
  // `recent` of metrics alone agree too, and — leaving healthy — are no busier than the window
  // (unless busy anyway): a checkpoint or a slow step darkens every window that holds it, but
  // once it is over the newest seconds recover first. A return to healthy takes healthy_votes.
  std::uint32_t fast_votes = 4;
  std::uint32_t healthy_votes = 3;
  Nanos recent = std::chrono::seconds(2);
  // Votes that make a straggler a verdict, or end one: one device apart from its peers is not
  // what a checkpoint or a slow step looks like (those move every device alike), so it needs no
  // majority of 15 s.
  std::uint32_t straggler_votes = 4;
  Nanos errors_clear = std::chrono::seconds(30);  // error-free time before errors is lifted
  // A hang: no execution completes for hang_steps of the runtime's recent step times (and at
  // least hang_min) while it, or a member of its job, sits in a collective that does not complete
  // (in flight at least hang_in_flight of the last period, no operation finishing).
  double hang_steps = 2;
  Nanos hang_min = std::chrono::seconds(3);
  double hang_in_flight = 0.5;
  // A runtime that stopped: its cores and process idle, nothing completed, for stop_steps of its
  // recent step times and at least stop_min (a window's length: a server between requests is
  // not taken for stopped sooner than the window rule would say so) — adopted at once.
  double stop_steps = 1.5;
  Nanos stop_min = std::chrono::seconds(5);
  // Memory pressure: a device the runtime holds memory on is this full (HBM in use, percent of
  // its capacity); once said, it holds until the device is memory_pressure_clear points emptier.
  double memory_pressure_percent = 90;
  double memory_pressure_clear = 3;
};

// The current verdicts.
struct Analysis {
  std::map<std::uint32_t, std::vector<v1::Finding>> runtimes;  // by pid
  v1::Finding instance;
  // Where the kubelet's allocations are known (Inventory.allocations): each pod container that
  // Kubernetes allocated devices no application uses, as an idle_allocated finding whose subject
  // is "pod NAMESPACE/NAME". Reports list them after the instance summary.
  std::vector<v1::Finding> allocations;
  // Each device's health over the analyzer's window (by driver index), as the instance summary
  // judged it.
  std::vector<v1::DeviceHealth> devices;
};

}  // namespace neuronmon::daemon
