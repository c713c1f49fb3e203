// SysfsSampler gives what SysfsTree::Read() gives at a fraction of the cost, for a daemon that
// reads the tree every second: it discovers the layout once (devices, cores, counter and category
// names), keeps the files open and re-reads each with one pread(2) per sample. It owns its
// descriptors. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "neurondev/node_index.h"
#include "neurondev/tree_reading.h"

namespace neuronmon::neurondev {

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

class TreePlan;  // the discovered layout and its open descriptors (sysfs_sampler.cc)

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
  // Devices whose activity another source serves (the runtimes' datastores): from the next
  // Sample their live files (nc_time_in_use, flop_count, pe_cntrs) are re-read at rare_every
  // only, repeating the kept text in between, as the paced files do.
  void SetQuietDevices(std::set<int> devices) { quiet_ = std::move(devices); }
  // The next Sample() discovers the layout again.
  void Rediscover() { discover_ = true; }
  // Descriptors kept open between samples (files and device directories), at most
  // TreeLimits::max_open_files.
  std::size_t open_files() const;
  // Where device `index`'s nodes were found at the last discovery (its plan's walk), or null
  // before the first Sample() or for a device the plan lacks.
  const NodeIndex* nodes(int index) const;

 private:
  void Discover();
  void FollowDeviceList(const std::vector<int>& devices, const std::string& driver_version);

  std::string root_;
  TreeLimits limits_;
  SamplerOptions options_;
  std::unique_ptr<TreePlan> plan_;
  std::size_t fd_budget_ = 0;  // descriptors this discovery may keep
  std::string buffer_;         // one file's contents: max_file_bytes + 1
  bool discover_ = true;
  std::uint32_t samples_since_discovery_ = 0;
  std::uint64_t samples_ = 0;
  std::set<int> quiet_;
};

}  // namespace neuronmon::neurondev
