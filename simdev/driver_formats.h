// What the Neuron driver's files hold, as DriverTreeWriter prints them (docs/driver-tree.md
// specifies each file): the 24 execution outcomes and the memory categories the driver lists, a
// counter's line, the power file, the tensor engine's counters, the device architectures, a
// kernel-log record, and the /proc files' command line. Constant tables and pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon::simdev {

// Memory categories the driver lists that the simulator never fills (they read 0).
inline constexpr const char* kExtraHostCategories[] = {"driver_memory", "notifications",
                                                       "dma_rings", "uncategorized"};
inline constexpr const char* kExtraDeviceCategories[] = {
    "driver_memory", "collectives", "nonshared_scratchpad",
    "notifications", "dma_rings",   "uncategorized"};

// The driver's 24 execution outcomes (neuron_sysfs_metrics.c order) and the field each shows.
struct Outcome {
  const char* name;
  std::uint64_t ExecutionCounters::*field;  // null: the simulator has no such count
};
inline constexpr Outcome kOutcomes[] = {
    {"success", &ExecutionCounters::completed},
    {"failure", nullptr},
    {"timeout", &ExecutionCounters::timed_out},
    {"exec_bad_input", &ExecutionCounters::incorrect_input},
    {"hw_error", &ExecutionCounters::hardware},
    {"execute_completed_with_error", &ExecutionCounters::completed_with_err},
    {"execute_completed_with_num_error", &ExecutionCounters::completed_with_num_err},
    {"generic_error", &ExecutionCounters::generic},
    {"resource_error", &ExecutionCounters::runtime},
    {"resource_nc_error", nullptr},
    {"execute_failed_to_queue", &ExecutionCounters::failed_to_queue},
    {"invalid_error", nullptr},
    {"unsupported_neff_version", &ExecutionCounters::model},
    {"oob_error", nullptr},
    {"hw_collectives_error", nullptr},
    {"hw_hbm_ue_error", nullptr},
    {"hw_nc_ue_error", nullptr},
    {"hw_dma_abort_error", nullptr},
    {"execute_sw_nq_overflow", nullptr},
    {"execute_sw_semaphore_error", nullptr},
    {"execute_sw_event_error", nullptr},
    {"execute_sw_psum_collision", nullptr},
    {"execute_sw_sequencer_fatal", nullptr},
    {"hw_repairable_hbm_ue_error", nullptr}};

inline constexpr std::size_t kCommBytes = 15;  // TASK_COMM_LEN - 1

// A device's info/architecture/ strings.
struct Arch {
  const char* arch_type;
  const char* instance_type;
  const char* device_name;
};
// The architecture of `device` (named by the hardware when it has no name); nullptr when unknown.
const Arch* ArchOf(const v1::Device& device, const v1::HardwareInfo& hardware);

// A counter's file: the value and a newline.
std::string Line(std::uint64_t value);
// `value` rounded to a count; 0 when not positive.
std::uint64_t RoundToCount(double value);
// The driver's power file: "STATUS,epoch,min,max,avg" in percent with two decimals.
std::string PowerLine(const DevicePower& power, std::uint64_t wall_seconds);
// A physical core's busy time: its own counter when the logical core has sub-cores.
std::uint64_t PhysicalBusyNs(const CoreCounters& core, std::uint32_t lnc, std::uint32_t j);
// `bytes` of a logical core split over its `lnc` physical cores, the remainder on the first.
std::uint64_t Share(std::uint64_t bytes, std::uint32_t lnc, std::uint32_t j);
// stats/tensor_engine/pe_cntrs of a core busy for `busy_ns` of `device_time`.
std::string PeCounters(std::uint64_t busy_ns, Nanos device_time);
// One /dev/kmsg record of a NEURON_HW_ERR event of `type` on device `n` (serial number `serial`),
// at `us` since boot, as the runtime prints it through the driver: kernel facility, level err, no
// prefix.
std::string KernelLogRecord(std::uint64_t seq, std::int64_t us, std::size_t n,
                            const std::string& serial, const std::string& type);
// A command line's arguments, split at spaces.
std::vector<std::string> SplitArgs(const std::string& command);

}  // namespace neuronmon::simdev
