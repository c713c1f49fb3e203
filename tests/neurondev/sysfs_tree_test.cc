// The driver's sysfs tree as SysfsTree reads it: attribute parsers, a Trainium2 tree as driver
// 2.28 writes it, an older tree without health_status, and a broken one (missing files, "busy",
// garbage, huge files, too many cores) — every problem named by path, none a crash or a zero.
// SysfsSampler reads the same as SysfsTree while the tree changes under it: values rewritten in
// place, devices removed, added and replaced, files broken, and with few descriptors to keep.
#include "neurondev/sysfs_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "neurondev/sysfs_sampler.h"
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

// The driver reads each 64-bit counter as two 32-bit halves: a torn read is off by 2^32 in one
// counter. Consistent growth is a reading; a row group behind, one that grew 2^31 more than the
// others, or another row count is not.
TEST(PeCountersTorn, TellsATornReadFromGrowth) {
  const auto rows = [](const char* text) { return *ParsePeCounters(text); };
  const std::vector<PeCounters> before =
      rows("xrow_grp,mm_active,wl_active,idle\n0,10,20,30\n1,10,20,30\n");
  EXPECT_EQ(PeCountersTorn({}, before), "");
  EXPECT_EQ(PeCountersTorn(before, rows("xrow_grp,mm_active,wl_active,idle\n0,1000,20,60\n"
                                        "1,990,30,60\n")),
            "");
  EXPECT_EQ(PeCountersTorn(before, rows("xrow_grp,mm_active,wl_active,idle\n0,9,20,30\n"
                                        "1,10,20,30\n")),
            "row group 0 went backwards");
  EXPECT_EQ(PeCountersTorn(before, rows("xrow_grp,mm_active,wl_active,idle\n0,10,20,4294967326\n"
                                        "1,10,20,31\n")),
            "one row group's cycles grew 2^31 more than another's");
  EXPECT_EQ(PeCountersTorn(before, rows("xrow_grp,mm_active,wl_active,idle\n0,10,20,30\n")),
            "1 rows after 2");
  EXPECT_EQ(PeCountersTorn({}, rows("xrow_grp,mm_active,wl_active,idle\n1,1,1,1\n0,1,1,1\n")),
            "row groups out of order");
}

TEST(ParseComponents, NamesSeparatedAnyWayBoundedAndPrintable) {
  EXPECT_EQ(ParseComponents("\n"), std::vector<std::string>{});
  EXPECT_EQ(ParseComponents("hbm\nlink_3, sram\n"),
            (std::vector<std::string>{"hbm", "link_3", "sram"}));
  EXPECT_EQ(ParseComponents("a\x1b[2Jb"), std::vector<std::string>{"a??2Jb"});
  std::string many;
  for (int i = 0; i < 100; ++i) many += "c" + std::to_string(i) + " ";
  EXPECT_EQ(ParseComponents(many).size(), 32u);
  EXPECT_EQ(ParseComponents(std::string(200, 'x')).front().size(), 64u);
}

// health_status/ is listed, not guessed: every entry is read, those of newer drivers too.
TEST(SysfsTree, EveryHealthStatusEntryIsRead) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  const std::string h = "stats/hardware/health_status/";
  tree.Write(tree.Device(0, h + "mem_ecc_corrected"), "7\n");
  tree.Write(tree.Device(0, h + "sram_ecc_corrected"), "1\n");
  tree.Write(tree.Device(0, h + "unhealthy_components"), "hbm\n");
  tree.Write(tree.Device(0, h + "healthcheck_heartbeat"), "1234\n");
  tree.Write(tree.Device(0, h + "some_new_counter"), "5\n");
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  EXPECT_TRUE(d.errors.empty());
  EXPECT_EQ(d.mem_ecc_corrected, 7u);
  EXPECT_EQ(d.sram_ecc_corrected, 1u);
  EXPECT_EQ(d.unhealthy_components, std::vector<std::string>{"hbm"});
  EXPECT_EQ(d.healthcheck_heartbeat, 1234u);
  ASSERT_EQ(d.health_other.size(), 1u);
  EXPECT_EQ(d.health_other[0].name, "some_new_counter");
  EXPECT_EQ(d.health_other[0].total, 5u);
  EXPECT_TRUE(d.hw_error_event.has_value());
  // neuron-ls --driver names it among the unknown nodes; the entries it knows are not.
  const NodeIndex nodes = SysfsTree(tree.root()).IndexDevice(0, "2.30.2.0");
  EXPECT_EQ(nodes.unknown(), std::vector<std::string>{h + "some_new_counter"});
}

// What a broken driver tree may hold is named, never read as a value.
TEST(SysfsTree, ImplausibleValuesAreErrorsNotReadings) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  const std::string dev = tree.root() + "/devices/virtual/neuron_device/neuron0";
  tree.Write(tree.Device(0, "core_count"), "0");
  tree.Write(tree.Device(0, "stats/memory_usage/host_mem/tensors/peak"), "18446744073709527040\n");
  tree.Remove(tree.Device(0, "stats/hardware/health_status"));
  tree.Write(tree.Device(0, "stats/hardware/health_status"), "not a directory\n");
  const DeviceReading d = SysfsTree(tree.root()).ReadDevice(0);
  auto has = [&](const std::vector<std::string>& list, const std::string& text) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& e) { return e.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has(d.errors, dev + "/core_count: 0 cores")) << ::testing::PrintToString(d.errors);
  EXPECT_EQ(d.core_count, 8u);  // from the neuron_core<K> directories instead
  EXPECT_TRUE(has(d.errors, dev + "/stats/memory_usage/host_mem/tensors/peak: "));
  for (const MemoryCategory& m : d.host_memory) {
    if (m.name == "tensors") {
      EXPECT_FALSE(m.peak.has_value());
    }
  }
  EXPECT_TRUE(has(d.errors, dev + "/stats/hardware/health_status: not a directory"));
  EXPECT_FALSE(has(d.absent, "health_status"));
}

// A directory with more entries than the limit keeps the first by name, whatever the order the
// filesystem lists them in (within four times the limit, which bounds what is listed at all).
TEST(SysfsTree, OversizedDirectoriesKeepTheFirstNames) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  for (int i = 0; i < 20; ++i) {
    tree.Write(tree.Device(0, "stats/memory_usage/host_mem/zz" + std::to_string(i) + "/total"),
               "1\n");
  }
  TreeLimits limits;
  limits.max_entries_per_directory = 8;
  const DeviceReading d = SysfsTree(tree.root(), limits).ReadDevice(0);
  std::vector<std::string> names;
  for (const MemoryCategory& m : d.host_memory) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"application_memory", "constants", "dma_buffers",
                                             "dma_rings", "driver_memory", "notifications",
                                             "tensors", "uncategorized"}));
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

// Field by field, so that a difference names the device, core and field.
void ExpectSameCounters(const std::vector<NamedCounter>& a, const std::vector<NamedCounter>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].total, b[i].total) << a[i].name;
  }
}

void ExpectSameMemory(const std::vector<MemoryCategory>& a, const std::vector<MemoryCategory>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].total, b[i].total) << a[i].name;
    EXPECT_EQ(a[i].peak, b[i].peak) << a[i].name;
  }
}

void ExpectSameCore(const CoreReading& a, const CoreReading& b) {
  SCOPED_TRACE("core " + std::to_string(a.index));
  EXPECT_EQ(a.index, b.index);
  ExpectSameCounters(a.outcomes, b.outcomes);
  ExpectSameCounters(a.other_info, b.other_info);
  ExpectSameMemory(a.device_memory, b.device_memory);
  ASSERT_EQ(a.pe_counters.size(), b.pe_counters.size());
  for (std::size_t i = 0; i < a.pe_counters.size(); ++i) {
    EXPECT_EQ(a.pe_counters[i].row_group, b.pe_counters[i].row_group);
    EXPECT_EQ(a.pe_counters[i].mm_active, b.pe_counters[i].mm_active);
    EXPECT_EQ(a.pe_counters[i].wl_active, b.pe_counters[i].wl_active);
    EXPECT_EQ(a.pe_counters[i].idle, b.pe_counters[i].idle);
  }
}

void ExpectSameDevice(const DeviceReading& a, const DeviceReading& b) {
  SCOPED_TRACE("device " + std::to_string(a.index));
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.core_count, b.core_count);
  EXPECT_EQ(a.connected_devices, b.connected_devices);
  EXPECT_EQ(a.serial_number, b.serial_number);
  EXPECT_EQ(a.arch_type, b.arch_type);
  EXPECT_EQ(a.instance_type, b.instance_type);
  EXPECT_EQ(a.device_name, b.device_name);
  ExpectSameMemory(a.host_memory, b.host_memory);
  EXPECT_EQ(a.sram_ecc_uncorrected, b.sram_ecc_uncorrected);
  EXPECT_EQ(a.mem_ecc_uncorrected, b.mem_ecc_uncorrected);
  EXPECT_EQ(a.mem_ecc_repairable_uncorrected, b.mem_ecc_repairable_uncorrected);
  EXPECT_EQ(a.hbm_ecc_err_count, b.hbm_ecc_err_count);
  EXPECT_EQ(a.repairable_hbm_ecc_err_count, b.repairable_hbm_ecc_err_count);
  EXPECT_EQ(a.sram_ecc_err_count, b.sram_ecc_err_count);
  EXPECT_EQ(a.hw_error_event, b.hw_error_event);
  ASSERT_EQ(a.power.has_value(), b.power.has_value());
  if (a.power) {
    EXPECT_EQ(a.power->status, b.power->status);
    EXPECT_EQ(a.power->epoch_seconds, b.power->epoch_seconds);
    EXPECT_EQ(a.power->min_percent, b.power->min_percent);
    EXPECT_EQ(a.power->max_percent, b.power->max_percent);
    EXPECT_EQ(a.power->avg_percent, b.power->avg_percent);
  }
  EXPECT_EQ(a.errors, b.errors);
  EXPECT_EQ(a.absent, b.absent);
  ASSERT_EQ(a.cores.size(), b.cores.size());
  for (std::size_t i = 0; i < a.cores.size(); ++i) ExpectSameCore(a.cores[i], b.cores[i]);
}

// `sampled` is what SysfsTree reads from the same tree.
void ExpectAsRead(const TreeReading& sampled, const FakeTree& tree) {
  const TreeReading read = SysfsTree(tree.root()).Read();
  EXPECT_EQ(sampled.driver_version, read.driver_version);
  EXPECT_EQ(sampled.errors, read.errors);
  ASSERT_EQ(sampled.devices.size(), read.devices.size());
  for (std::size_t i = 0; i < read.devices.size(); ++i) {
    ExpectSameDevice(sampled.devices[i], read.devices[i]);
  }
}

// Descriptors a Trainium2 device of driver 2.28 keeps open: its directory, 8 host memory
// categories × {total,peak}, 7 ECC and health counters, power, reset, and per core 24 outcomes, 6
// other_info counters, 11 device memory categories × {total,peak} and pe_cntrs.
constexpr std::size_t kFilesPerTrn2Device = 1 + 16 + 7 + 1 + 1 + 8 * (24 + 6 + 22 + 1);

// Replaces `relative`'s contents as a writer that writes a temporary file and renames it does.
void WriteByRename(const FakeTree& tree, const std::string& relative, const std::string& text) {
  tree.Write(relative + ".tmp", text);
  std::filesystem::rename(tree.root() + "/" + relative + ".tmp", tree.root() + "/" + relative);
}

TEST(SysfsSampler, ReadsWhatSysfsTreeReadsFromAWholeAndABrokenTree) {
  FakeTree tree;
  tree.WriteDriverVersion("2.28.4.0");
  for (int n : {0, 1, 10}) tree.WriteTrn2Device(n);
  tree.Remove(tree.Device(1, "stats/hardware/health_status"));
  tree.Remove(tree.Device(1, "connected_devices"));
  tree.Write(tree.Device(1, "stats/hardware/mem_ecc_uncorrected"), "busy\n");
  tree.Write(tree.Device(1, "neuron_core5/stats/other_info/flop_count/total"),
             std::string(70000, '7'));
  tree.Remove(tree.Device(1, "neuron_core6/stats/tensor_engine/pe_cntrs"));
  std::filesystem::create_directories(tree.root() + "/" +
                                      tree.Device(1, "neuron_core6/stats/tensor_engine/pe_cntrs"));
  tree.Write(tree.Device(10, "core_count"), "100000");
  SysfsSampler sampler(tree.root());
  const TreeReading first = sampler.Sample();  // discovers and opens
  EXPECT_EQ(first.devices.size(), 3u);
  EXPECT_EQ(first.devices[1].errors.size(), 3u);
  ExpectAsRead(first, tree);
  ExpectAsRead(sampler.Sample(), tree);  // reads what it kept open
  // The broken files are opened for each read; every other one is kept.
  EXPECT_EQ(sampler.open_files(), 1 + 3 * kFilesPerTrn2Device - 4 - 2);
}

TEST(SysfsSampler, SeesValuesWrittenInPlaceAtTheNextSample) {
  FakeTree tree;
  tree.WriteDriverVersion("2.28.4.0");
  tree.WriteTrn2Device(0);
  SysfsSampler sampler(tree.root());
  ExpectAsRead(sampler.Sample(), tree);
  EXPECT_EQ(sampler.open_files(), 1 + kFilesPerTrn2Device);
  tree.Write(tree.Device(0, "neuron_core3/stats/status/success/total"), "5000\n");
  tree.Write(tree.Device(0, "neuron_core3/stats/tensor_engine/pe_cntrs"),
             "xrow_grp,mm_active,wl_active,idle\n0,9,9,9\n");
  tree.Write(tree.Device(0, "stats/memory_usage/host_mem/tensors/total"), "123456789\n");
  tree.Write(tree.Device(0, "stats/power/utilization"), "POWER_STATUS_VALID,1764720060,1,2,3\n");
  tree.Write(tree.Device(0, "stats/hardware/health_status/hw_error_event"), "1\n");
  const TreeReading r = sampler.Sample();
  ExpectAsRead(r, tree);
  const CoreReading& c = r.devices[0].cores[3];
  EXPECT_EQ(Find(c.outcomes, "success"), 5000u);
  ASSERT_EQ(c.pe_counters.size(), 1u);
  EXPECT_EQ(c.pe_counters[0].mm_active, 9u);
  EXPECT_EQ(r.devices[0].host_memory[6].name, "tensors");
  EXPECT_EQ(r.devices[0].host_memory[6].total, 123456789u);
  EXPECT_EQ(r.devices[0].power->epoch_seconds, 1764720060u);
  EXPECT_EQ(r.devices[0].hw_error_event, 1u);
}

TEST(SysfsSampler, AFileThatTurnsBadGivesTheErrorSysfsTreeGives) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  SysfsSampler sampler(tree.root());
  ExpectAsRead(sampler.Sample(), tree);
  tree.Write(tree.Device(0, "stats/hardware/mem_ecc_uncorrected"), "busy\n");
  tree.Write(tree.Device(0, "neuron_core1/stats/memory_usage/device_mem/tensors/total"),
             "18446744073709541616\n");
  tree.Write(tree.Device(0, "neuron_core2/stats/tensor_engine/pe_cntrs"), "garbage\n");
  tree.Write(tree.Device(0, "neuron_core5/stats/other_info/flop_count/total"),
             std::string(70000, '7'));
  tree.Write(tree.Device(0, "stats/power/utilization"), "");
  const TreeReading r = sampler.Sample();
  ExpectAsRead(r, tree);
  const DeviceReading& d = r.devices[0];
  EXPECT_EQ(d.errors.size(), 5u);
  EXPECT_TRUE(Contains(d.errors, "neuron0/stats/hardware/mem_ecc_uncorrected: \"busy\" is not"));
  EXPECT_TRUE(Contains(d.errors, "neuron_core5/stats/other_info/flop_count/total: file larger"));
  EXPECT_FALSE(d.mem_ecc_uncorrected.has_value());
  EXPECT_FALSE(d.power.has_value());
  // Mended in place, the files read again.
  tree.Write(tree.Device(0, "stats/hardware/mem_ecc_uncorrected"), "7\n");
  tree.Write(tree.Device(0, "neuron_core5/stats/other_info/flop_count/total"), "8\n");
  const TreeReading mended = sampler.Sample();
  ExpectAsRead(mended, tree);
  EXPECT_EQ(mended.devices[0].mem_ecc_uncorrected, 7u);
  EXPECT_EQ(mended.devices[0].errors.size(), 3u);
}

TEST(SysfsSampler, FollowsDevicesRemovedAddedAndReplaced) {
  FakeTree tree;
  for (int n : {0, 1, 2}) tree.WriteTrn2Device(n);
  SysfsSampler sampler(tree.root());
  ExpectAsRead(sampler.Sample(), tree);
  tree.Remove(tree.Device(1));
  const TreeReading removed = sampler.Sample();
  ExpectAsRead(removed, tree);
  EXPECT_EQ(removed.devices.size(), 2u);
  EXPECT_EQ(sampler.open_files(), 2 * kFilesPerTrn2Device);  // device 1's are closed
  tree.WriteTrn2Device(1);
  tree.WriteTrn2Device(3);
  tree.Write(tree.Device(3, "neuron_core0/stats/status/success/total"), "77\n");
  const TreeReading added = sampler.Sample();
  ExpectAsRead(added, tree);
  ASSERT_EQ(added.devices.size(), 4u);
  EXPECT_EQ(Find(added.devices[3].cores[0].outcomes, "success"), 77u);
  // Removed and added again between two samples (a driver reload): new files, a new serial.
  tree.Remove(tree.Device(2));
  tree.WriteTrn2Device(2);
  tree.Write(tree.Device(2, "info/serial_number"), "1d0f0000000000ff\n");
  tree.Write(tree.Device(2, "neuron_core0/stats/status/success/total"), "1\n");
  const TreeReading replaced = sampler.Sample();
  ExpectAsRead(replaced, tree);
  EXPECT_EQ(replaced.devices[2].serial_number, "1d0f0000000000ff");
  EXPECT_EQ(Find(replaced.devices[2].cores[0].outcomes, "success"), 1u);
  EXPECT_EQ(sampler.open_files(), 4 * kFilesPerTrn2Device);
}

// A writer that renames files into place, or adds counters, is seen at the next discovery.
TEST(SysfsSampler, ChangesOfLayoutAreSeenAtTheNextDiscovery) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  SamplerOptions options;
  options.rediscover_every = 3;
  SysfsSampler sampler(tree.root(), {}, options);
  ExpectAsRead(sampler.Sample(), tree);  // discovery
  WriteByRename(tree, tree.Device(0, "neuron_core0/stats/status/success/total"), "41\n");
  tree.Write(tree.Device(0, "neuron_core0/stats/status/new_outcome/total"), "3\n");
  tree.Remove(tree.Device(0, "neuron_core7"));
  sampler.Sample();
  sampler.Sample();
  const TreeReading r = sampler.Sample();  // the fourth: discovery again
  ExpectAsRead(r, tree);
  EXPECT_EQ(Find(r.devices[0].cores[0].outcomes, "success"), 41u);
  EXPECT_EQ(Find(r.devices[0].cores[0].outcomes, "new_outcome"), 3u);
  EXPECT_EQ(r.devices[0].cores.size(), 7u);
  // Rediscover() asks for one at the next sample.
  WriteByRename(tree, tree.Device(0, "neuron_core0/stats/status/success/total"), "42\n");
  tree.Remove(tree.Device(0, "stats/hardware/sram_ecc_uncorrected"));
  std::filesystem::create_directories(tree.root() + "/" +
                                      tree.Device(0, "stats/hardware/sram_ecc_uncorrected"));
  sampler.Rediscover();
  const TreeReading again = sampler.Sample();
  ExpectAsRead(again, tree);
  EXPECT_EQ(Find(again.devices[0].cores[0].outcomes, "success"), 42u);
  EXPECT_TRUE(Contains(again.devices[0].errors, "sram_ecc_uncorrected: not a regular file"));
}

TEST(SysfsSampler, KeepsNoMoreDescriptorsThanAllowedAndReadsTheSame) {
  FakeTree tree;
  tree.WriteDriverVersion("2.28.4.0");
  for (int n : {0, 1}) tree.WriteTrn2Device(n);
  for (std::size_t max : {0, 1, 10, 500}) {
    SCOPED_TRACE("max_open_files " + std::to_string(max));
    TreeLimits limits;
    limits.max_open_files = max;
    SysfsSampler sampler(tree.root(), limits);
    ExpectAsRead(sampler.Sample(), tree);
    EXPECT_EQ(sampler.open_files(), max);
    tree.Write(tree.Device(1, "neuron_core7/stats/status/success/total"), std::to_string(max));
    tree.Write(tree.Device(0, "stats/memory_usage/host_mem/tensors/peak"), "garbage");
    const TreeReading r = sampler.Sample();
    ExpectAsRead(r, tree);
    EXPECT_EQ(Find(r.devices[1].cores[7].outcomes, "success"), max);
    EXPECT_LE(sampler.open_files(), max);
  }
}

// The fixtures other tests read with SysfsTree: whole hosts, a broken one, and driver 2.30's
// counters moving between samples as a running process moves them.
TEST(SysfsSampler, ReadsTheHostFixturesAsSysfsTreeDoes) {
  for (void (FakeTree::*write)() const :
       {&FakeTree::WriteInf2_48xlarge_Driver224, &FakeTree::WriteTrn1_32xlarge_Driver226,
        &FakeTree::WritePartialTree}) {
    FakeTree tree;
    (tree.*write)();
    SysfsSampler sampler(tree.root());
    ExpectAsRead(sampler.Sample(), tree);
    ExpectAsRead(sampler.Sample(), tree);
  }
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  SysfsSampler sampler(tree.root());
  ExpectAsRead(sampler.Sample(), tree);
  EXPECT_EQ(sampler.open_files(), 1 + 16 * kFilesPerTrn2Device);  // TreeLimits' figure
  for (int second = 0; second < 3; ++second) {
    tree.AdvanceTrn2Counters(std::chrono::seconds(1), 0.25 * second, second);
    ExpectAsRead(sampler.Sample(), tree);
  }
}

// The opt-in for the CPU budget: ECC and health re-read one sample in two, outcomes and memory
// usage one in three, peaks, the other counts and power one in four; the live activity at every
// sample.
TEST(SysfsSampler, PacedFilesAreReReadWithinTheirPace) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  SamplerOptions options;
  options.errors_every = 2;
  options.slow_every = 3;
  options.rare_every = 4;
  SysfsSampler sampler(tree.root(), {}, options);
  ExpectAsRead(sampler.Sample(), tree);  // a discovery reads every file
  const std::string core3 = "neuron_core3/stats/";
  tree.Write(tree.Device(0, core3 + "other_info/nc_time_in_use/total"), "999\n");
  tree.Write(tree.Device(0, core3 + "tensor_engine/pe_cntrs"),
             "xrow_grp,mm_active,wl_active,idle\n0,9,9,9\n");
  tree.Write(tree.Device(0, core3 + "status/success/total"), "5000\n");
  tree.Write(tree.Device(0, "stats/hardware/mem_ecc_uncorrected"), "3\n");
  tree.Write(tree.Device(0, "stats/memory_usage/host_mem/tensors/total"), "busy\n");
  tree.Write(tree.Device(0, "stats/memory_usage/host_mem/constants/total"), "99999999\n");
  tree.Write(tree.Device(0, core3 + "other_info/model_load_count/total"), "77\n");
  const TreeReading next = sampler.Sample();
  EXPECT_EQ(Find(next.devices[0].cores[3].other_info, "nc_time_in_use"), 999u);
  ASSERT_EQ(next.devices[0].cores[3].pe_counters.size(), 1u);
  EXPECT_EQ(next.devices[0].cores[3].pe_counters[0].mm_active, 9u);
  const TreeReading second = sampler.Sample();
  EXPECT_EQ(second.devices[0].mem_ecc_uncorrected, 3u) << "ECC within errors_every samples";
  sampler.Sample();
  // A usage read before its high-water mark: the mark is never reported below it.
  const TreeReading fourth = sampler.Sample();
  for (const MemoryCategory& m : fourth.devices[0].host_memory) {
    if (m.peak) {
      EXPECT_GE(*m.peak, m.total) << m.name;
    }
  }
  // Four samples after the writes every paced file has been read again; then each sample
  // repeats what they said, errors included.
  for (int i = 0; i < 4; ++i) {
    const TreeReading r = sampler.Sample();
    ExpectAsRead(r, tree);
    EXPECT_EQ(Find(r.devices[0].cores[3].outcomes, "success"), 5000u);
    EXPECT_EQ(Find(r.devices[0].cores[3].other_info, "model_load_count"), 77u);
    EXPECT_TRUE(Contains(r.devices[0].errors, "host_mem/tensors/total: \"busy\" is not a number"));
  }
}

// With live busy time (driver 2.30.2+) pe_cntrs is re-read at the rare pace, and between its
// re-reads the rows kept are handed on without reading or parsing; a re-read that fails is tried
// again at the very next sample rather than waiting for the pace.
TEST(SysfsSampler, PacedTensorEngineRowsAreKeptAndAFailedReReadIsRetriedAtOnce) {
  FakeTree tree;
  tree.WriteTrn2Device(0);
  const std::string pe = tree.Device(0, "neuron_core3/stats/tensor_engine/pe_cntrs");
  tree.Write(pe, "xrow_grp,mm_active,wl_active,idle\n0,10,10,10\n");
  SamplerOptions options;
  options.rare_every = 4;
  options.slow_pe_counters = true;
  SysfsSampler sampler(tree.root(), {}, options);
  ASSERT_EQ(sampler.Sample().devices[0].cores[3].pe_counters.size(), 1u);
  tree.Write(pe, "not counters\n");
  int failed_at = -1;
  for (int i = 0; i < 4 && failed_at < 0; ++i) {
    const TreeReading r = sampler.Sample();
    if (r.devices[0].cores[3].pe_counters.empty()) {
      failed_at = i;
      EXPECT_TRUE(Contains(r.devices[0].errors, "pe_cntrs")) << "the failure is named";
    } else {
      EXPECT_EQ(r.devices[0].cores[3].pe_counters[0].mm_active, 10u) << "the rows kept";
    }
  }
  ASSERT_GE(failed_at, 0) << "re-read within rare_every samples";
  tree.Write(pe, "xrow_grp,mm_active,wl_active,idle\n0,20,20,20\n");
  const TreeReading next = sampler.Sample();
  ASSERT_EQ(next.devices[0].cores[3].pe_counters.size(), 1u);
  EXPECT_EQ(next.devices[0].cores[3].pe_counters[0].mm_active, 20u);
}

TEST(SysfsSampler, NoDriverAndADriverThatComesLater) {
  FakeTree tree;
  SysfsSampler sampler(tree.root());
  const TreeReading none = sampler.Sample();
  EXPECT_TRUE(none.devices.empty());
  EXPECT_TRUE(none.errors.empty());
  EXPECT_EQ(sampler.open_files(), 0u);
  tree.WriteDriverVersion("2.28.4.0");
  tree.WriteTrn2Device(0);
  const TreeReading installed = sampler.Sample();
  ExpectAsRead(installed, tree);
  EXPECT_EQ(installed.driver_version, "2.28.4.0");
  EXPECT_EQ(installed.devices.size(), 1u);
}

}  // namespace
}  // namespace neuronmon::neurondev
