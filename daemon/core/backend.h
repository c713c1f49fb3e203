// Backend: the device the daemon samples — the simulator (simdev) or a real Neuron host
// (neurondev), filling the same Snapshot — or a recording replayed (archive/replay.h, which the
// daemon's factory adds: this one knows devices only). Read() fills
// counters, gauges and device_time; the daemon adds the host sample, seq and wall time (a replay
// sets the recorded host sample and wall time itself). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "daemon/core/stats.h"
#include "neurondev/host.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::simdev {
class Instance;
struct Scenario;
}  // namespace neuronmon::simdev

namespace neuronmon::daemon {

class Backend {
 public:
  virtual ~Backend() = default;
  // The static inventory plus the processes running at `now`.
  virtual v1::Inventory Inventory(MonoTime now) = 0;
  virtual Snapshot Read(MonoTime now) = 0;
  // "sim:trn2.48xlarge, scenario healthy-training, seed 1"
  virtual std::string Describe() const = 0;
  // Work that may follow a read without delaying its result (a real host's process scan step),
  // run after the reading is handed over and before the next Read.
  virtual void AfterRead() {}
  // What a real host's sources left out or refused; nothing for a simulated or replayed device.
  virtual std::optional<SourceStats> Sources() const { return std::nullopt; }
};

// The simulated instance "auto" falls back to on a machine without Neuron devices.
inline constexpr char kAutoSimDevice[] = "sim:trn2.48xlarge";

struct BackendOptions {
  // "auto": the real devices when the Neuron driver shows some under `host.sysfs_root`, else
  // kAutoSimDevice; "neuron": the real devices; "sim:<preset>[:lnc=N]": the simulator.
  std::string device = "auto";
  std::string scenario = "healthy-training";
  std::uint64_t seed = 1;
  double speed = 1;                  // simulated seconds per real second
  std::int64_t node = 0;             // a cluster simulation: this is node `node` ...
  std::int64_t nodes = 0;            // ... of `nodes` (0: as many as the scenario says)
  neurondev::HostOptions host = {};  // a real host: its roots, sources and their limits
  // Non-empty: replay this recording (from `replay_from`, at `speed`) instead of any device; the
  // daemon's factory (server/daemon.h, MakeDaemonBackend) opens it, MakeBackend does not.
  std::string replay = "";
  std::string replay_from = "";
  bool operator==(const BackendOptions&) const = default;
};

// Makes `scenario` node `node` of a cluster of `nodes` (0: the scenario's own count).
void PlaceNode(simdev::Scenario& scenario, std::int64_t node, std::int64_t nodes);

// Builds the backend `options.device` names (`options.replay` is not its business). Simulated time
// starts at `start`. Errors name the device or scenario problem ("neuron" on a machine without
// devices says where it looked). Describe() of an "auto" choice says why it chose.
Result<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options, MonoTime start);

}  // namespace neuronmon::daemon
