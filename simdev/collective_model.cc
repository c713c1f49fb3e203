#include "simdev/collective_model.h"

#include <algorithm>
#include <cmath>

namespace neuronmon::simdev {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kLaunchSeconds = 4e-6;
constexpr double kLinkEfficiency = 0.3;  // achieved bus bandwidth / nominal NeuronLink
constexpr double kEfaEfficiency = 0.5;

int Log2Ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// Intra-node hops of an all-reduce with `r` devices.
int AllReduceHops(const InstanceSpec& spec, int r, double bytes, const char** algorithm) {
  if (bytes < 1 * kMiB) {
    *algorithm = "mesh";
    return 2;
  }
  if (spec.topology == Topology::kRing) {
    *algorithm = "ring";
    return 2 * (r - 1);
  }
  if (bytes < 56 * kMiB) {
    *algorithm = "rdh";
    return 2 * Log2Ceil(r);
  }
  *algorithm = "kangaring";
  return r;  // two passes over half the ring
}

int IntraHops(const InstanceSpec& spec, CollectiveKind kind, int r, double bytes,
              const char** algorithm) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return AllReduceHops(spec, r, bytes, algorithm);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return std::max(1, AllReduceHops(spec, r, bytes, algorithm) / 2);
    case CollectiveKind::kAllToAll:
      *algorithm = "mesh";
      return spec.topology == Topology::kRing ? std::max(1, r / 2) : std::min(4, r - 1);
    case CollectiveKind::kSendRecv:
      *algorithm = "p2p";
      return 1;
  }
  return 1;
}

}  // namespace

double BusFactor(CollectiveKind kind, int ranks) {
  const double r = std::max(1, ranks);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (r - 1) / r;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (r - 1) / r;
    case CollectiveKind::kSendRecv:
      return 1;
  }
  return 1;
}

CollectiveCost EstimateCollective(const InstanceSpec& spec, const CollectiveGroup& group,
                                  CollectiveKind kind, double bytes, double hbm_load) {
  CollectiveCost cost;
  const double hop = 1e-6 * (1 + std::clamp(hbm_load, 0.0, 1.0));
  const int r = std::max(1, group.devices_per_node);
  double transfer = 0;
  if (r == 1) {
    // Cores of one device exchange through its HBM.
    cost.algorithm = "local";
    cost.hops = 1;
    transfer = bytes * 2 / (spec.hbm_peak_bytes_per_second * 0.5);
  } else {
    cost.hops = IntraHops(spec, kind, r, bytes, &cost.algorithm);
    transfer = BusFactor(kind, r) * bytes / (spec.link_bytes_per_second * kLinkEfficiency);
  }
  double inter_hop = 0;
  if (group.nodes > 1) {
    cost.inter_node_hops = kind == CollectiveKind::kSendRecv ? 1 : 2 * (group.nodes - 1);
    inter_hop = group.nodes_over_neuronlink ? 3e-6 : kInterNodeHopSeconds;
    const double node_bandwidth = group.nodes_over_neuronlink
                                      ? 256e9 * kLinkEfficiency * spec.devices_per_node()
                                      : spec.efa_bytes_per_second * kEfaEfficiency;
    transfer += BusFactor(kind, group.nodes) * bytes / node_bandwidth;
  }
  cost.floor_seconds = cost.hops * hop + cost.inter_node_hops * inter_hop;
  cost.seconds = cost.floor_seconds + kLaunchSeconds + transfer;
  return cost;
}

}  // namespace neuronmon::simdev
