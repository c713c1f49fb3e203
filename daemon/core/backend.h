// Backend: the device the daemon samples. The simulator is the backend today; a driver-backed one
// would fill the same Snapshot. Read() fills counters, gauges and device_time; the daemon adds the
// host sample, seq and wall time. A backend that can block must be run off the io_context thread
// by its caller. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::simdev {
class Instance;
}

namespace neuronmon::daemon {

class Backend {
 public:
  virtual ~Backend() = default;
  // The static inventory plus the processes running at `now`.
  virtual v1::Inventory Inventory(MonoTime now) = 0;
  virtual Snapshot Read(MonoTime now) = 0;
  // "sim:trn2.48xlarge, scenario healthy-training, seed 1"
  virtual std::string Describe() const = 0;
};

struct BackendOptions {
  std::string device = "sim:trn2.48xlarge";
  std::string scenario = "healthy-training";
  std::uint64_t seed = 1;
  double speed = 1;  // simulated seconds per real second
};

// Builds the backend `options.device` names. Simulated time starts at `start`. Errors name the
// device or scenario problem.
Result<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options, MonoTime start);

}  // namespace neuronmon::daemon
