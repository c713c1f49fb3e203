// What one read of the Neuron driver's sysfs tree gives, whether by SysfsTree (sysfs_tree.h) or
// SysfsSampler (sysfs_sampler.h): the driver's version and, per device, its constant files, host
// and device memory by category, ECC and health counters, power, and per physical core its
// counters — with the files that were absent and those that could not be read — and the limits
// one read keeps to. Plain values; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace neuronmon::neurondev {

// A `{total,peak}` pair of one memory category (bytes). `total` is the current usage: the driver
// adds every allocation to it and subtracts every free; `present` holds only the last change and is
// not read.
struct MemoryCategory {
  std::string name;  // "tensors", "model_code", ...
  std::uint64_t total = 0;
  std::optional<std::uint64_t> peak;
};

// A cumulative counter of one physical core (`stats/status/<name>/total` or
// `stats/other_info/<name>/total`).
struct NamedCounter {
  std::string name;
  std::uint64_t total = 0;
};

struct PowerReading {
  enum class Status { kValid, kNoData, kInvalid };
  Status status = Status::kNoData;
  std::uint64_t epoch_seconds = 0;  // when the driver last refreshed it (once a minute)
  double min_percent = 0;           // of the device's maximum power, over the last minute
  double max_percent = 0;
  double avg_percent = 0;
};

// One row of `stats/tensor_engine/pe_cntrs` (driver 2.23+): cumulative cycle counters of one
// row group of the tensor engine, read live from the hardware — the only per-core activity signal
// in sysfs that moves while a process runs on drivers before 2.30.2.
struct PeCounters {
  std::uint32_t row_group = 0;
  std::uint64_t mm_active = 0;  // cycles doing matrix multiplication
  std::uint64_t wl_active = 0;  // cycles loading weights
  std::uint64_t idle = 0;
};

struct CoreReading {
  std::uint32_t index = 0;               // physical core K of `neuron_core<K>`
  std::vector<NamedCounter> outcomes;    // stats/status/*, sorted by name
  std::vector<NamedCounter> other_info;  // stats/other_info/* (flop_count, nc_time_in_use, ...)
  std::vector<MemoryCategory> device_memory;  // stats/memory_usage/device_mem/<cat>, sorted
  // stats/tensor_engine/pe_cntrs, when present and consistent (ValidatePeCounters); empty when
  // a read stayed torn after its re-read: no value this read, never zeros.
  std::vector<PeCounters> pe_counters;
};

struct DeviceReading {
  int index = 0;  // N of `neuron<N>`: the driver's numbering, not PCI order
  // The device directory's identity (st_dev, st_ino; 0 when it could not be stat'ed). Another one
  // under the same name is a new device to the reader: the driver reloaded or recreated it.
  std::uint64_t directory_device = 0;
  std::uint64_t directory_inode = 0;
  // `reset` (mode 0600: root only): the driver's device state, 0 resetting, 1 ready, 2 invalid.
  std::optional<std::uint64_t> device_state;
  // `core_count` (readable by root only), else the number of `neuron_core<K>` directories.
  std::optional<std::uint32_t> core_count;
  std::optional<std::vector<int>> connected_devices;
  std::optional<std::string> serial_number;  // "" when the driver prints an empty line
  std::optional<std::string> arch_type;      // "NDv3"
  std::optional<std::string> instance_type;  // "Trn2"
  std::optional<std::string> device_name;    // "Trainium2"
  std::vector<MemoryCategory> host_memory;   // stats/memory_usage/host_mem/<cat>, sorted
  // stats/hardware/*
  std::optional<std::uint64_t> sram_ecc_uncorrected;
  std::optional<std::uint64_t> mem_ecc_uncorrected;
  std::optional<std::uint64_t> mem_ecc_repairable_uncorrected;
  // stats/hardware/health_status/* (driver 2.28+; listed, and every entry read)
  std::optional<std::uint64_t> hbm_ecc_err_count;
  std::optional<std::uint64_t> repairable_hbm_ecc_err_count;
  std::optional<std::uint64_t> sram_ecc_err_count;
  std::optional<std::uint64_t> hw_error_event;
  // 2.30.2+: corrected ECC counts, the components the firmware calls unhealthy (names, at most
  // 32 of 64 printable characters), and the firmware health check's heartbeat counter.
  std::optional<std::uint64_t> mem_ecc_corrected;
  std::optional<std::uint64_t> sram_ecc_corrected;
  std::optional<std::vector<std::string>> unhealthy_components;
  std::optional<std::uint64_t> healthcheck_heartbeat;
  std::vector<NamedCounter> health_other;  // entries the reader does not know, when numbers
  std::optional<PowerReading> power;
  std::vector<CoreReading> cores;  // ascending index
  // Files that exist but could not be read or parsed: "PATH: problem".
  std::vector<std::string> errors;
  // Files this layout has that this device's tree lacks (paths), e.g. health_status before 2.28.
  std::vector<std::string> absent;
};

struct TreeReading {
  std::optional<std::string> driver_version;  // /sys/module/neuron/version
  std::vector<DeviceReading> devices;         // ascending index
  std::vector<std::string> errors;            // tree-level: the version file, the device list
};

// Limits on what one read takes from the tree: a hostile or broken driver cannot make it read
// large files or walk thousands of directories.
struct TreeLimits {
  // sysfs attributes stat as one page (4 KiB on x86, up to 64 KiB on other kernels) whatever they
  // hold; what they hold is far less.
  std::size_t max_file_bytes = 64 << 10;
  // A memory `total` above this is a counter that wrapped (a root write zeroed it, then frees
  // went on subtracting): an error, not a reading.
  std::uint64_t max_memory_bytes = std::uint64_t{1} << 50;
  std::size_t max_devices = 64;
  std::size_t max_cores_per_device = 64;
  std::size_t max_entries_per_directory = 256;  // memory categories, outcome counters
  // Descriptors a SysfsSampler keeps open between samples (SysfsTree keeps none); files beyond it
  // are opened, read and closed on every sample. The sampler also keeps no more than half of
  // RLIMIT_NOFILE's soft limit (read at each discovery), so it never starves the process of
  // descriptors. A trn2.48xlarge (16 devices of 8 cores, driver 2.28) needs 7,201.
  std::size_t max_open_files = 8192;
  bool operator==(const TreeLimits&) const = default;
};

}  // namespace neuronmon::neurondev
