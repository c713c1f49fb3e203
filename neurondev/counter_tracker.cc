#include "neurondev/counter_tracker.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "proto/common/datastore_layout.h"
#include "proto/common/driver_version.h"

namespace neuronmon::neurondev {
namespace {

// Growth of a cumulative counter. One that drops alone (a root write zeroed it, a torn read) is
// held: it grew by nothing, and its new value is the baseline from then on. Only device-level
// evidence restarts the counts (CounterTracker::FindsRestart).
std::uint64_t Grown(std::uint64_t now, std::uint64_t before) {
  return now >= before ? now - before : 0;
}

// The device's uncorrected HBM errors: on trn2 the firmware shows them in mem_ecc_uncorrected or
// in mem_ecc_repairable_uncorrected by their repair state, so one total moves between the files;
// only their sum is a counter. Unknown when a file that was there could not be read.
std::optional<std::uint64_t> MemoryUncorrected(const DeviceReading& d, bool had_repairable) {
  if (!d.mem_ecc_uncorrected || (had_repairable && !d.mem_ecc_repairable_uncorrected))
    return std::nullopt;
  return *d.mem_ecc_uncorrected + d.mem_ecc_repairable_uncorrected.value_or(0);
}

std::optional<std::uint64_t> Find(const std::vector<NamedCounter>& counters,
                                  std::string_view name) {
  for (const NamedCounter& c : counters) {
    if (c.name == name) return c.total;
  }
  return std::nullopt;
}

// The counter named `name` in `before`, read in the same order as now: at `i` unless the set of
// names changed.
const NamedCounter* Previous(const std::vector<NamedCounter>& before, std::size_t i,
                             const std::string& name) {
  if (i < before.size() && before[i].name == name) return &before[i];
  for (const NamedCounter& c : before) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

// The activity counters of one core reading, looked up once: `nc_time_in_use`, `flop_count`,
// and the tensor engine's active and all cycles summed over its row groups.
struct CounterTracker::CoreValues {
  explicit CoreValues(const CoreReading& c)
      : nc_time(Find(c.other_info, "nc_time_in_use")), flops(Find(c.other_info, "flop_count")) {
    for (const PeCounters& row : c.pe_counters) {
      pe_present = true;
      pe_active += row.mm_active + row.wl_active;
      pe_all += row.mm_active + row.wl_active + row.idle;
    }
  }
  std::optional<std::uint64_t> nc_time, flops;
  bool pe_present = false;
  std::uint64_t pe_active = 0, pe_all = 0;
};

namespace {

// The driver's outcome names (stats/status/<name>) under neuron-monitor's execution summary and
// error categories.
struct OutcomeField {
  const char* name;
  std::uint64_t ExecutionCounters::*field;
};
constexpr std::array<OutcomeField, 23> kOutcomeFields = {{
    {"success", &ExecutionCounters::completed},
    {"execute_completed_with_error", &ExecutionCounters::completed_with_err},
    {"execute_completed_with_num_error", &ExecutionCounters::completed_with_num_err},
    {"timeout", &ExecutionCounters::timed_out},
    {"exec_bad_input", &ExecutionCounters::incorrect_input},
    {"execute_failed_to_queue", &ExecutionCounters::failed_to_queue},
    {"generic_error", &ExecutionCounters::generic},
    {"resource_error", &ExecutionCounters::runtime},
    {"resource_nc_error", &ExecutionCounters::runtime},
    {"invalid_error", &ExecutionCounters::runtime},
    {"oob_error", &ExecutionCounters::runtime},
    {"execute_sw_nq_overflow", &ExecutionCounters::runtime},
    {"execute_sw_semaphore_error", &ExecutionCounters::runtime},
    {"execute_sw_event_error", &ExecutionCounters::runtime},
    {"execute_sw_psum_collision", &ExecutionCounters::runtime},
    {"execute_sw_sequencer_fatal", &ExecutionCounters::runtime},
    {"unsupported_neff_version", &ExecutionCounters::model},
    {"hw_error", &ExecutionCounters::hardware},
    {"hw_collectives_error", &ExecutionCounters::hardware},
    {"hw_hbm_ue_error", &ExecutionCounters::hardware},
    {"hw_nc_ue_error", &ExecutionCounters::hardware},
    {"hw_dma_abort_error", &ExecutionCounters::hardware},
    {"hw_repairable_hbm_ue_error", &ExecutionCounters::hardware},
}};

}  // namespace

bool HasLiveCounters(const std::string& version) {
  const std::optional<DriverVersion> v = ParseDriverVersion(version);
  return v && v->AtLeast({2, 30, 2});
}

bool AddOutcome(const std::string& name, std::uint64_t count, ExecutionCounters* e) {
  for (const OutcomeField& f : kOutcomeFields) {
    if (name == f.name) {
      e->*f.field += count;
      // neuron-monitor counts an execution that completed with a numerical error in both.
      if (f.field == &ExecutionCounters::completed_with_num_err) e->numerical += count;
      return true;
    }
  }
  return false;
}

namespace {

void FillHealthCounters(const DeviceReading& d, DeviceCounters& out) {
  // The driver's own totals: health is judged on everything since it loaded, not since the
  // daemon started (a drop is a reset, which the epoch already tells).
  HardwareErrors& e = out.errors;
  e = {};
  e.mem_ecc_uncorrected = d.mem_ecc_uncorrected.value_or(0);
  e.sram_ecc_uncorrected = d.sram_ecc_uncorrected.value_or(0);
  e.mem_ecc_repairable = d.mem_ecc_repairable_uncorrected.value_or(0);
  e.events = d.hw_error_event.value_or(0);
  for (const CoreReading& c : d.cores) {
    for (const NamedCounter& o : c.outcomes) {
      for (const datastore::HardwareErrorCounter& h : datastore::kHardwareErrorCounters) {
        if (o.name == h.sysfs_name) e.*h.field += o.total;
      }
    }
  }
  std::string missing;
  out.errors_missing = 0;
  const auto lacks = [&](bool absent, const char* what, std::uint64_t HardwareErrors::*member) {
    if (!absent) return;
    missing += (missing.empty() ? "" : ", ") + std::string(what);
    for (std::size_t i = 0; i < kHardwareErrorFields.size(); ++i) {
      if (kHardwareErrorFields[i].member == member) out.errors_missing |= 1u << i;
    }
  };
  lacks(!d.mem_ecc_uncorrected, "mem_ecc_uncorrected", &HardwareErrors::mem_ecc_uncorrected);
  lacks(!d.sram_ecc_uncorrected, "sram_ecc_uncorrected", &HardwareErrors::sram_ecc_uncorrected);
  lacks(!d.mem_ecc_repairable_uncorrected, "mem_ecc_repairable_uncorrected",
        &HardwareErrors::mem_ecc_repairable);
  lacks(!d.hw_error_event, "health_status/hw_error_event (driver 2.28+)", &HardwareErrors::events);
  out.errors_unavailable = missing.empty() ? "" : "the driver does not expose " + missing;
  out.unhealthy_components = d.unhealthy_components.value_or(std::vector<std::string>{});
  out.power = DevicePower{};
  if (!d.power) {
    out.power.unavailable = "the driver exposes no stats/power/utilization";
  } else if (d.power->status == PowerReading::Status::kNoData) {
    out.power.unavailable = "the driver has no reading yet (POWER_STATUS_NO_DATA)";
  } else if (d.power->status == PowerReading::Status::kInvalid) {
    out.power.unavailable = "the driver's reading is invalid (POWER_STATUS_INVALID)";
  } else {
    out.power.unavailable.clear();
    out.power.average_percent = d.power->avg_percent;
    out.power.min_percent = d.power->min_percent;
    out.power.max_percent = d.power->max_percent;
    // (A time beyond year 2286 is not one.)
    out.power.sampled_unix_ns =
        d.power->epoch_seconds < 10'000'000'000ULL
            ? static_cast<std::int64_t>(d.power->epoch_seconds) * 1'000'000'000
            : 0;
  }
}

// The device's memory by the driver's categories, summed over its cores (`total` is the usage,
// `peak` the high-water mark; a name not in kDeviceMemoryCategories counts as uncategorized).
void FillDeviceMemory(const DeviceReading& d, DeviceCounters& out) {
  out.memory = DeviceMemory{};
  for (const CoreReading& c : d.cores) {
    for (const MemoryCategory& m : c.device_memory) {
      const std::size_t i = DeviceMemoryCategory(m.name);
      out.memory.measured = true;
      out.memory.used[i] += m.total;
      out.memory.peak[i] += std::max(m.peak.value_or(m.total), m.total);
    }
  }
}

}  // namespace

CounterTracker::CounterTracker(int lnc, bool live) : lnc_(std::max(1, lnc)), live_(live) {}

bool CounterTracker::FindsRestart(const TreeReading& reading) const {
  if (reading.driver_version.value_or("") != driver_version_ && !state_.empty()) return true;
  for (const DeviceReading& d : reading.devices) {
    auto it = state_.find(d.index);
    if (it == state_.end()) {
      if (!state_.empty()) return true;  // a device appeared: the driver reloaded or reset it
      continue;
    }
    const Device& s = it->second;
    // The directory was replaced (the module reloaded, the device was removed and added).
    if (d.directory_inode != 0 && s.directory_inode != 0 &&
        (d.directory_inode != s.directory_inode || d.directory_device != s.directory_device)) {
      return true;
    }
    // The device went through a reset (its state changed between two reads).
    if (d.device_state && s.device_state && *d.device_state != *s.device_state) return true;
  }
  return false;
}

void CounterTracker::Restart(const TreeReading& reading) {
  ++epoch_;
  for (auto& [index, device] : state_) {
    const int n = index;  // (a structured binding cannot be captured before C++20's clang 16)
    const auto now = std::find_if(reading.devices.begin(), reading.devices.end(),
                                  [n](const DeviceReading& d) { return d.index == n; });
    // A replaced directory is a driver that counts again from 0: what it shows now is what it
    // counted since. A reset keeps the driver's counts: they go on from where they were.
    const bool recounted = now == reading.devices.end() ||
                           now->directory_inode != device.directory_inode ||
                           now->directory_device != device.directory_device ||
                           reading.driver_version.value_or("") != driver_version_;
    if (recounted) device.mem_ue = device.sram_ue = device.mem_ce = device.sram_ce = 0;
    for (PhysicalCore& p : device.cores) {
      p.busy_ns = 0;
      p.flop_count = 0;
      p.executions = {};
      if (recounted) {
        p.nc_time = p.flops = p.pe_active = p.pe_all = 0;
        for (NamedCounter& o : p.outcomes) o.total = 0;
      }
    }
  }
  for (DeviceCounters& d : devices_) d.ecc = {};
}

double CounterTracker::BusyGrowth(const CoreValues& v, const PhysicalCore& before,
                                  double interval_ns) {
  if (live_ && v.nc_time) {
    // Microseconds, as AWS's guide says. More than the interval (a torn or foreign reading) is
    // clamped to it and counted, never used to guess another unit.
    const double busy = static_cast<double>(Grown(*v.nc_time, before.nc_time)) * kNcTimeUnitNs;
    if (busy > interval_ns * 1.05 && interval_ns > 0) ++clamped_busy_readings_;
    return std::min(interval_ns, busy);
  }
  const std::uint64_t all = Grown(v.pe_all, before.pe_all);
  return all ? interval_ns *
                   static_cast<double>(std::min(all, Grown(v.pe_active, before.pe_active))) /
                   static_cast<double>(all)
             : 0;
}

void CounterTracker::FoldDevice(const DeviceReading& d, MonoTime now, Device* s) {
  DeviceCounters& out = devices_[static_cast<std::size_t>(d.index)];
  out.present = true;
  const std::optional<std::uint64_t> mem_ue = MemoryUncorrected(d, s->had_repairable);
  if (s->seen) {
    if (mem_ue) out.ecc.mem_uncorrected += Grown(*mem_ue, s->mem_ue);
    if (d.sram_ecc_uncorrected)
      out.ecc.sram_uncorrected += Grown(*d.sram_ecc_uncorrected, s->sram_ue);
    if (d.mem_ecc_corrected) out.ecc.mem_corrected += Grown(*d.mem_ecc_corrected, s->mem_ce);
    if (d.sram_ecc_corrected) out.ecc.sram_corrected += Grown(*d.sram_ecc_corrected, s->sram_ce);
  }
  FillHealthCounters(d, out);
  FillDeviceMemory(d, out);
  s->seen = true;
  s->directory_device = d.directory_device;
  s->directory_inode = d.directory_inode;
  if (d.device_state) s->device_state = d.device_state;
  s->had_repairable = s->had_repairable || d.mem_ecc_repairable_uncorrected.has_value();
  if (mem_ue) s->mem_ue = *mem_ue;
  s->sram_ue = d.sram_ecc_uncorrected.value_or(s->sram_ue);
  s->mem_ce = d.mem_ecc_corrected.value_or(s->mem_ce);
  s->sram_ce = d.sram_ecc_corrected.value_or(s->sram_ce);
  if (!d.mem_ecc_corrected || !d.sram_ecc_corrected) corrected_measured_ = false;
  const std::size_t physical = std::max<std::size_t>(d.core_count.value_or(0), d.cores.size());
  if (s->cores.size() < physical) s->cores.resize(physical);
  // A quiet device's activity files were not re-read: their values set the baseline only.
  const bool quiet = quiet_.contains(d.index);
  const bool counting = !quiet && !s->quiet;
  s->quiet = quiet;
  for (const CoreReading& c : d.cores) {
    if (c.index >= s->cores.size()) continue;
    PhysicalCore& p = s->cores[c.index];
    const CoreValues v(c);
    // A core's busy time comes from nc_time_in_use (live drivers) or the tensor engine's cycles.
    // A read without it (a torn pe_cntrs, a file that failed) is no value: the next one covers
    // the time since the last value. Two in a row: unmeasured.
    const bool busy_source = (live_ && v.nc_time) || v.pe_present;
    if (!busy_source) {
      if (!p.busy_seen || ++p.busy_missed >= 2) core_unmeasured_ = "no busy-time source";
    } else {
      if (p.seen && p.busy_seen && counting) {
        const double interval_ns =
            static_cast<double>(std::max<std::int64_t>(0, (now - p.busy_time).count()));
        p.busy_ns += BusyGrowth(v, p, interval_ns);
      }
      p.busy_seen = true;
      p.busy_missed = 0;
      p.busy_time = now;
      if (v.nc_time) p.nc_time = *v.nc_time;
      if (v.pe_present) {
        p.pe_active = v.pe_active;
        p.pe_all = v.pe_all;
      }
    }
    if (v.flops) {
      if (p.seen && live_ && counting) {
        p.flop_count += static_cast<double>(Grown(*v.flops, p.flops));
      }
      p.flops = *v.flops;
    }
    for (std::size_t i = 0; p.seen && live_ && i < c.outcomes.size(); ++i) {
      const NamedCounter& o = c.outcomes[i];
      const NamedCounter* before = Previous(p.outcomes, i, o.name);
      // Most outcomes never move: look the name up only for those that did.
      if (before != nullptr && o.total != before->total) {
        AddOutcome(o.name, Grown(o.total, before->total), &p.executions);
      }
    }
    if (!v.flops) flops_unmeasured_ = "no flop_count";
    p.seen = true;
    p.outcomes = c.outcomes;
  }
}

void CounterTracker::Fold(const TreeReading& reading, MonoTime now) {
  if (FindsRestart(reading)) Restart(reading);
  driver_version_ = reading.driver_version.value_or("");
  int max_index = -1;
  for (const DeviceReading& d : reading.devices) max_index = std::max(max_index, d.index);
  for (const auto& [index, device] : state_) max_index = std::max(max_index, index);
  devices_.resize(static_cast<std::size_t>(max_index + 1));
  for (DeviceCounters& d : devices_) d.present = false;
  core_unmeasured_.clear();
  corrected_measured_ = !reading.devices.empty();
  flops_unmeasured_.clear();
  for (const DeviceReading& d : reading.devices) FoldDevice(d, now, &state_[d.index]);
  if (!core_unmeasured_.empty()) {
    core_unmeasured_ = live_ ? "the Neuron driver exposes neither nc_time_in_use nor pe_cntrs"
                             : "the Neuron driver (before 2.30.2) updates nc_time_in_use only when "
                               "a process exits, and exposes no pe_cntrs";
  }
  if (!live_) {
    flops_unmeasured_ =
        "the Neuron driver (before 2.30.2) adds flop_count in only when a process exits";
  } else if (!flops_unmeasured_.empty()) {
    flops_unmeasured_ = "the Neuron driver exposes no flop_count";
  }
  Publish();
}

void CounterTracker::Publish() {
  cores_.clear();
  for (const auto& [index, device] : state_) {
    const std::size_t logical = device.cores.size() / static_cast<std::size_t>(lnc_);
    for (std::size_t l = 0; l < logical; ++l) {
      // A logical core is as busy as its physical cores on average.
      CoreCounters c;
      double busy = 0;
      for (int k = 0; k < lnc_; ++k) {
        const PhysicalCore& p =
            device.cores[l * static_cast<std::size_t>(lnc_) + static_cast<std::size_t>(k)];
        busy += p.busy_ns;
        c.flops += p.flop_count;
        if (lnc_ > 1) c.physical_busy_ns.push_back(static_cast<std::uint64_t>(p.busy_ns));
      }
      c.busy_ns = static_cast<std::uint64_t>(busy / lnc_);
      cores_.push_back(std::move(c));
    }
  }
}

ExecutionCounters CounterTracker::DeviceExecutions(int device) const {
  ExecutionCounters sum;
  auto it = state_.find(device);
  if (it == state_.end()) return sum;
  for (const PhysicalCore& p : it->second.cores) sum += p.executions;
  return sum;
}

}  // namespace neuronmon::neurondev
