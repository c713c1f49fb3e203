#include "neurondev/inventory.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include "proto/common/file_reader.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::neurondev {
namespace {

constexpr std::uint64_t kGiB = 1024ULL * 1024 * 1024;
constexpr double kTera = 1e12;

// AWS's published per-device figures (the same the simulator's presets use).
constexpr std::array<ArchFigures, 3> kArchs = {{
    {"Trn1", "trainium", "v2", "v2", 1, 32 * kGiB, 820.0 * kGiB, 190 * kTera, 190 * kTera,
     47.5 * kTera, 380 * kTera, 384e9},
    {"Inf2", "inferentia2", "v2", "v2", 1, 32 * kGiB, 820.0 * kGiB, 190 * kTera, 190 * kTera,
     47.5 * kTera, 380 * kTera, 192.0 * kGiB},
    {"Trn2", "trainium2", "v4", "v3d", 2, 96 * kGiB, 2.9e12, 667 * kTera, 1299 * kTera, 181 * kTera,
     1299 * kTera, 1024e9},
}};

std::string ReadLine(const std::string& path) {
  Result<std::string> text = ReadRegularFile(path, 4096);
  if (!text.ok()) return "";
  std::string line = text->substr(0, text->find('\n'));
  return SanitizeForTerminal(line);
}

std::uint64_t MemTotalBytes(const std::string& proc_root) {
  Result<std::string> text = ReadRegularFile(proc_root + "/meminfo", 64 << 10);
  if (!text.ok()) return 0;
  const std::string_view key = "MemTotal:";
  const std::size_t at = text->find(key);
  if (at == std::string::npos) return 0;
  std::string_view rest = std::string_view(*text).substr(at + key.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  std::uint64_t kib = 0;
  std::from_chars(rest.data(), rest.data() + rest.size(), kib);
  return kib * 1024;
}

const ArchFigures* FiguresOf(const DeviceReading& d) {
  return d.instance_type ? FindArch(*d.instance_type) : nullptr;
}

void FillDevice(const DeviceReading& d, const ArchFigures* arch, int lnc, std::uint32_t first_core,
                v1::Device* out) {
  out->set_index(static_cast<std::uint32_t>(d.index));
  const std::uint32_t physical = d.core_count.value_or(0);
  const std::uint32_t logical = physical / static_cast<std::uint32_t>(lnc);
  out->set_core_count(logical);
  for (std::uint32_t c = 0; c < logical; ++c) out->add_core_ids(first_core + c);
  out->set_physical_core_count(physical);
  if (arch != nullptr) {
    out->set_hbm_bytes(arch->hbm_bytes);
    out->set_hbm_peak_bytes_per_second(arch->hbm_peak_bytes_per_second);
    out->mutable_peak_flops()->set_bf16(arch->peak_bf16_flops);
    out->mutable_peak_flops()->set_fp8(arch->peak_fp8_flops);
    out->mutable_peak_flops()->set_fp32(arch->peak_fp32_flops);
    out->mutable_peak_flops()->set_int8(arch->peak_int8_ops);
    out->set_link_bytes_per_second(arch->link_bytes_per_second);
  }
  if (d.connected_devices) {
    for (int peer : *d.connected_devices) out->add_connected_to(static_cast<std::uint32_t>(peer));
  }
  out->set_numa_node(-1);
  out->set_device_name(d.device_name.value_or(""));
  out->set_serial_number(d.serial_number.value_or(""));
}

}  // namespace

const ArchFigures* FindArch(const std::string& arch) {
  for (const ArchFigures& a : kArchs) {
    if (arch == a.arch) return &a;
  }
  return nullptr;
}

HostIdentity ReadHostIdentity(const std::string& sysfs_root, const std::string& proc_root) {
  HostIdentity id;
  const std::string dmi = sysfs_root + "/devices/virtual/dmi/id/";
  // EC2 Nitro instances name their instance type and id in DMI; elsewhere these are a vendor's
  // product name, so only trust them on Amazon EC2.
  if (ReadLine(dmi + "sys_vendor") == "Amazon EC2") {
    id.instance_type = ReadLine(dmi + "product_name");
    const std::string tag = ReadLine(dmi + "board_asset_tag");
    if (tag.rfind("i-", 0) == 0) id.instance_id = tag;
  }
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  id.vcpus = cpus > 0 ? static_cast<std::uint32_t>(cpus) : 0;
  id.memory_bytes = MemTotalBytes(proc_root);
  return id;
}

int LogicalCoreConfig(const DeviceReading& device, int requested) {
  if (requested > 0) return requested;
  const ArchFigures* arch = FiguresOf(device);
  const int lnc = arch != nullptr ? arch->default_lnc : 1;
  // A core count the config does not divide means the config is wrong for this device.
  return device.core_count && *device.core_count % static_cast<std::uint32_t>(lnc) == 0 ? lnc : 1;
}

std::string TopologyName(const TreeReading& reading) {
  const std::size_t n = reading.devices.size();
  if (n == 1) return "single";
  std::size_t max_degree = 0;
  for (const DeviceReading& d : reading.devices) {
    if (!d.connected_devices) return "";
    max_degree = std::max(max_degree, d.connected_devices->size());
  }
  if (max_degree == 4 && n == 16) return "torus-4x4";
  if (max_degree == 2) return "ring";
  return "";
}

v1::Inventory BuildInventory(const TreeReading& reading, const HostIdentity& host, int lnc) {
  v1::Inventory inv;
  v1::InstanceInfo* info = inv.mutable_instance_info();
  info->set_instance_type(host.instance_type);
  info->set_instance_id(host.instance_id);
  if (host.instance_type.empty()) {
    info->set_error("instance type unknown: not an EC2 instance, or DMI is not readable");
  }
  const DeviceReading* first = reading.devices.empty() ? nullptr : &reading.devices.front();
  const ArchFigures* arch = first != nullptr ? FiguresOf(*first) : nullptr;
  v1::HardwareInfo* hw = inv.mutable_hardware_info();
  if (arch != nullptr) {
    hw->set_neuron_device_type(arch->device_type);
    hw->set_neuron_device_version(arch->device_version);
    // Trainium2 cores are "v3d" when paired into logical cores, "v3" one by one.
    const bool trn2 = std::string_view(arch->arch) == "Trn2";
    hw->set_neuroncore_version(trn2 && lnc == 1 ? "v3" : arch->core_version);
    hw->set_neuron_device_memory_size(arch->hbm_bytes);
  } else {
    hw->set_error(first == nullptr ? "no Neuron devices"
                                   : "unknown Neuron architecture \"" +
                                         first->instance_type.value_or("") + "\"");
  }
  hw->set_neuron_device_count(static_cast<std::uint32_t>(reading.devices.size()));
  hw->set_logical_neuroncore_config(static_cast<std::uint32_t>(lnc));
  std::uint32_t next_core = 0;
  for (const DeviceReading& d : reading.devices) {
    v1::Device* dev = inv.add_devices();
    FillDevice(d, FiguresOf(d), lnc, next_core, dev);
    if (auto it = host.placements.find(d.index); it != host.placements.end()) {
      dev->set_pci_bdf(it->second.bdf);
      dev->set_numa_node(it->second.numa_node);
      dev->set_cpu_affinity(it->second.cpu_affinity);
    }
    next_core += dev->core_count();
  }
  if (first != nullptr) hw->set_neuroncore_per_device_count(inv.devices(0).core_count());
  inv.set_device_spec("neuron");
  inv.set_simulated(false);
  inv.set_topology(TopologyName(reading));
  inv.set_host_vcpu_count(host.vcpus);
  inv.set_host_memory_bytes(host.memory_bytes);
  inv.set_node_count(1);
  return inv;
}

}  // namespace neuronmon::neurondev
