// SysfsTree: one read of the Neuron driver's sysfs tree (driver 2.24–2.30 layout; the paths and
// what each file means are in docs/real-hosts.md). It reads what the driver exposes per device —
// core count, topology, serial and architecture strings, host and device memory by category
// (current = `total`, high-water mark = `peak`), ECC and health counters, power utilization — and
// per physical NeuronCore the execution-outcome and other_info counters. Every file is optional:
// one that is absent (an older or newer driver) is listed in `absent`, one that exists but cannot
// be read or parsed (`"busy"`, garbage, too large) is an error naming its path — never a crash, and
// never a zero that looks like a reading. Reads only files under the injected root; each file is
// capped in size before it is read. Thread-compatible (no state but the root).
//
// SysfsSampler gives the same reading at a fraction of the cost, for a daemon that reads the tree
// every second: it discovers the layout once (devices, cores, counter and category names), keeps
// the files open and re-reads each with one pread(2) per sample. It owns its descriptors.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/status.h"

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
  std::vector<PeCounters> pe_counters;        // stats/tensor_engine/pe_cntrs, when present
};

struct DeviceReading {
  int index = 0;  // N of `neuron<N>`: the driver's numbering, not PCI order
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
  // stats/hardware/health_status/* (driver 2.28+)
  std::optional<std::uint64_t> hbm_ecc_err_count;
  std::optional<std::uint64_t> repairable_hbm_ecc_err_count;
  std::optional<std::uint64_t> sram_ecc_err_count;
  std::optional<std::uint64_t> hw_error_event;
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
  // descriptors. A trn2.48xlarge (16 devices of 8 cores, driver 2.28) needs 7,185.
  std::size_t max_open_files = 8192;
  bool operator==(const TreeLimits&) const = default;
};

class SysfsTree {
 public:
  // `root` is the sysfs mount ("/sys"); tests point it at a fabricated tree.
  explicit SysfsTree(std::string root = "/sys", TreeLimits limits = {});

  // The devices' N, ascending (from devices/virtual/neuron_device/, else class/neuron_device/).
  // Empty when there is no Neuron driver; an error only when the directory exists but cannot be
  // listed.
  Result<std::vector<int>> ListDevices() const;
  // Reads every device.
  TreeReading Read() const;
  DeviceReading ReadDevice(int index) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
  TreeLimits limits_;
};

struct SamplerOptions {
  // Samples from one discovery of the layout to the next (0 or 1: every sample, which costs what
  // SysfsTree::Read() costs). A discovery of a trn2.48xlarge costs about 50 ms of CPU; every 300
  // samples that is 0.17 ms per sample.
  std::uint32_t rediscover_every = 300;
  // How often the files that do not move every second are re-read, in samples. Each file of a
  // pace is re-read at one sample in that many, the files of a pace spread evenly over them, and
  // in between the sample repeats what the file said when last read (value, error or absence), so
  // none is more than `every - 1` samples old. The live activity — nc_time_in_use, flop_count, and
  // pe_cntrs unless slow_pe_counters — is read at every sample, and a discovery reads every file.
  // All 1 (the defaults): every file at every sample, exactly what SysfsTree::Read() reads.
  std::uint32_t errors_every = 1;  // ECC and health counters (stats/hardware)
  std::uint32_t slow_every = 1;    // execution outcomes (stats/status), memory usage (`total`)
  // Memory high-water marks (`peak`; never reported below the usage), the other_info counts
  // besides the live ones, power (which the driver refreshes once a minute), and pe_cntrs when
  // slow_pe_counters.
  std::uint32_t rare_every = 1;
  // Re-read pe_cntrs at rare_every: for a driver whose nc_time_in_use moves live (2.30.2+), the
  // tensor engine's counters are not the busy-time source.
  bool slow_pe_counters = false;
  bool operator==(const SamplerOptions&) const = default;
};

class TreePlan;  // the discovered layout and its open descriptors (sysfs_tree.cc)

// Samples the tree as SysfsTree::Read() reads it, re-using what it learnt at the last discovery.
// A discovery lists the layout (devices, cores, counter and category names), reads the constant
// files (core_count, connected_devices, serial_number, architecture/*) and opens every other file,
// keeping the descriptors; a sample re-lists the devices and re-reads each kept file with one
// pread(2) from offset 0 (sysfs serves an attribute afresh at every read from 0).
//
// With slow_every = 1, a sample returns exactly what SysfsTree::Read() would return for the tree
// as it is then, given this contract for whatever changes the tree:
//  - contents rewritten in place — the driver's attributes; a writer that opens the existing file
//    and writes it again, as std::ofstream does — are seen at the next sample;
//  - a device that appears or disappears, or whose directory is replaced (a driver reload, a
//    device removed and written again), is seen at the next sample;
//  - a kept file that cannot be read any more (sysfs answers ENODEV once its device is gone) is
//    read by path at once, so it is absent or an error exactly as SysfsTree says;
//  - any other change inside a device directory — a file replaced by rename(2) (its kept
//    descriptor still reads the old inode), a file, counter, category or core added or removed,
//    a constant file changed — is seen at the next discovery: every `rediscover_every` samples,
//    or at the sample after Rediscover().
// Files that could not be opened at the discovery (absent, unreadable, not regular, too large)
// are tried by path at every sample, as SysfsTree tries them.
class SysfsSampler {
 public:
  // `root` is the sysfs mount ("/sys"); tests point it at a fabricated tree. Nothing is read
  // before the first Sample().
  explicit SysfsSampler(std::string root = "/sys", TreeLimits limits = {},
                        SamplerOptions options = {});
  ~SysfsSampler();  // closes every descriptor it keeps
  // A moved-from sampler may only be destroyed or assigned to.
  SysfsSampler(SysfsSampler&&) noexcept;
  SysfsSampler& operator=(SysfsSampler&&) noexcept;

  TreeReading Sample();
  // The next Sample() discovers the layout again.
  void Rediscover() { discover_ = true; }
  // Descriptors kept open between samples (files and device directories), at most
  // TreeLimits::max_open_files.
  std::size_t open_files() const;

 private:
  void Discover();
  void FollowDeviceList(const std::vector<int>& devices);

  std::string root_;
  TreeLimits limits_;
  SamplerOptions options_;
  std::unique_ptr<TreePlan> plan_;
  std::size_t fd_budget_ = 0;  // descriptors this discovery may keep
  std::string buffer_;         // one file's contents: max_file_bytes + 1
  bool discover_ = true;
  std::uint32_t samples_since_discovery_ = 0;
  std::uint64_t samples_ = 0;
};

// Parsers of single attribute files, exposed for tests. Each accepts the value with or without a
// trailing newline. `connected_devices` is "\n" when a device has no neighbours; an empty file is
// the driver's overflow (the list did not fit) and an error.
Result<std::uint64_t> ParseCounter(std::string_view text);
Result<std::vector<int>> ParseConnectedDevices(std::string_view text);
Result<PowerReading> ParsePower(std::string_view text);
Result<std::vector<PeCounters>> ParsePeCounters(std::string_view text);

}  // namespace neuronmon::neurondev
