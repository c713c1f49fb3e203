// CounterTracker turns successive reads of the driver's sysfs tree into the cumulative counters
// of a Snapshot: per logical NeuronCore busy time and FLOPs, per device ECC events, per physical
// core execution outcomes. It accumulates each file's growth since the previous read rather than
// copying the driver's totals, so that
//   - only device-level evidence (another driver version, a device directory replaced, a device
//     that appeared, the device's `reset` state changing) starts a new epoch; a counter that drops
//     alone (a root write zeroed it) is held: it grew by nothing and counts on from its new value;
//   - a read without a value (a torn pe_cntrs, a failed file) is no value, never 0: the next
//     value's growth covers the time since the last one;
//   - busy time can come from different sources per read without a jump.
// Busy time: with live counters (driver 2.30.2+) from `nc_time_in_use`, in µs as AWS's guide
// says (a reading beyond the interval is clamped and counted). With flat counters (older drivers
// add them in only when a process exits) from the tensor engine's live cycle counters
// (`pe_cntrs`): busy = active / all cycles since the last value. Without either, core activity is
// unmeasured (never 0 %). FLOPs come from `flop_count` with live counters only: before
// 2.30.2 they are unmeasured even when busy time is measured. The trn2 firmware's two
// uncorrected-HBM files are one counter (their sum). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "neurondev/sysfs_tree.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"

namespace neuronmon::neurondev {

// Whether `version` ("2.30.2.0") makes status/ and other_info/ counters move while a process
// runs. An unparsable or absent version counts as flat (the safe reading).
bool HasLiveCounters(const std::string& version);

// Adds one outcome counter (`stats/status/<name>`) to `e` under neuron-monitor's categories;
// returns false for names that are not counted (e.g. `failure`, which sums others).
bool AddOutcome(const std::string& name, std::uint64_t count, ExecutionCounters* e);

class CounterTracker {
 public:
  // `lnc`: physical cores per logical core. `live`: status/ and other_info/ move live.
  CounterTracker(int lnc, bool live);

  // Folds in `reading`, taken at `now`. REQUIRES: `now` not earlier than the previous call's.
  void Fold(const TreeReading& reading, MonoTime now);
  // Devices whose busy time and FLOPs another source serves (the runtimes' datastores): from the
  // next Fold their nc_time_in_use, flop_count and pe_cntrs only set the baseline, and so does the
  // first Fold after they leave the set (the sampler re-read those files rarely meanwhile), so a
  // kept value is never counted as one interval's growth.
  void SetQuietDevices(std::set<int> devices) { quiet_ = std::move(devices); }

  std::uint64_t epoch() const { return epoch_; }
  // Cores by global logical index (devices in reading order, `lnc` physical cores each).
  const std::vector<CoreCounters>& cores() const { return cores_; }
  // Devices by driver index N (a gap or a vanished device is `present = false`).
  const std::vector<DeviceCounters>& devices() const { return devices_; }
  // Execution outcomes accumulated on device `device`'s physical cores since the epoch began;
  // zero when the counters are not live.
  ExecutionCounters DeviceExecutions(int device) const;
  // Whether every device of the last read counts corrected ECC errors (health_status/
  // mem_ecc_corrected and sram_ecc_corrected, driver 2.30.2+).
  bool corrected_ecc_measured() const { return corrected_measured_; }
  // Why core activity is unmeasured; empty when every present core has a source.
  const std::string& core_activity_unmeasured() const { return core_unmeasured_; }
  // Why FLOPs are unmeasured (flat counters, or a present core without `flop_count`); empty when
  // every present core counts them. Says nothing of busy time: see core_activity_unmeasured().
  const std::string& flops_unmeasured() const { return flops_unmeasured_; }
  // Readings of `nc_time_in_use` that grew by more than the interval (beyond 5 %), clamped to
  // it; the unit is µs whatever they say.
  std::uint64_t clamped_busy_readings() const { return clamped_busy_readings_; }

 private:
  struct PhysicalCore {
    bool seen = false;
    // The busy-time source's last value and when it was read (a read without one holds them).
    bool busy_seen = false;
    int busy_missed = 0;
    MonoTime busy_time;
    std::uint64_t nc_time = 0, flops = 0, pe_active = 0, pe_all = 0;
    std::vector<NamedCounter> outcomes;  // as last read (sorted by name)
    double busy_ns = 0, flop_count = 0;
    ExecutionCounters executions;
  };
  struct Device {
    bool seen = false;
    std::uint64_t directory_device = 0, directory_inode = 0;
    std::optional<std::uint64_t> device_state;
    bool had_repairable = false;  // mem_ecc_repairable_uncorrected was there once
    bool quiet = false;           // quiet at its last fold
    std::uint64_t mem_ue = 0, sram_ue = 0, mem_ce = 0, sram_ce = 0;
    std::vector<PhysicalCore> cores;
  };

  struct CoreValues;

  // Device-level evidence that the counters restarted: another driver version, a device that
  // appeared, a device directory replaced, a device state that changed. A counter that drops
  // alone is not such evidence (it is held).
  bool FindsRestart(const TreeReading& reading) const;
  void Restart(const TreeReading& reading);
  void FoldDevice(const DeviceReading& d, MonoTime now, Device* state);
  double BusyGrowth(const CoreValues& v, const PhysicalCore& before, double interval_ns);
  void Publish();

  int lnc_;
  bool live_;
  static constexpr double kNcTimeUnitNs = 1000;  // nc_time_in_use counts µs
  std::uint64_t clamped_busy_readings_ = 0;
  std::set<int> quiet_;
  std::uint64_t epoch_ = 0;
  std::string driver_version_;
  bool corrected_measured_ = false;
  std::map<int, Device> state_;
  std::vector<int> device_set_;
  std::vector<CoreCounters> cores_;
  std::vector<DeviceCounters> devices_;
  std::string core_unmeasured_;
  std::string flops_unmeasured_;
};

}  // namespace neuronmon::neurondev
