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

namespace {

template <typename T>
std::size_t VectorBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

std::size_t StringBytes(const std::string& s) {
  return s.capacity() > 15 ? s.capacity() + 1 : 0;  // within the small-string buffer: no heap
}

std::size_t HistogramBytes(const LatencyHistogram& h) { return VectorBytes(h.buckets()); }

}  // namespace

std::size_t OwnBytes(const Snapshot& s) {
  std::size_t bytes = sizeof(Snapshot) + StringBytes(s.error) + VectorBytes(s.cores) +
                      VectorBytes(s.devices) + VectorBytes(s.runtimes) +
                      VectorBytes(s.host.per_cpu) + StringBytes(s.host.cpu_error) +
                      StringBytes(s.host.memory_error);
  for (const CoreCounters& c : s.cores) bytes += VectorBytes(c.physical_busy_ns);
  for (const RuntimeSample& r : s.runtimes) {
    bytes += StringBytes(r.tag) + StringBytes(r.error) + VectorBytes(r.cores) +
             HistogramBytes(r.total_latency) + HistogramBytes(r.device_latency);
    for (const CollectiveCounters& c : r.collectives) bytes += HistogramBytes(c.latency);
  }
  return bytes;
}

std::size_t SharedMemoryBytes(const Snapshot& s) {
  std::size_t bytes = 0;
  for (const RuntimeSample& r : s.runtimes) {
    if (r.memory == nullptr) continue;
    bytes += sizeof(RuntimeMemory) + VectorBytes(r.memory->cores) + VectorBytes(r.memory->models);
    for (const LoadedModel& m : r.memory->models) {
      bytes += StringBytes(m.name) + StringBytes(m.uuid) + VectorBytes(m.subgraphs);
      for (const SubgraphMemory& g : m.subgraphs) bytes += StringBytes(g.name);
    }
  }
  return bytes;
}

}  // namespace neuronmon
