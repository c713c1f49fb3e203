#include "proto/common/snapshot.h"

#include <algorithm>

namespace neuronmon {

namespace {

std::uint64_t Grown(std::uint64_t now, std::uint64_t earlier) {
  return now >= earlier ? now - earlier : now;
}

}  // namespace

EccCounters EccCounters::Minus(const EccCounters& e) const {
  return {Grown(mem_corrected, e.mem_corrected), Grown(mem_uncorrected, e.mem_uncorrected),
          Grown(sram_corrected, e.sram_corrected), Grown(sram_uncorrected, e.sram_uncorrected)};
}

HardwareErrors HardwareErrors::Minus(const HardwareErrors& e) const {
  HardwareErrors d;
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    d.*f.member = Grown(this->*f.member, e.*f.member);
  }
  return d;
}

namespace {

std::uint64_t SumOf(const HardwareErrors& e, ErrorSource source) {
  std::uint64_t total = 0;
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    if (f.source == source) total += e.*f.member;
  }
  return total;
}

}  // namespace

std::uint64_t HardwareErrors::Total() const { return SumOf(*this, ErrorSource::kDriver); }
std::uint64_t HardwareErrors::KernelTotal() const { return SumOf(*this, ErrorSource::kKernelLog); }

const HardwareErrorField& KernelLogFieldOf(std::string_view type) {
  const HardwareErrorField* other = nullptr;
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    if (f.source != ErrorSource::kKernelLog) continue;
    if (f.kernel_type == type) return f;
    if (f.kernel_type.empty()) other = &f;
  }
  return *other;
}

ExecutionCounters ExecutionCounters::Minus(const ExecutionCounters& e) const {
  ExecutionCounters d;
  for (const ExecutionField& f : kExecutionFields)
    d.*f.member = Grown(this->*f.member, e.*f.member);
  return d;
}

ExecutionCounters& ExecutionCounters::operator+=(const ExecutionCounters& d) {
  for (const ExecutionField& f : kExecutionFields) this->*f.member += d.*f.member;
  return *this;
}

std::uint64_t ExecutionCounters::Failed() const {
  std::uint64_t n = 0;
  for (const ExecutionField& f : kExecutionFields) n += f.failed ? this->*f.member : 0;
  return n;
}

const std::string& Snapshot::UnmeasuredReason(Signal signal) const {
  static const std::string kMeasured;
  return unmeasured ? unmeasured->Reason(signal) : kMeasured;
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

const RuntimeSample* FindRuntime(const Snapshot& snapshot, std::uint32_t pid) {
  const std::vector<RuntimeSample>& rs = snapshot.runtimes;
  auto it = std::lower_bound(rs.begin(), rs.end(), pid,
                             [](const RuntimeSample& r, std::uint32_t p) { return r.pid < p; });
  return it != rs.end() && it->pid == pid ? &*it : nullptr;
}

std::size_t DeviceMemoryCategory(std::string_view name) {
  for (std::size_t i = 0; i < kDeviceMemoryCategories.size(); ++i) {
    if (name == kDeviceMemoryCategories[i]) return i;
  }
  return kDeviceMemoryCategories.size() - 1;
}

std::size_t OwnBytes(const Snapshot& s) {
  std::size_t bytes = sizeof(Snapshot) + StringBytes(s.error) + VectorBytes(s.cores) +
                      VectorBytes(s.devices) + VectorBytes(s.runtimes) +
                      VectorBytes(s.host.per_cpu) + StringBytes(s.host.cpu_error) +
                      StringBytes(s.host.memory_error);
  for (const CoreCounters& c : s.cores) bytes += VectorBytes(c.physical_busy_ns);
  for (const DeviceCounters& d : s.devices) {
    bytes += StringBytes(d.error) + StringBytes(d.errors_unavailable) +
             StringBytes(d.kernel_log_unavailable) + StringBytes(d.power.unavailable);
    for (const std::string& c : d.unhealthy_components) bytes += StringBytes(c);
  }
  for (const RuntimeSample& r : s.runtimes) {
    bytes += StringBytes(r.tag) + StringBytes(r.error) + VectorBytes(r.cores) +
             HistogramBytes(r.total_latency) + HistogramBytes(r.device_latency);
    for (const CollectiveCounters& c : r.collectives) bytes += HistogramBytes(c.latency);
  }
  return bytes;
}

std::size_t MemoryBytes(const RuntimeMemory& memory) {
  std::size_t bytes =
      sizeof(RuntimeMemory) + VectorBytes(memory.cores) + VectorBytes(memory.models);
  for (const LoadedModel& m : memory.models) {
    bytes += StringBytes(m.name) + StringBytes(m.uuid) + VectorBytes(m.subgraphs);
    for (const SubgraphMemory& g : m.subgraphs) bytes += StringBytes(g.name);
  }
  return bytes;
}

std::size_t SharedMemoryBytes(const Snapshot& s) {
  std::size_t bytes = 0;
  for (const RuntimeSample& r : s.runtimes) {
    if (r.memory != nullptr) bytes += MemoryBytes(*r.memory);
  }
  return bytes;
}

}  // namespace neuronmon
