// The driver's sysfs tree as SysfsTree reads it: attribute parsers, a Trainium2 tree as driver
// 2.28 writes it, an older tree without health_status, and a broken one (missing files, "busy",
// garbage, huge files, too many cores) — every problem named by path, none a crash or a zero.
#include "neurondev/sysfs_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using testing::FakeTree;

bool Contains(const std::vector<std::string>& list, const std::string& needle) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

std::uint64_t Find(const std::vector<NamedCounter>& counters, const std::string& name) {
  for (const NamedCounter& c : counters) {
    if (c.name == name) return c.total;
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

TEST(ParseCounter, AcceptsWhatTheDriverPrintsAndNothingElse) {
  EXPECT_EQ(*ParseCounter("42\n"), 42u);
  EXPECT_EQ(*ParseCounter("8"), 8u);  // core_count has no newline
  EXPECT_EQ(*ParseCounter("18446744073709551615\n"), UINT64_MAX);
  EXPECT_EQ(ParseCounter("18446744073709551616\n").status().message(),
            "\"18446744073709551616\" is out of range");
  EXPECT_EQ(ParseCounter("busy\n").status().message(), "\"busy\" is not a number");
  EXPECT_EQ(ParseCounter("\n").status().message(), "empty");
  for (const char* bad : {"-1", " 5", "5 ", "5\n\n", "0x10", "1.5", "\x1b[31m"}) {
    EXPECT_FALSE(ParseCounter(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseCounter("\x1b[31m").status().message(), "\"?[31m\" is not a number");
}

TEST(ParseConnectedDevices, ListsOrNothing) {
  EXPECT_EQ(*ParseConnectedDevices("12, 3, 4, 1\n"), (std::vector<int>{12, 3, 4, 1}));
  EXPECT_EQ(*ParseConnectedDevices("\n"), std::vector<int>{});
  EXPECT_EQ(*ParseConnectedDevices("7"), std::vector<int>{7});
  // An empty file is the driver's overflow (more neighbours than its 20-byte buffer), not "none".
  EXPECT_EQ(ParseConnectedDevices("").status().message(),
            "empty (the driver could not fit the list)");
  for (const char* bad : {"1,,2", "a, b", "1, 99999", "1;2"}) {
    EXPECT_FALSE(ParseConnectedDevices(bad).ok()) << bad;
  }
}

TEST(ParsePower, StatusEpochAndPercentages) {
  const PowerReading p = *ParsePower("POWER_STATUS_VALID,1764720000,0.86,25.00,18.86\n");
  EXPECT_EQ(p.status, PowerReading::Status::kValid);
  EXPECT_EQ(p.epoch_seconds, 1764720000u);
  EXPECT_DOUBLE_EQ(p.min_percent, 0.86);
  EXPECT_DOUBLE_EQ(p.max_percent, 25.0);
  EXPECT_DOUBLE_EQ(p.avg_percent, 18.86);
  EXPECT_EQ(ParsePower("POWER_STATUS_NO_DATA,0,0.00,0.00,0.00\n")->status,
            PowerReading::Status::kNoData);
  EXPECT_EQ(ParsePower("POWER_STATUS_INVALID,5,0.00,0.00,0.00")->status,
            PowerReading::Status::kInvalid);
  // The driver clamps a status it does not know to POWER_STATUS_MAX.
  EXPECT_EQ(ParsePower("POWER_STATUS_MAX,5,0.00,0.00,0.00\n")->status,
            PowerReading::Status::kInvalid);
  for (const char* bad : {"", "POWER_STATUS_VALID", "POWER_STATUS_HOT,1,0,0,0",
                          "POWER_STATUS_VALID,1,0,0", "POWER_STATUS_VALID,1,0,0,0,0",
                          "POWER_STATUS_VALID,1,0,101,0", "POWER_STATUS_VALID,x,0,0,0",
                          "POWER_STATUS_VALID,1,-1,0,0", "POWER_STATUS_VALID,1,nan,0,0"}) {
    EXPECT_FALSE(ParsePower(bad).ok()) << bad;
  }
}

TEST(ParsePeCounters, HeaderThenRowsOfCycleCounters) {
  const std::vector<PeCounters> rows =
      *ParsePeCounters("xrow_grp,mm_active,wl_active,idle\n0,10,20,30\n1,11,21,31\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].row_group, 1u);
  EXPECT_EQ(rows[1].mm_active, 11u);
  EXPECT_EQ(rows[1].wl_active, 21u);
  EXPECT_EQ(rows[1].idle, 31u);
  EXPECT_TRUE(ParsePeCounters("xrow_grp,mm_active,wl_active,idle\n")->empty());
  for (const char* bad : {"", "0,1,2,3\n", "xrow_grp,mm_active,wl_active,idle\n0,1,2\n",
                          "xrow_grp,mm_active,wl_active,idle\n0,1,2,3,4\n",
                          "xrow_grp,mm_active,wl_active,idle\n0,1,x,3\n",
                          "xrow_grp,mm_active,wl_active,idle\n999,1,2,3\n"}) {
    EXPECT_FALSE(ParsePeCounters(bad).ok()) << bad;
  }
}

TEST(SysfsTree, NoDriverIsNoDevicesNotAnError) {
  FakeTree tree;
  SysfsTree sysfs(tree.root());
  ASSERT_TRUE(sysfs.ListDevices().ok());
  EXPECT_TRUE(sysfs.ListDevices()->empty());
  const TreeReading r = sysfs.Read();
  EXPECT_FALSE(r.driver_version.has_value());
  EXPECT_TRUE(r.devices.empty());
  EXPECT_TRUE(r.errors.empty());
}

TEST(SysfsTree, ReadsATrainium2TreeAsDriver228WritesIt) {
  FakeTree tree;
  tree.WriteDriverVersion("2.28.4.0");
  for (int n : {0, 1, 10, 2}) tree.WriteTrn2Device(n);
  tree.Write("devices/virtual/neuron_device/not_a_device/core_count", "1");
  const TreeReading r = SysfsTree(tree.root()).Read();
  EXPECT_EQ(r.driver_version, "2.28.4.0");
  ASSERT_EQ(r.devices.size(), 4u);
  EXPECT_EQ(r.devices[3].index, 10);  // numeric order, not the directory's string order
  const DeviceReading& d = r.devices[1];
  EXPECT_EQ(d.index, 1);
  EXPECT_TRUE(d.errors.empty()) << d.errors.front();
  EXPECT_TRUE(d.absent.empty()) << d.absent.front();
  EXPECT_EQ(d.core_count, 8u);
  EXPECT_EQ(d.connected_devices, (std::vector<int>{0, 2}));
  EXPECT_EQ(d.serial_number, "1d0f000000000001");
  EXPECT_EQ(d.arch_type, "NDv3");
  EXPECT_EQ(d.instance_type, "Trn2");
  EXPECT_EQ(d.device_name, "Trainium2");
  ASSERT_EQ(d.host_memory.size(), 8u);
  EXPECT_EQ(d.host_memory[0].name, "application_memory");
  EXPECT_EQ(d.host_memory[0].total, 2000u);  // `total` is the current usage; `present` not read
  EXPECT_EQ(d.host_memory[0].peak, 4000u);
  EXPECT_EQ(d.mem_ecc_uncorrected, 1u);
  EXPECT_EQ(d.mem_ecc_repairable_uncorrected, 2u);
  EXPECT_EQ(d.sram_ecc_uncorrected, 0u);
  EXPECT_EQ(d.hbm_ecc_err_count, 3u);
  EXPECT_EQ(d.repairable_hbm_ecc_err_count, 4u);
  ASSERT_TRUE(d.power.has_value());
  EXPECT_DOUBLE_EQ(d.power->avg_percent, 18.86);
  ASSERT_EQ(d.cores.size(), 8u);
  const CoreReading& c = d.cores[3];
  EXPECT_EQ(c.index, 3u);
  EXPECT_EQ(Find(c.outcomes, "success"), 1003u);
  EXPECT_EQ(Find(c.outcomes, "timeout"), 0u);
  EXPECT_EQ(Find(c.other_info, "flop_count"), 8'000'000'000'000ULL);
  EXPECT_EQ(Find(c.other_info, "nc_time_in_use"), 2'000'000u);
  EXPECT_EQ(c.outcomes.size(), 24u);
  EXPECT_EQ(c.other_info.size(), 6u);
  ASSERT_EQ(c.device_memory.size(), 11u);
  EXPECT_EQ(c.device_memory[4].name, "model_code");  // sorted by name
  EXPECT_EQ(c.device_memory[4].total, 4u << 20);
  ASSERT_EQ(c.pe_counters.size(), 4u);
  EXPECT_EQ(c.pe_counters[2].mm_active, 4002u);
}

// core_count and connected_devices are readable by root only: without them the core count comes
// from the neuron_core<K> directories, and the neighbours are unknown (not "none").
TEST(SysfsTree, WithoutRootOnlyFilesTheCoresAreCounted) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  tree.Remove(tree.Device(0, "core_count"));
  tree.Remove(tree.Device(0, "connected_devices"));
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  EXPECT_EQ(d.core_count, 8u);
  EXPECT_FALSE(d.connected_devices.has_value());
  EXPECT_TRUE(Contains(d.absent, "neuron0/core_count"));
}

TEST(SysfsTree, AWrappedMemoryCounterIsAnErrorNotAReading) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  tree.Write(tree.Device(0, "neuron_core1/stats/memory_usage/device_mem/tensors/total"),
             "18446744073709541616\n");
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  EXPECT_EQ(d.cores[1].device_memory.size(), 10u);  // tensors left out
  EXPECT_TRUE(Contains(d.errors,
                       "tensors/total: 18446744073709541616 bytes is not a plausible "
                       "usage (the counter wrapped)"));
}

TEST(SysfsTree, OlderDriversLackHealthStatusAndThatIsNoError) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  tree.Remove(tree.Device(0, "stats/hardware/health_status"));
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  EXPECT_TRUE(d.errors.empty());
  EXPECT_FALSE(d.hbm_ecc_err_count.has_value());  // unknown, not zero
  EXPECT_TRUE(Contains(d.absent, "stats/hardware/health_status"));
  EXPECT_EQ(d.mem_ecc_uncorrected, 0u);  // the 2.24 counters are still read
}

TEST(SysfsTree, APartialAndBrokenTreeNamesEveryProblem) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  tree.Remove(tree.Device(0, "connected_devices"));
  tree.Write(tree.Device(0, "info/serial_number"), "\n");
  tree.Write(tree.Device(0, "stats/hardware/mem_ecc_uncorrected"), "busy\n");
  tree.Write(tree.Device(0, "stats/power/utilization"), "POWER_STATUS_NO_DATA,0,0.00,0.00,0.00\n");
  tree.Write(tree.Device(0, "neuron_core2/stats/status/success/total"), "garbage\n");
  tree.Write(tree.Device(0, "neuron_core5/stats/other_info/flop_count/total"),
             std::string(70000, '7'));  // larger than any sysfs page
  tree.Remove(tree.Device(0, "neuron_core7/stats/memory_usage"));
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  EXPECT_EQ(d.core_count, 8u);
  EXPECT_FALSE(d.connected_devices.has_value());
  EXPECT_TRUE(Contains(d.absent, "neuron0/connected_devices"));
  EXPECT_EQ(d.serial_number, "");  // the driver prints an empty line when it has none
  EXPECT_FALSE(d.mem_ecc_uncorrected.has_value());
  EXPECT_TRUE(Contains(d.errors,
                       "neuron0/stats/hardware/mem_ecc_uncorrected: \"busy\" is not a "
                       "number"));
  ASSERT_TRUE(d.power.has_value());
  EXPECT_EQ(d.power->status, PowerReading::Status::kNoData);
  ASSERT_EQ(d.cores.size(), 8u);
  // The broken counter is missing from its core, not zero; the core's others are read.
  const CoreReading& c2 = d.cores[2];
  EXPECT_TRUE(std::none_of(c2.outcomes.begin(), c2.outcomes.end(),
                           [](const NamedCounter& c) { return c.name == "success"; }));
  EXPECT_EQ(c2.outcomes.size(), 23u);
  EXPECT_TRUE(Contains(d.errors,
                       "neuron_core2/stats/status/success/total: \"garbage\" is not a "
                       "number"));
  EXPECT_TRUE(Contains(d.errors,
                       "neuron_core5/stats/other_info/flop_count/total: file larger "
                       "than"));
  EXPECT_TRUE(d.cores[7].device_memory.empty());
  EXPECT_EQ(d.errors.size(), 3u);
}

TEST(SysfsTree, AFileThatIsNotRegularIsRefusedNotRead) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  tree.Remove(tree.Device(0, "core_count"));
  std::filesystem::create_directories(tree.root() + "/" + tree.Device(0, "core_count"));
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  EXPECT_TRUE(Contains(d.errors, "core_count: not a regular file"));
  EXPECT_EQ(d.core_count, 8u);  // from the neuron_core<K> directories
}

TEST(SysfsTree, CountsFromTheTreeAreBounded) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  tree.Write(tree.Device(0, "core_count"), "100000");
  for (int k = 8; k < 80; ++k) {
    tree.Write(tree.Device(0, "neuron_core" + std::to_string(k) + "/stats/status/success/total"),
               "1\n");
  }
  for (int n = 1; n < 70; ++n) tree.Write(tree.Device(n, "core_count"), "2");
  TreeLimits limits;
  limits.max_devices = 64;
  limits.max_cores_per_device = 64;
  const SysfsTree sysfs(tree.root(), limits);
  EXPECT_EQ(sysfs.ListDevices()->size(), 64u);
  const DeviceReading d = sysfs.ReadDevice(0);
  // Neither the file nor the (capped) directories can say how many cores there are.
  EXPECT_FALSE(d.core_count.has_value());
  EXPECT_TRUE(Contains(d.errors, "core_count: 100000 cores is more than 64"));
  EXPECT_EQ(d.cores.size(), 64u);
}

}  // namespace
}  // namespace neuronmon::neurondev
