// Instance: a simulated Trainium/Inferentia instance running a scenario. Read(t) returns the
// device's Snapshot at simulated time t (since the simulation started); the same preset, scenario,
// seed and t always give the same Snapshot, however the instance was read before. Reads in
// increasing t are incremental and cheap even across long jumps; a read earlier than the previous
// one replays the simulation from its start. Pure: no threads, no I/O, no clocks.
// Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"
#include "simdev/fault_plan.h"
#include "simdev/job.h"
#include "simdev/preset.h"
#include "simdev/scenario.h"

namespace neuronmon::simdev {

// What the scenario says a runtime's diagnosis should be at a time.
struct ExpectedVerdict {
  std::uint32_t pid = 0;
  std::string tag;
  std::string diagnosis;  // empty: the scenario declares nothing for this runtime now
};

class Instance {
 public:
  // Fails when the scenario does not fit the instance (devices out of range, a model larger than
  // a core's HBM, ...); errors name the scenario and the runtime.
  static Result<std::unique_ptr<Instance>> Create(InstanceSpec spec, Scenario scenario,
                                                  std::uint64_t seed);
  // The same, from a device spec ("sim:trn2.48xlarge") and a scenario name or file.
  static Result<std::unique_ptr<Instance>> Named(std::string_view device, std::string_view scenario,
                                                 std::uint64_t seed);
  ~Instance();

  Snapshot Read(Nanos t);

  const InstanceSpec& spec() const { return spec_; }
  const Scenario& scenario() const { return scenario_; }
  // Instance, hardware and device inventory, with the processes alive at `t`.
  v1::Inventory Inventory(Nanos t) const;
  // Scenario expectations for the runtimes alive at `t`, and for the instance (pid 0).
  std::vector<ExpectedVerdict> Expected(Nanos t) const;

 private:
  struct Worker;
  struct JobState;
  struct CoreAccum;

  struct Totals;
  using Collectives = std::array<CollectiveCounters, kCollectiveKinds>;

  // Construction and the jobs' progress (instance.cc).
  Instance(InstanceSpec spec, Scenario scenario, std::uint64_t seed);
  Status Build();
  // Adds the workers and the job of scenario_.runtimes[r], with pids not yet in `pids`.
  Status AddRuntime(std::size_t r, std::set<std::uint32_t>& pids);
  Worker NewWorker(const RuntimeSpec& rs, std::size_t rank, std::uint32_t pid,
                   const WorkerLayout& layout, const JobState& job, double total_cores) const;
  // Whether `w` fits: its model in a core's HBM, and no core held by another worker meanwhile.
  Status CheckWorker(const Worker& w, const std::string& where) const;
  void Restart();
  void Advance(Nanos t);
  void Commit(JobState& job);
  void Integrate(const Episode& e, const Worker& w, Nanos until, std::vector<CoreAccum>& cores,
                 double* cpu_user_ns, double* cpu_system_ns) const;
  bool Alive(const Worker& w, Nanos t) const;

  // Reads (instance_read.cc).
  Snapshot RawRead(Nanos t);
  // The committed counters plus the current steps up to `t`.
  Totals TotalsAt(Nanos t) const;
  void FillCores(Snapshot& s, const std::vector<CoreAccum>& cores) const;
  void FillDevices(Snapshot& s, const std::vector<CoreAccum>& cores, Nanos t) const;
  // Worker i's runtime at `t`; `s` holds the devices at `t`. Takes its collectives from `totals`.
  RuntimeSample RuntimeAt(std::size_t i, Nanos t, Totals& totals, const Snapshot& s) const;
  // The counts `w`'s devices' and its own faults added since it started.
  void AddFaultCounts(const Worker& w, Nanos t, const Snapshot& s, RuntimeSample& r) const;
  // Drops the loads of power intervals that ended; the interval ends at `t` not yet captured.
  std::vector<Nanos> PowerEndsToCapture(Nanos t);
  // RawRead(at), keeping the devices' loads at `at` for FillPower.
  Snapshot CaptureLoad(Nanos at);
  // Fills each device's power reading at `t` from the loads cached at its interval's ends.
  void FillPower(Snapshot& s, Nanos t) const;
  // Fills each device's memory by category at `t` (the runtimes' memory on its cores) and the
  // high-water marks since the last reset: per core, the most any runtime held there, at its
  // latest moment (a runtime's memory only grows while it runs), summed over the device's cores.
  void FillDeviceMemory(Snapshot& s, Nanos t) const;
  // A runtime's memory at `t` while it loads (before run_start), with its faults applied.
  std::shared_ptr<const RuntimeMemory> LoadingMemory(const Worker& w, Nanos t) const;
  // A runtime's memory at `t` with its `memory_growth` faults applied.
  std::shared_ptr<const RuntimeMemory> Grown(const Worker& w,
                                             std::shared_ptr<const RuntimeMemory> memory,
                                             Nanos t) const;

  InstanceSpec spec_;
  Scenario scenario_;
  std::uint64_t seed_;
  FaultPlan faults_;
  v1::Inventory inventory_;
  std::vector<Worker> workers_;
  std::vector<JobState> jobs_;
  std::vector<CoreAccum> cores_;
  std::optional<Nanos> last_read_;
  // Counters at each device reset already passed, subtracted from later reads.
  std::vector<Snapshot> baselines_;
  // Per device, busy time of its cores and HBM bytes moved (raw, never reset) at the ends of power
  // intervals, by interval end in ns: the driver's power reading covers the last whole minute.
  struct DeviceLoad {
    std::vector<double> busy_ns;
    std::vector<double> hbm_bytes;
  };
  std::map<std::int64_t, DeviceLoad> loads_;
};

}  // namespace neuronmon::simdev
