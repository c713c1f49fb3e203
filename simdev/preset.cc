#include "simdev/preset.h"

#include <cstdio>

#include "simdev/rng.h"

namespace neuronmon::simdev {
namespace {

constexpr std::uint64_t kGiB = 1024ULL * 1024 * 1024;
constexpr double kTera = 1e12;

InstanceSpec Trn1(std::string name, int devices, double efa_bytes_per_second) {
  InstanceSpec s;
  s.name = name;
  s.instance_type = std::move(name);
  s.device_type = "trainium";
  s.power_full_percent = 55;
  s.device_version = "v2";
  s.device_name = "Trainium1";
  s.core_version = "v2";
  s.device_count = devices;
  s.physical_cores_per_device = 2;
  s.lnc = 1;
  s.hbm_bytes = 32 * kGiB;
  s.hbm_peak_bytes_per_second = 820.0 * kGiB;
  s.peak_bf16_flops = 190 * kTera;
  s.peak_fp8_flops = 190 * kTera;
  s.peak_fp32_flops = 47.5 * kTera;
  s.peak_int8_ops = 380 * kTera;
  s.link_bytes_per_second = 384e9;
  s.efa_bytes_per_second = efa_bytes_per_second;
  return s;
}

InstanceSpec Trn1Small() {
  InstanceSpec s = Trn1("trn1.2xlarge", 1, 12.5e9 / 8);
  s.topology = Topology::kSingle;
  s.host_vcpus = 8;
  s.host_memory_bytes = 32 * kGiB;
  s.pci_bdfs = {"0000:00:1e.0"};
  s.cpu_affinity = {"0-7"};
  s.numa_nodes = {-1};
  return s;
}

InstanceSpec Trn1Large(std::string name, double efa_bytes_per_second) {
  InstanceSpec s = Trn1(std::move(name), 16, efa_bytes_per_second);
  s.topology = Topology::kTorus4x4;
  s.host_vcpus = 128;
  s.host_memory_bytes = 512 * kGiB;
  for (int i = 0; i < 16; ++i) {
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "0000:00:%02x.0", 0x04 + i);
    s.pci_bdfs.push_back(bdf);
    s.cpu_affinity.push_back(i < 8 ? "0-31,64-95" : "32-63,96-127");
    s.numa_nodes.push_back(i < 8 ? 0 : 1);
  }
  return s;
}

const char* const kTrn2Buses[16] = {"cc", "b5", "b6", "cb", "6f", "58", "59", "6e",
                                    "9b", "84", "85", "9a", "f8", "e1", "e2", "f7"};

InstanceSpec Trn2(std::string name, std::string instance_type, int nodes) {
  InstanceSpec s;
  s.name = std::move(name);
  s.instance_type = std::move(instance_type);
  s.device_type = "trainium2";
  s.power_full_percent = 65;
  s.device_version = "v4";
  s.device_name = "Trainium2";
  s.core_version = "v3d";
  s.device_count = 16 * nodes;
  s.physical_cores_per_device = 8;
  s.lnc = 2;
  s.hbm_bytes = 96 * kGiB;
  s.hbm_peak_bytes_per_second = 2.9e12;
  s.peak_bf16_flops = 667 * kTera;
  s.peak_fp8_flops = 1299 * kTera;
  s.peak_fp32_flops = 181 * kTera;
  s.peak_int8_ops = 1299 * kTera;
  s.link_bytes_per_second = 1024e9;
  s.efa_bytes_per_second = 3200e9 / 8;
  s.topology = nodes == 1 ? Topology::kTorus4x4 : Topology::kUltraServer;
  s.nodes = nodes;
  s.host_vcpus = 192 * nodes;
  s.host_memory_bytes = 2048 * kGiB * static_cast<std::uint64_t>(nodes);
  for (int i = 0; i < s.device_count; ++i) {
    const int local = i % 16;
    s.pci_bdfs.push_back(std::string("0000:") + kTrn2Buses[local] + ":00.0");
    const bool numa1 = local < 4 || local >= 12;
    s.cpu_affinity.push_back(numa1 ? "48-95,144-191" : "0-47,96-143");
    s.numa_nodes.push_back(numa1 ? 1 : 0);
  }
  return s;
}

InstanceSpec Inf2() {
  InstanceSpec s = Trn1("inf2.48xlarge", 12, 100e9 / 8);
  s.device_type = "inferentia2";
  s.power_full_percent = 26;
  s.device_name = "Inferentia2";
  s.link_bytes_per_second = 192.0 * kGiB;
  s.topology = Topology::kRing;
  s.host_vcpus = 192;
  s.host_memory_bytes = 768 * kGiB;
  const char* const buses[3] = {"10", "20", "a0"};
  for (int i = 0; i < 12; ++i) {
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "0000:%s:%02x.0", buses[i / 4], 0x1c + i % 4);
    s.pci_bdfs.push_back(bdf);
    s.cpu_affinity.push_back(i < 6 ? "0-47,96-143" : "48-95,144-191");
    s.numa_nodes.push_back(i < 6 ? 0 : 1);
  }
  return s;
}

std::vector<InstanceSpec> AllPresets() {
  return {Trn1Small(),
          Trn1Large("trn1.32xlarge", 800e9 / 8),
          Trn1Large("trn1n.32xlarge", 1600e9 / 8),
          Trn2("trn2.48xlarge", "trn2.48xlarge", 1),
          Inf2(),
          Trn2("trn2-ultraserver", "trn2u.48xlarge", 4)};
}

std::string Hex(std::uint64_t v, int digits) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = kDigits[v & 15];
  return out;
}

}  // namespace

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const InstanceSpec& s : AllPresets()) names.push_back(s.name);
  return names;
}

Result<InstanceSpec> FindPreset(std::string_view name, int lnc) {
  for (InstanceSpec& s : AllPresets()) {
    if (s.name != name) continue;
    if (lnc == 0 || lnc == s.lnc) return s;
    if (s.device_type != "trainium2" || (lnc != 1 && lnc != 2)) {
      return Status::InvalidArgument(
          "logical NeuronCore config " + std::to_string(lnc) + " is not supported on " + s.name +
          (s.device_type == "trainium2" ? " (use 1 or 2)" : " (only 1)"));
    }
    s.lnc = lnc;
    s.core_version = lnc == 2 ? "v3d" : "v3";
    return s;
  }
  std::string known;
  for (const std::string& n : PresetNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("unknown instance preset \"" + std::string(name) + "\" (known: " + known +
                          ")");
}

Result<InstanceSpec> ParseDeviceSpec(std::string_view spec) {
  if (spec == "sim") return FindPreset("trn2.48xlarge");
  if (spec.substr(0, 4) != "sim:") {
    return Status::InvalidArgument("device \"" + std::string(spec) +
                                   "\": only simulated devices are supported (use sim:<preset>, "
                                   "e.g. sim:trn2.48xlarge)");
  }
  std::string_view rest = spec.substr(4);
  int lnc = 0;
  if (const std::size_t colon = rest.find(':'); colon != std::string_view::npos) {
    const std::string_view option = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (option == "lnc=1") {
      lnc = 1;
    } else if (option == "lnc=2") {
      lnc = 2;
    } else {
      return Status::InvalidArgument("device \"" + std::string(spec) + "\": unknown option \"" +
                                     std::string(option) + "\" (use lnc=1 or lnc=2)");
    }
  }
  return FindPreset(rest, lnc);
}

std::vector<std::uint32_t> ConnectedDevices(const InstanceSpec& spec, int device) {
  auto u = [](int v) { return static_cast<std::uint32_t>(v); };
  switch (spec.topology) {
    case Topology::kSingle:
      return {};
    case Topology::kRing: {
      const int n = spec.device_count;
      return {u((device + n - 1) % n), u((device + 1) % n)};
    }
    case Topology::kTorus4x4:
    case Topology::kUltraServer: {
      const int base = device / 16 * 16;
      const int local = device % 16;
      const int row = local / 4;
      const int col = local % 4;
      std::vector<std::uint32_t> out = {
          u(base + (local + 12) % 16), u(base + row * 4 + (col + 3) % 4),
          u(base + (local + 4) % 16), u(base + row * 4 + (col + 1) % 4)};
      if (spec.topology == Topology::kUltraServer) {
        const int nodes = spec.nodes;
        const int node = device / 16;
        out.push_back(u((node + nodes - 1) % nodes * 16 + local));
        out.push_back(u((node + 1) % nodes * 16 + local));
      }
      return out;
    }
  }
  return {};
}

namespace {

void FillInstanceInfo(const InstanceSpec& spec, std::uint64_t seed, int node, int nodes,
                      v1::InstanceInfo* info) {
  const bool trn2 = spec.device_type == "trainium2";
  const bool inf2 = spec.device_type == "inferentia2";
  const char* region = trn2 ? "us-east-2" : (inf2 ? "us-east-1" : "us-west-2");
  const auto n = static_cast<std::uint64_t>(node);
  info->set_instance_id("i-sim" + Hex(Hash(seed, kStreamIdentity, 1 + (n << 8)), 12));
  if (nodes > 1) {
    info->set_instance_name("ip-10-0-" + std::to_string(node / 250) + "-" +
                            std::to_string(node % 250 + 4));
  }
  info->set_instance_type(spec.instance_type);
  info->set_instance_availability_zone(std::string(region) + (trn2 ? "c" : (inf2 ? "a" : "d")));
  info->set_instance_availability_zone_id(trn2 ? "use2-az3" : (inf2 ? "use1-az6" : "usw2-az4"));
  info->set_instance_region(region);
  info->set_ami_id("ami-sim" + Hex(Hash(seed, kStreamIdentity, 2), 10));
  info->set_subnet_id("subnet-sim" + Hex(Hash(seed, kStreamIdentity, 3), 8));
  if (spec.topology == Topology::kUltraServer) {
    info->set_ultraserver_id("u-sim" + Hex(Hash(seed, kStreamIdentity, 4), 11));
  }
}

void FillHardwareInfo(const InstanceSpec& spec, v1::HardwareInfo* hw) {
  hw->set_neuron_device_type(spec.device_type);
  hw->set_neuron_device_version(spec.device_version);
  hw->set_neuroncore_version(spec.core_version);
  hw->set_neuron_device_count(static_cast<std::uint32_t>(spec.device_count));
  hw->set_neuron_device_memory_size(spec.hbm_bytes);
  hw->set_neuroncore_per_device_count(static_cast<std::uint32_t>(spec.cores_per_device()));
  hw->set_logical_neuroncore_config(static_cast<std::uint32_t>(spec.lnc));
}

void FillDevice(const InstanceSpec& spec, std::uint64_t seed, int d, v1::Device* dev) {
  dev->set_index(static_cast<std::uint32_t>(d));
  dev->set_core_count(static_cast<std::uint32_t>(spec.cores_per_device()));
  for (int c = 0; c < spec.cores_per_device(); ++c) {
    dev->add_core_ids(static_cast<std::uint32_t>(d * spec.cores_per_device() + c));
  }
  dev->set_physical_core_count(static_cast<std::uint32_t>(spec.physical_cores_per_device));
  dev->set_hbm_bytes(spec.hbm_bytes);
  dev->set_hbm_peak_bytes_per_second(spec.hbm_peak_bytes_per_second);
  dev->mutable_peak_flops()->set_bf16(spec.peak_bf16_flops);
  dev->mutable_peak_flops()->set_fp8(spec.peak_fp8_flops);
  dev->mutable_peak_flops()->set_fp32(spec.peak_fp32_flops);
  dev->mutable_peak_flops()->set_int8(spec.peak_int8_ops);
  for (std::uint32_t peer : ConnectedDevices(spec, d)) dev->add_connected_to(peer);
  dev->set_pci_bdf(spec.pci_bdfs[static_cast<std::size_t>(d)]);
  dev->set_cpu_affinity(spec.cpu_affinity[static_cast<std::size_t>(d)]);
  dev->set_numa_node(spec.numa_nodes[static_cast<std::size_t>(d)]);
  dev->set_device_name(spec.device_name);
  dev->set_serial_number(Hex(Hash(seed, kStreamIdentity, 100, static_cast<std::uint64_t>(d)), 16));
  dev->set_link_bytes_per_second(spec.link_bytes_per_second);
}

}  // namespace

v1::Inventory BuildInventory(const InstanceSpec& spec, std::uint64_t seed, int node, int nodes) {
  v1::Inventory inv;
  FillInstanceInfo(spec, seed, node, nodes, inv.mutable_instance_info());
  FillHardwareInfo(spec, inv.mutable_hardware_info());
  for (int d = 0; d < spec.device_count; ++d) FillDevice(spec, seed, d, inv.add_devices());
  const bool trn2 = spec.device_type == "trainium2";
  inv.set_device_spec("sim:" + spec.name + (trn2 ? ":lnc=" + std::to_string(spec.lnc) : ""));
  inv.set_simulated(true);
  inv.set_topology(spec.topology == Topology::kSingle     ? "single"
                   : spec.topology == Topology::kRing     ? "ring"
                   : spec.topology == Topology::kTorus4x4 ? "torus-4x4"
                                                          : "ultraserver-4x-torus-4x4");
  inv.set_host_vcpu_count(static_cast<std::uint32_t>(spec.host_vcpus));
  inv.set_host_memory_bytes(spec.host_memory_bytes);
  inv.set_node_count(static_cast<std::uint32_t>(spec.nodes));
  return inv;
}

}  // namespace neuronmon::simdev
