#include "simdev/preset.h"

#include <gtest/gtest.h>

namespace neuronmon::simdev {
namespace {

InstanceSpec Must(std::string_view spec) {
  Result<InstanceSpec> r = ParseDeviceSpec(spec);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : InstanceSpec{};
}

TEST(Preset, RealFiguresPerInstanceType) {
  const InstanceSpec trn1 = Must("sim:trn1.2xlarge");
  EXPECT_EQ(trn1.device_count, 1);
  EXPECT_EQ(trn1.cores_per_device(), 2);
  EXPECT_EQ(trn1.hbm_bytes, 34359738368u);
  EXPECT_EQ(trn1.host_vcpus, 8);

  const InstanceSpec trn2 = Must("sim:trn2.48xlarge");
  EXPECT_EQ(trn2.device_count, 16);
  EXPECT_EQ(trn2.physical_cores_per_device, 8);
  EXPECT_EQ(trn2.lnc, 2);
  EXPECT_EQ(trn2.cores_per_device(), 4);
  EXPECT_EQ(trn2.core_count(), 64);
  EXPECT_EQ(trn2.hbm_bytes, 103079215104u);
  EXPECT_DOUBLE_EQ(trn2.hbm_peak_bytes_per_second, 2.9e12);
  EXPECT_DOUBLE_EQ(trn2.peak_bf16_flops, 667e12);
  EXPECT_EQ(trn2.core_version, "v3d");
  EXPECT_EQ(trn2.host_vcpus, 192);

  const InstanceSpec lnc1 = Must("sim:trn2.48xlarge:lnc=1");
  EXPECT_EQ(lnc1.cores_per_device(), 8);
  EXPECT_EQ(lnc1.core_version, "v3");

  EXPECT_EQ(Must("sim:trn1.32xlarge").device_count, 16);
  EXPECT_EQ(Must("sim:trn1n.32xlarge").efa_bytes_per_second,
            2 * Must("sim:trn1.32xlarge").efa_bytes_per_second);
  EXPECT_EQ(Must("sim:inf2.48xlarge").device_count, 12);
  EXPECT_EQ(Must("sim:trn2-ultraserver").device_count, 64);
  EXPECT_EQ(Must("sim").name, "trn2.48xlarge");
}

TEST(Preset, TorusConnectedToMatchesNeuronLs) {
  const InstanceSpec trn2 = Must("sim:trn2.48xlarge");
  EXPECT_EQ(ConnectedDevices(trn2, 0), (std::vector<std::uint32_t>{12, 3, 4, 1}));
  EXPECT_EQ(ConnectedDevices(trn2, 5), (std::vector<std::uint32_t>{1, 4, 9, 6}));
  EXPECT_EQ(ConnectedDevices(trn2, 15), (std::vector<std::uint32_t>{11, 14, 3, 12}));
}

TEST(Preset, RingAndSingleTopologies) {
  const InstanceSpec inf2 = Must("sim:inf2.48xlarge");
  EXPECT_EQ(ConnectedDevices(inf2, 0), (std::vector<std::uint32_t>{11, 1}));
  EXPECT_EQ(ConnectedDevices(inf2, 1), (std::vector<std::uint32_t>{0, 2}));
  EXPECT_TRUE(ConnectedDevices(Must("sim:trn1.2xlarge"), 0).empty());
  const InstanceSpec us = Must("sim:trn2-ultraserver");
  EXPECT_EQ(ConnectedDevices(us, 17), (std::vector<std::uint32_t>{29, 16, 21, 18, 1, 33}));
}

TEST(Preset, BadSpecsExplainThemselves) {
  EXPECT_EQ(ParseDeviceSpec("sim:trn9.huge").status().message(),
            "unknown instance preset \"trn9.huge\" (known: trn1.2xlarge, trn1.32xlarge, "
            "trn1n.32xlarge, trn2.48xlarge, inf2.48xlarge, trn2-ultraserver)");
  EXPECT_EQ(ParseDeviceSpec("/dev/neuron0").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDeviceSpec("sim:trn1.2xlarge:lnc=2").status().message(),
            "logical NeuronCore config 2 is not supported on trn1.2xlarge (only 1)");
  EXPECT_EQ(ParseDeviceSpec("sim:trn2.48xlarge:lnc=3").status().message(),
            "device \"sim:trn2.48xlarge:lnc=3\": unknown option \"lnc=3\" (use lnc=1 or lnc=2)");
}

TEST(Preset, InventorySaysItIsSimulatedAndIsReproducible) {
  const InstanceSpec trn2 = Must("sim:trn2.48xlarge");
  v1::Inventory a = BuildInventory(trn2, 7);
  v1::Inventory b = BuildInventory(trn2, 7);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  EXPECT_NE(a.instance_info().instance_id(), BuildInventory(trn2, 8).instance_info().instance_id());
  EXPECT_EQ(a.instance_info().instance_id().substr(0, 5), "i-sim");
  EXPECT_EQ(a.instance_info().instance_id().size(), 17u);
  EXPECT_TRUE(a.simulated());
  EXPECT_EQ(a.hardware_info().neuron_device_type(), "trainium2");
  EXPECT_EQ(a.hardware_info().neuroncore_per_device_count(), 4u);
  EXPECT_EQ(a.hardware_info().logical_neuroncore_config(), 2u);
  ASSERT_EQ(a.devices_size(), 16);
  EXPECT_EQ(a.devices(0).pci_bdf(), "0000:cc:00.0");
  EXPECT_EQ(a.devices(0).cpu_affinity(), "48-95,144-191");
  EXPECT_EQ(a.devices(4).numa_node(), 0);
  EXPECT_EQ(a.devices(3).core_ids(0), 12u);
}

}  // namespace
}  // namespace neuronmon::simdev
