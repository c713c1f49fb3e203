// FaultPlan: the scenario's faults as pure functions of simulated time — which devices are lost
// or slow at `t`, and how many ECC, NaN and timeout events happened up to `t` (monotonic in `t`).
// Thread-safe (immutable after construction).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/common/snapshot.h"
#include "simdev/scenario.h"

namespace neuronmon::simdev {

// A hang in effect: which worker of which node stopped joining, and since when.
struct Hang {
  int node = 0;
  int rank = 0;
  Nanos since{0};
};

// Every query but SlowdownOn and HangOf is about this daemon's own node (`node`): a fault that
// names another node does not happen here.
class FaultPlan {
 public:
  FaultPlan() = default;
  FaultPlan(std::vector<FaultSpec> faults, std::uint64_t seed, int node = 0);

  bool DeviceLost(int device, Nanos t) const;
  // When a device lost at `t` answers again; nullopt when it never does.
  std::optional<Nanos> DeviceBackAt(int device, Nanos t) const;
  // Product of the slowdown factors active on `device` at `t` (1 when none).
  double Slowdown(int device, Nanos t) const { return SlowdownOn(node_, device, t); }
  // The same on any node of the cluster.
  double SlowdownOn(int node, int device, Nanos t) const;
  // Product of the factors of `type` (kInputSlowdown, kNetworkSlowdown, kHbmTraffic) active on
  // runtime `name` at `t` on this node (1 when none).
  double RuntimeFactor(FaultType type, const std::string& name, Nanos t) const;
  // Whether runtime `name` is stalled (a `stall` fault) at `t` on this node.
  bool Stalled(const std::string& name, Nanos t) const;
  // The earliest hang of runtime `name` in effect at `t`, on any node.
  std::optional<Hang> HangOf(const std::string& name, Nanos t) const;
  // ECC events on `device` in [0, t].
  EccCounters Ecc(int device, Nanos t) const;
  // Hardware errors of `hardware_error` faults and repairable ECC errors on `device` in [0, t].
  HardwareErrors HwErrors(int device, Nanos t) const;
  // Bytes of device memory runtime `name` has grown by at `t`, per device it holds (before any
  // limit), and the smallest `limit` of its growing faults (1 when none).
  double MemoryGrowth(const std::string& name, Nanos t, double* limit) const;
  // NaN-error and timeout events of runtime `name` in [0, t].
  std::uint64_t NanErrors(const std::string& name, Nanos t) const;
  std::uint64_t Timeouts(const std::string& name, Nanos t) const;
  // The earliest scripted exit of runtime `name`.
  std::optional<Nanos> RuntimeExit(const std::string& name) const;
  // Device reset times, ascending.
  const std::vector<Nanos>& Resets() const { return resets_; }

 private:
  std::uint64_t Events(const FaultSpec& f, std::size_t index, Nanos t) const;
  std::uint64_t RuntimeEvents(FaultType type, const std::string& name, Nanos t) const;
  bool Here(const FaultSpec& f) const { return f.node < 0 || f.node == node_; }

  std::vector<FaultSpec> faults_;
  std::vector<Nanos> resets_;
  std::uint64_t seed_ = 0;
  int node_ = 0;
};

}  // namespace neuronmon::simdev
