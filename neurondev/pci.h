// Where each Neuron device sits on the host: its PCI address, NUMA node and local CPUs. The
// driver's sysfs nodes are virtual (no link to the PCI function), and its numbering follows the
// firmware's routing ids, not PCI order, so the address comes from the driver's
// NEURON_IOCTL_DEVICE_BDF_EXT on `/dev/neuron<N>` opened write-only — the driver's "free access"
// mode, which attaches nothing to the device and needs only permission to open the node. The NUMA
// node and CPUs then come from that function's directory under /sys/bus/pci/devices. Whatever
// cannot be read stays unknown, with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace neuronmon::neurondev {

struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t slot = 0;
  std::uint32_t function = 0;
  // "0000:cc:00.0"
  std::string ToString() const;
};

struct PciPlacement {
  std::string bdf;           // empty: unknown
  int numa_node = -1;        // -1: none or unknown
  std::string cpu_affinity;  // local_cpulist, "48-95,144-191"; empty: unknown
  std::string error;         // why something is unknown; empty when all is known
};

// Asks the driver for device `index`'s PCI address through `dev_root`/neuron<index>. Fails (with
// the reason in `*error`) when the node cannot be opened, is not a character device, or the
// driver refuses the request.
std::optional<PciAddress> QueryPciAddress(const std::string& dev_root, int index,
                                          std::string* error);

// The NUMA node and local CPUs of PCI function `address` under `sysfs_root`/bus/pci/devices.
PciPlacement ReadPciPlacement(const std::string& sysfs_root, const PciAddress& address);

// Both, for device `index`.
PciPlacement LocateDevice(const std::string& dev_root, const std::string& sysfs_root, int index);

}  // namespace neuronmon::neurondev
