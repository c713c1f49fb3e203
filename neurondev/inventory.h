// The inventory of a real Neuron host: what neuron-ls shows, built from one read of the driver's
// sysfs tree plus the host's identity. Hardware figures the driver does not expose (HBM size and
// bandwidth, peak FLOPs, NeuronLink bandwidth) come from a table of the known architectures;
// the devices' PCI address, NUMA node and CPUs come from HostIdentity (pci.h: an ioctl and the
// PCI function's sysfs files); anything the host does not say is left empty or -1, never
// guessed. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "neurondev/pci.h"
#include "neurondev/sysfs_tree.h"
#include "neuronmon/v1/inventory.pb.h"

namespace neuronmon::neurondev {

// Figures of one Neuron device architecture (per device), keyed by the driver's `instance_type`
// architecture string ("Trn1", "Inf2", "Trn2", "Trn3").
struct ArchFigures {
  const char* arch;            // "Trn2"
  const char* device_type;     // "trainium2", as neuron-monitor's neuron_hardware_info
  const char* device_version;  // "v4"
  const char* core_version;    // at the default logical NeuronCore config
  int default_lnc;             // logical NeuronCore config the runtime uses unless told otherwise
  std::uint64_t hbm_bytes;
  double hbm_peak_bytes_per_second;
  double peak_bf16_flops, peak_fp8_flops, peak_fp32_flops, peak_int8_ops;
  double link_bytes_per_second;
};

// The figures of `arch`, or null for an architecture this build does not know.
const ArchFigures* FindArch(const std::string& arch);

// What the host says about itself, read outside the Neuron tree.
struct HostIdentity {
  std::string instance_type;  // DMI product_name on EC2 ("trn2.48xlarge"); empty when unknown
  std::string instance_id;    // DMI board_asset_tag on EC2 ("i-0123..."); empty when unknown
  std::uint32_t vcpus = 0;
  std::uint64_t memory_bytes = 0;
  std::map<int, PciPlacement> placements;  // by device index; a device without one: unknown
};

// Reads DMI under `sysfs_root` and the CPU/memory totals under `proc_root`; absent facts stay
// empty. The placements are the caller's (LocateDevice per device).
HostIdentity ReadHostIdentity(const std::string& sysfs_root, const std::string& proc_root);

// The logical NeuronCore config: `requested` when non-zero, else the architecture's default.
int LogicalCoreConfig(const DeviceReading& device, int requested);

// The inventory of `reading` (devices as read; processes are added by the caller). `lnc` is the
// logical NeuronCore config (1 or 2). Devices whose physical core count is unknown get none.
v1::Inventory BuildInventory(const TreeReading& reading, const HostIdentity& host, int lnc);

// "torus-4x4", "ring", "single", or "" when the neighbours are unknown.
std::string TopologyName(const TreeReading& reading);

}  // namespace neuronmon::neurondev
