#include "proto/common/snapshot.h"

namespace neuronmon {

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kSendRecv:
      return "send_recv";
  }
  return "unknown";
}

std::uint64_t RuntimeMemory::DeviceTotal() const {
  std::uint64_t total = 0;
  for (const CoreMemory& c : cores) total += c.Total();
  return total;
}

}  // namespace neuronmon
