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

ExecutionCounters ExecutionCounters::Minus(const ExecutionCounters& e) const {
  ExecutionCounters d;
  d.completed = Grown(completed, e.completed);
  d.completed_with_err = Grown(completed_with_err, e.completed_with_err);
  d.completed_with_num_err = Grown(completed_with_num_err, e.completed_with_num_err);
  d.timed_out = Grown(timed_out, e.timed_out);
  d.incorrect_input = Grown(incorrect_input, e.incorrect_input);
  d.failed_to_queue = Grown(failed_to_queue, e.failed_to_queue);
  d.generic = Grown(generic, e.generic);
  d.numerical = Grown(numerical, e.numerical);
  d.transient = Grown(transient, e.transient);
  d.model = Grown(model, e.model);
  d.runtime = Grown(runtime, e.runtime);
  d.hardware = Grown(hardware, e.hardware);
  return d;
}

ExecutionCounters& ExecutionCounters::operator+=(const ExecutionCounters& d) {
  completed += d.completed;
  completed_with_err += d.completed_with_err;
  completed_with_num_err += d.completed_with_num_err;
  timed_out += d.timed_out;
  incorrect_input += d.incorrect_input;
  failed_to_queue += d.failed_to_queue;
  generic += d.generic;
  numerical += d.numerical;
  transient += d.transient;
  model += d.model;
  runtime += d.runtime;
  hardware += d.hardware;
  return *this;
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
