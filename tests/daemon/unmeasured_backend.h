// Test helper for "unavailable is not zero": a backend standing in for a real host that cannot
// measure some signals. It wraps another backend (the simulator), zeroes the counters of the
// signals it does not measure — as a real host's backend leaves them — and attaches the reasons
// to every snapshot. Header-only: the daemon's, exporter's and neuron-top's tests share it.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "daemon/core/backend.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon::testing {

// The reason a real host gives for each signal it cannot measure.
inline std::string RealHostReason(Signal signal) {
  switch (signal) {
    case Signal::kHbmTraffic:
      return "the Neuron driver has no HBM traffic counter";
    case Signal::kEccCorrected:
      return "the Neuron driver counts only uncorrected ECC errors";
    case Signal::kCoreActivity:
      return "NeuronCore activity needs AWS's neuron-monitor";
    case Signal::kExecutions:
      return "executions need AWS's neuron-monitor";
    case Signal::kLatency:
      return "execution latency needs AWS's neuron-monitor";
    case Signal::kRuntimeCpu:
      return "runtime CPU needs AWS's neuron-monitor";
    case Signal::kCollectives:
      return "no collective counters on this host";
    case Signal::kFlops:
      return "the Neuron driver counts FLOPs only when a process exits";
  }
  return "";
}

// `signals` unmeasured, each with RealHostReason; as on a real host, FLOPs are unmeasured with
// core activity (for its reason) unless listed themselves.
inline Unmeasured RealHost(std::initializer_list<Signal> signals) {
  Unmeasured u;
  for (Signal s : signals) u.Set(s, RealHostReason(s));
  if (u.Measured(Signal::kFlops)) u.Set(Signal::kFlops, u.Reason(Signal::kCoreActivity));
  return u;
}

// Every signal unmeasured.
inline Unmeasured NothingButMemory() {
  return RealHost({Signal::kHbmTraffic, Signal::kEccCorrected, Signal::kCoreActivity,
                   Signal::kExecutions, Signal::kLatency, Signal::kRuntimeCpu, Signal::kCollectives,
                   Signal::kFlops});
}

// Zeroes in `snapshot` the counters of every signal `u` marks unmeasured and attaches `u`.
inline void MarkUnmeasured(Snapshot& snapshot, std::shared_ptr<const Unmeasured> u) {
  for (CoreCounters& c : snapshot.cores) {
    if (!u->Measured(Signal::kFlops)) c.flops = c.effective_flops = 0;
    if (u->Measured(Signal::kCoreActivity)) continue;
    c.busy_ns = 0;
    for (std::uint64_t& p : c.physical_busy_ns) p = 0;
  }
  for (DeviceCounters& d : snapshot.devices) {
    if (!u->Measured(Signal::kHbmTraffic)) d.hbm_read_bytes = d.hbm_write_bytes = 0;
    if (!u->Measured(Signal::kEccCorrected)) d.ecc.mem_corrected = d.ecc.sram_corrected = 0;
  }
  for (RuntimeSample& r : snapshot.runtimes) {
    if (!u->Measured(Signal::kExecutions)) r.executions = ExecutionCounters{};
    if (!u->Measured(Signal::kLatency)) r.total_latency = r.device_latency = LatencyHistogram{};
    if (!u->Measured(Signal::kRuntimeCpu)) r.cpu_user_ns = r.cpu_system_ns = 0;
    if (!u->Measured(Signal::kCollectives)) {
      for (CollectiveCounters& c : r.collectives) {
        c.count = c.bytes = c.busy_ns = 0;
        c.latency = LatencyHistogram{};
      }
    }
  }
  snapshot.unmeasured = std::move(u);
}

class UnmeasuredBackend final : public Backend {
 public:
  UnmeasuredBackend(std::unique_ptr<Backend> inner, Unmeasured unmeasured)
      : inner_(std::move(inner)),
        unmeasured_(std::make_shared<Unmeasured>(std::move(unmeasured))) {}

  v1::Inventory Inventory(MonoTime now) override { return inner_->Inventory(now); }
  Snapshot Read(MonoTime now) override {
    Snapshot s = inner_->Read(now);
    if (measuring_all_) return s;
    MarkUnmeasured(s, unmeasured_);
    return s;
  }
  std::string Describe() const override { return inner_->Describe() + ", some signals unmeasured"; }

  // From the next Read on, every signal is measured (false) or `unmeasured` is not (true).
  void MeasureAll(bool all) { measuring_all_ = all; }

 private:
  std::unique_ptr<Backend> inner_;
  std::shared_ptr<const Unmeasured> unmeasured_;
  bool measuring_all_ = false;
};

// sim:`device` running `scenario` (seed 1) from `start`, with `unmeasured` not measured.
inline std::unique_ptr<UnmeasuredBackend> UnmeasuredSim(const std::string& device,
                                                        const std::string& scenario,
                                                        Unmeasured unmeasured, MonoTime start) {
  auto backend = MakeBackend({device, scenario, 1, 1}, start);
  if (!backend.ok()) return nullptr;
  return std::make_unique<UnmeasuredBackend>(std::move(*backend), std::move(unmeasured));
}

}  // namespace neuronmon::daemon::testing
