// Instance presets: the real figures of each Trainium/Inferentia instance type the simulator
// models (reference/neuron-tools.md §4) — devices, cores, HBM, peak FLOPs, NeuronLink topology,
// PCI addresses, CPU affinity, host size. Pure data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/status.h"

namespace neuronmon::simdev {

enum class Topology { kSingle, kTorus4x4, kRing, kUltraServer };

struct InstanceSpec {
  std::string name;            // preset name, e.g. "trn2.48xlarge"
  std::string instance_type;   // as EC2 names it
  std::string device_type;     // "trainium", "trainium2", "inferentia2"
  std::string device_version;  // "v2", "v4"
  std::string device_name;     // "Trainium2"
  std::string core_version;    // "v2", "v3", "v3d"
  int device_count = 0;
  int physical_cores_per_device = 0;
  int lnc = 1;                  // physical cores per logical core
  std::uint64_t hbm_bytes = 0;  // per device
  double hbm_peak_bytes_per_second = 0;
  double peak_bf16_flops = 0;  // per device
  double peak_fp8_flops = 0;
  double peak_fp32_flops = 0;
  double peak_int8_ops = 0;
  double link_bytes_per_second = 0;  // NeuronLink, per device
  double efa_bytes_per_second = 0;   // per node
  // The power a device draws, percent of its maximum: idle, and with every core and the HBM busy
  // (a model fitted to public readings: reference/neuron-sysfs.md).
  double power_idle_percent = 0.6;
  double power_full_percent = 60;
  Topology topology = Topology::kSingle;
  int nodes = 1;  // instances joined (UltraServer)
  int host_vcpus = 0;
  std::uint64_t host_memory_bytes = 0;
  std::vector<std::string> pci_bdfs;
  std::vector<std::string> cpu_affinity;
  std::vector<int> numa_nodes;

  int cores_per_device() const { return physical_cores_per_device / lnc; }
  int core_count() const { return device_count * cores_per_device(); }
  int physical_core_count() const { return device_count * physical_cores_per_device; }
  int devices_per_node() const { return device_count / nodes; }
};

// Preset names accepted by FindPreset, in a stable order.
std::vector<std::string> PresetNames();

// Looks up `name` (e.g. "trn2.48xlarge"). `lnc` overrides the logical NeuronCore config where the
// hardware supports it (trn2: 1 or 2); 0 keeps the preset's default. Errors name the valid presets.
Result<InstanceSpec> FindPreset(std::string_view name, int lnc = 0);

// Parses a device spec "sim:<preset>[:lnc=N]" (the daemon's --device). "sim" alone means the
// default, trn2.48xlarge.
Result<InstanceSpec> ParseDeviceSpec(std::string_view spec);

// Neighbour device indices of `device`, in neuron-ls `connected_to` order.
std::vector<std::uint32_t> ConnectedDevices(const InstanceSpec& spec, int device);

// The inventory the daemon sends in Welcome. `seed` makes the simulated instance id, serial
// numbers and subnet plausible and reproducible.
// Node `node` of a `nodes`-node cluster gets its own instance id and an EC2-style host name
// ("ip-10-0-0-7"); a single instance (nodes 1) has no name, as neuron-monitor shows none.
v1::Inventory BuildInventory(const InstanceSpec& spec, std::uint64_t seed, int node = 0,
                             int nodes = 1);

}  // namespace neuronmon::simdev
