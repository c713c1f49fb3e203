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
// The reading's types are in tree_reading.h, the single files' parsers in sysfs_attributes.h and
// the sampler, which reads the same every second for a fraction of the cost, in sysfs_sampler.h
// (which uses this reader; this header includes the first two).
#pragma once

#include <string>
#include <vector>

#include "neurondev/node_index.h"
#include "neurondev/sysfs_attributes.h"
#include "neurondev/tree_reading.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

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
  // The driver's version (module/neuron/version, "2.30.2.0"); "" when it cannot be read.
  std::string DriverVersion() const;
  DeviceReading ReadDevice(int index) const;
  // Where device `index`'s nodes are, found by name (node_index.h), with the driver's version.
  NodeIndex IndexDevice(int index, const std::string& driver_version) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
  TreeLimits limits_;
};

}  // namespace neuronmon::neurondev
