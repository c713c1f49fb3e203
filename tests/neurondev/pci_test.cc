// Where a device sits: its PCI address from the driver's ioctl (only the refusals can be tested
// without a Neuron device), and the NUMA node and CPUs of that PCI function from sysfs.
#include "neurondev/pci.h"

#include <gtest/gtest.h>

#include "neurondev/inventory.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using testing::FakeTree;

TEST(Pci, AddressesPrintAsTheKernelNamesThem) {
  EXPECT_EQ((PciAddress{0, 0x10, 0x1c, 0}).ToString(), "0000:10:1c.0");
  EXPECT_EQ((PciAddress{1, 0xcc, 0x1f, 7}).ToString(), "0001:cc:1f.7");
}

TEST(Pci, PlacementComesFromThePciFunctionsDirectory) {
  FakeTree tree;
  const std::string dir = "bus/pci/devices/0000:10:1c.0/";
  tree.Write(dir + "numa_node", "1\n");
  tree.Write(dir + "local_cpulist", "48-95,144-191\n");
  const PciPlacement p = ReadPciPlacement(tree.root(), {0, 0x10, 0x1c, 0});
  EXPECT_EQ(p.bdf, "0000:10:1c.0");
  EXPECT_EQ(p.numa_node, 1);
  EXPECT_EQ(p.cpu_affinity, "48-95,144-191");
  EXPECT_EQ(p.error, "");
  // A machine without NUMA says -1: no node, and no error.
  tree.Write(dir + "numa_node", "-1\n");
  EXPECT_EQ(ReadPciPlacement(tree.root(), {0, 0x10, 0x1c, 0}).numa_node, -1);
  EXPECT_EQ(ReadPciPlacement(tree.root(), {0, 0x10, 0x1c, 0}).error, "");
}

TEST(Pci, WhatIsMissingOrMalformedStaysUnknownWithThePath) {
  FakeTree tree;
  const PciPlacement missing = ReadPciPlacement(tree.root(), {0, 0x20, 0, 0});
  EXPECT_EQ(missing.bdf, "0000:20:00.0");
  EXPECT_EQ(missing.numa_node, -1);
  EXPECT_EQ(missing.cpu_affinity, "");
  EXPECT_NE(missing.error.find("0000:20:00.0/numa_node"), std::string::npos) << missing.error;
  const std::string dir = "bus/pci/devices/0000:20:00.0/";
  tree.Write(dir + "numa_node", "seven\n");
  tree.Write(dir + "local_cpulist", "0-3\x1b[31m\n");
  const PciPlacement bad = ReadPciPlacement(tree.root(), {0, 0x20, 0, 0});
  EXPECT_EQ(bad.numa_node, -1);
  EXPECT_EQ(bad.cpu_affinity, "") << "never terminal escapes";
  EXPECT_NE(bad.error.find("\"seven\" is not a NUMA node"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("local_cpulist: not a CPU list"), std::string::npos) << bad.error;
}

TEST(Pci, OnlyADeviceNodeThatAnswersTheDriversIoctlGivesAnAddress) {
  FakeTree tree;
  std::string error;
  EXPECT_FALSE(QueryPciAddress(tree.root() + "/dev", 0, &error));
  EXPECT_EQ(error, tree.root() + "/dev/neuron0: No such file or directory");
  tree.Write("dev/neuron1", "not a device");
  EXPECT_FALSE(QueryPciAddress(tree.root() + "/dev", 1, &error));
  EXPECT_EQ(error, tree.root() + "/dev/neuron1: not a character device");
  tree.Symlink("/dev/null", "dev/neuron2");
  EXPECT_FALSE(QueryPciAddress(tree.root() + "/dev", 2, &error));
  EXPECT_NE(error.find("/dev/neuron2: the driver did not give the PCI address"), std::string::npos)
      << error;
  const PciPlacement p = LocateDevice(tree.root() + "/dev", tree.root(), 2);
  EXPECT_EQ(p.bdf, "");
  EXPECT_EQ(p.error, error);
}

TEST(Pci, TheInventoryCarriesThePlacementsItIsGiven) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  const TreeReading reading = SysfsTree(tree.root()).Read();
  HostIdentity host;
  host.placements[1] = {"0000:10:1c.0", 1, "48-95,144-191", ""};
  const v1::Inventory inv = BuildInventory(reading, host, 2);
  ASSERT_GE(inv.devices_size(), 2);
  EXPECT_EQ(inv.devices(1).pci_bdf(), "0000:10:1c.0");
  EXPECT_EQ(inv.devices(1).numa_node(), 1);
  EXPECT_EQ(inv.devices(1).cpu_affinity(), "48-95,144-191");
  EXPECT_EQ(inv.devices(0).pci_bdf(), "");
  EXPECT_EQ(inv.devices(0).numa_node(), -1);
}

}  // namespace
}  // namespace neuronmon::neurondev
