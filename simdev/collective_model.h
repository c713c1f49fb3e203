// Collective-operation cost model (reference/neuron-tools.md §4, intranode/internode collective
// docs): latency = hops x per-hop latency + bus bytes / achieved link bandwidth + launch overhead.
// The algorithm follows the message size as the Neuron runtime picks it: Mesh below 1 MiB, RDH up
// to 56 MiB, KangaRing above (Ring on ring topologies). Per-hop latency is ~1-2 us inside a node
// (rising with HBM load) and ~15 us across nodes over EFA. Pure; thread-safe.
#pragma once

#include "proto/common/snapshot.h"
#include "simdev/preset.h"

namespace neuronmon::simdev {

struct CollectiveGroup {
  int devices_per_node = 1;            // devices of the group inside one node
  int nodes = 1;                       // nodes the group spans
  bool nodes_over_neuronlink = false;  // UltraServer: nodes joined by NeuronLink, not EFA
};

struct CollectiveCost {
  const char* algorithm = "mesh";  // "mesh", "rdh", "kangaring", "ring", "p2p", "local"
  int hops = 0;                    // intra-node hops
  int inter_node_hops = 0;
  double floor_seconds = 0;  // hops x per-hop latency: no operation is faster
  double seconds = 0;        // expected latency
};

// `hbm_load` in [0, 1] is the HBM bandwidth utilisation while the operation runs.
CollectiveCost EstimateCollective(const InstanceSpec& spec, const CollectiveGroup& group,
                                  CollectiveKind kind, double bytes, double hbm_load);

// Bus-bandwidth factor of nccom-test: all-reduce 2(r-1)/r, gathers/scatters (r-1)/r, p2p 1.
double BusFactor(CollectiveKind kind, int ranks);

inline constexpr double kInterNodeHopSeconds = 15e-6;

}  // namespace neuronmon::simdev
