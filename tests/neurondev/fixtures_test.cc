// Whole real hosts as their driver version lays out the sysfs tree (FakeTree's fixtures), read by
// SysfsTree: inf2.48xlarge under 2.24, trn1.32xlarge under 2.26, trn2.48xlarge under 2.28
// and 2.30.2 (whose counters move while processes run), and a partial, broken trn2 tree whose every
// problem must be named by path while everything else is still read. Expected values are written
// out here from the fixtures' documented derivation (tag = fixture·10000 + device·100 + core), not
// taken from the writer's code.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "neurondev/sysfs_tree.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using testing::FakeTree;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::uint64_t Find(const std::vector<NamedCounter>& counters, const std::string& name) {
  for (const NamedCounter& c : counters) {
    if (c.name == name) return c.total;
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

std::uint64_t FindMemory(const std::vector<MemoryCategory>& categories, const std::string& name) {
  for (const MemoryCategory& c : categories) {
    if (c.name == name) return c.total;
  }
  ADD_FAILURE() << "no memory category " << name;
  return 0;
}

// neuron-ls's neighbours, written independently of the writer.
std::vector<int> Ring12(int n) { return {(n + 11) % 12, (n + 1) % 12}; }
std::vector<int> Torus4x4(int n) {  // up, left, down, right
  const int row = n / 4, col = n % 4;
  return {(n + 12) % 16, row * 4 + (col + 3) % 4, (n + 4) % 16, row * 4 + (col + 1) % 4};
}

struct Host {
  std::string version;
  std::size_t devices;
  std::uint32_t cores;
  std::string arch_type, instance_type, device_name;
  std::vector<int> (*neighbours)(int);
  bool health_status;  // driver 2.28+
};

// What every complete fixture must read as: every device and core whole, no error, and nothing
// absent but health_status before 2.28.
void ExpectCompleteHost(const FakeTree& tree, const TreeReading& r, const Host& host) {
  EXPECT_EQ(r.driver_version, host.version);
  EXPECT_EQ(r.errors, std::vector<std::string>{});
  ASSERT_EQ(r.devices.size(), host.devices);
  std::set<std::string> serials;
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceReading& d = r.devices[i];
    const int n = static_cast<int>(i);
    SCOPED_TRACE("neuron" + std::to_string(n));
    EXPECT_EQ(d.index, n);
    EXPECT_EQ(d.errors, std::vector<std::string>{});
    const std::string health = tree.root() + "/" + tree.Device(n, "stats/hardware/health_status");
    EXPECT_EQ(d.absent,
              host.health_status ? std::vector<std::string>{} : std::vector<std::string>{health});
    EXPECT_EQ(d.core_count, host.cores);
    EXPECT_EQ(d.connected_devices, host.neighbours(n));
    EXPECT_EQ(d.arch_type, host.arch_type);
    EXPECT_EQ(d.instance_type, host.instance_type);
    EXPECT_EQ(d.device_name, host.device_name);
    EXPECT_EQ(d.serial_number.value_or("").size(), 16u);
    serials.insert(d.serial_number.value_or(""));
    EXPECT_EQ(d.host_memory.size(), 8u);
    EXPECT_TRUE(d.sram_ecc_uncorrected && d.mem_ecc_uncorrected &&
                d.mem_ecc_repairable_uncorrected);
    EXPECT_EQ(d.hbm_ecc_err_count.has_value(), host.health_status);
    EXPECT_EQ(d.hw_error_event.has_value(), host.health_status);
    ASSERT_TRUE(d.power.has_value());
    EXPECT_EQ(d.power->status, PowerReading::Status::kValid);
    ASSERT_EQ(d.cores.size(), host.cores);
    for (const CoreReading& c : d.cores) {
      EXPECT_EQ(c.outcomes.size(), 24u);
      EXPECT_EQ(c.other_info.size(), 6u);
      EXPECT_EQ(c.device_memory.size(), 11u);
      EXPECT_EQ(c.pe_counters.size(), 4u);
    }
  }
  EXPECT_EQ(serials.size(), host.devices);  // no two devices alike
}

TEST(Fixtures, Inf2_48xlargeUnderDriver224IsTwelveInferentia2InARing) {
  FakeTree tree;
  tree.WriteInf2_48xlarge_Driver224();
  const TreeReading r = SysfsTree(tree.root()).Read();
  ExpectCompleteHost(tree, r, {"2.24.7.0", 12, 2, "NDv3", "Inf2", "Inferentia2", &Ring12, false});
  ASSERT_EQ(r.devices.size(), 12u);
  EXPECT_EQ(r.devices[0].connected_devices, (std::vector<int>{11, 1}));  // as neuron-ls shows it
  const DeviceReading& d = r.devices[5];
  EXPECT_EQ(d.serial_number, "5a1f0c93e2b70005");
  EXPECT_EQ(FindMemory(d.host_memory, "tensors"), 256 * kMiB + 10500 * 4096);
  EXPECT_EQ(Find(d.cores[1].outcomes, "success"), 10501u);
  EXPECT_EQ(Find(d.cores[1].other_info, "nc_time_in_use"), 10501u * 1500);
  EXPECT_EQ(r.devices[3].mem_ecc_uncorrected, 1u);
  EXPECT_EQ(r.devices[3].mem_ecc_repairable_uncorrected, 2u);
  // The public inf2 readings: idle on even devices, under load on odd ones.
  EXPECT_DOUBLE_EQ(r.devices[4].power->max_percent, 2.06);
  EXPECT_DOUBLE_EQ(r.devices[4].power->avg_percent, 0.56);
  EXPECT_DOUBLE_EQ(d.power->avg_percent, 18.86);
  EXPECT_EQ(d.power->epoch_seconds, 1752000005u);
}

TEST(Fixtures, Trn1_32xlargeUnderDriver226IsSixteenTrainium1InATorus) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  const TreeReading r = SysfsTree(tree.root()).Read();
  ExpectCompleteHost(tree, r, {"2.26.5.0", 16, 2, "NDv2", "Trn1", "Trainium1", &Torus4x4, false});
  ASSERT_EQ(r.devices.size(), 16u);
  // neuron-ls's table for a 16-device torus.
  EXPECT_EQ(r.devices[0].connected_devices, (std::vector<int>{12, 3, 4, 1}));
  EXPECT_EQ(r.devices[5].connected_devices, (std::vector<int>{1, 4, 9, 6}));
  EXPECT_EQ(r.devices[15].connected_devices, (std::vector<int>{11, 14, 3, 12}));
  const DeviceReading& d = r.devices[15];
  EXPECT_EQ(d.serial_number, "9ff5434815c8000f");
  EXPECT_EQ(Find(d.cores[1].outcomes, "success"), 21501u);
  EXPECT_EQ(Find(d.cores[1].outcomes, "failure"), 1u);  // (15 + 1) mod 3
  EXPECT_EQ(FindMemory(d.cores[0].device_memory, "model_code"), 96 * kMiB + 21500 * 4096);
  EXPECT_DOUBLE_EQ(d.power->avg_percent, 24.90);
}

TEST(Fixtures, Trn2_48xlargeUnderDriver228HasHealthStatus) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  const TreeReading r = SysfsTree(tree.root()).Read();
  ExpectCompleteHost(tree, r, {"2.28.4.0", 16, 8, "NDv3", "Trn2", "Trainium2", &Torus4x4, true});
  ASSERT_EQ(r.devices.size(), 16u);
  EXPECT_EQ(r.devices[7].hbm_ecc_err_count, 9u);
  EXPECT_EQ(r.devices[7].repairable_hbm_ecc_err_count, 6u);
  EXPECT_EQ(r.devices[7].hw_error_event, 0u);
  const CoreReading& c = r.devices[9].cores[7];
  EXPECT_EQ(c.index, 7u);
  EXPECT_EQ(Find(c.outcomes, "success"), 30907u);
  EXPECT_EQ(Find(c.other_info, "flop_count"), 30907ULL * 1500 * 30'000'000);
  EXPECT_EQ(FindMemory(c.device_memory, "tensors"), 2048 * kMiB + 30907 * 4096);
  EXPECT_EQ(c.pe_counters[2].mm_active, 30907ULL * 1500 * 1400 / 4 * 3 + 2);
  EXPECT_EQ(r.devices[9].serial_number, "1d3e6b20a94c0009");
  EXPECT_DOUBLE_EQ(r.devices[9].power->avg_percent, 47.09);
}

// Driver 2.30.2 adds to status/other_info while a process runs: nc_time_in_use over wall time is
// the core's utilization, and only the busy device's counters move.
TEST(Fixtures, Trn2_48xlargeUnderDriver230CountersMoveWhileProcessesRun) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  const SysfsTree sysfs(tree.root());
  const TreeReading before = sysfs.Read();
  ExpectCompleteHost(tree, before,
                     {"2.30.2.0", 16, 8, "NDv3", "Trn2", "Trainium2", &Torus4x4, true});
  tree.AdvanceTrn2Counters(std::chrono::seconds(10), 0.5, 2);
  const TreeReading after = sysfs.Read();
  ASSERT_EQ(after.devices.size(), 16u);
  EXPECT_EQ(after.devices[2].errors, std::vector<std::string>{});
  const CoreReading& was = before.devices[2].cores[3];
  const CoreReading& is = after.devices[2].cores[3];
  EXPECT_EQ(Find(was.outcomes, "success"), 40203u);
  EXPECT_EQ(Find(is.other_info, "nc_time_in_use") - Find(was.other_info, "nc_time_in_use"),
            5'000'000u);  // 50% of 10 s, in µs
  EXPECT_EQ(Find(is.other_info, "flop_count") - Find(was.other_info, "flop_count"),
            5'000'000ULL * 30'000'000);
  EXPECT_EQ(Find(is.outcomes, "success") - Find(was.outcomes, "success"), 3333u);
  EXPECT_EQ(Find(is.other_info, "inference_count"), 40203u + 3333);
  EXPECT_EQ(is.pe_counters[1].mm_active - was.pe_counters[1].mm_active, 5'250'000'000u);
  EXPECT_EQ(is.pe_counters[1].idle - was.pe_counters[1].idle, 7'000'000'000u);
  // Another device, idle, did not move.
  EXPECT_EQ(Find(after.devices[3].cores[3].other_info, "nc_time_in_use"),
            Find(before.devices[3].cores[3].other_info, "nc_time_in_use"));
}

// Each device of the partial tree is broken differently; the reading names exactly those problems
// by path and reads every other value.
TEST(Fixtures, PartialTreeNamesEveryProblemAndReadsTheRest) {
  FakeTree tree;
  tree.WritePartialTree();
  const TreeReading r = SysfsTree(tree.root()).Read();
  auto path = [&](int n, const std::string& relative) {
    return tree.root() + "/" + tree.Device(n, relative);
  };
  EXPECT_FALSE(r.driver_version.has_value());  // no version file: unknown, not an error
  EXPECT_EQ(r.errors, std::vector<std::string>{});
  ASSERT_EQ(r.devices.size(), 3u);

  const DeviceReading& d0 = r.devices[0];
  EXPECT_EQ(d0.errors, std::vector<std::string>{});
  EXPECT_EQ(
      d0.absent,
      (std::vector<std::string>{
          path(0, "info/serial_number"), path(0, "info/architecture/arch_type"),
          path(0, "info/architecture/instance_type"), path(0, "info/architecture/device_name"),
          // A missing counter directory is absent, as a missing file is.
          path(0, "neuron_core1/stats/other_info"), path(0, "neuron_core3/stats/other_info"),
          path(0, "neuron_core5/stats/other_info"), path(0, "neuron_core7/stats/other_info"),
          path(0, "stats/power/utilization")}));
  EXPECT_FALSE(d0.serial_number || d0.arch_type || d0.instance_type || d0.device_name || d0.power);
  EXPECT_EQ(d0.core_count, 8u);  // "8" without a newline
  EXPECT_EQ(d0.connected_devices, (std::vector<int>{12, 3, 4, 1}));
  EXPECT_EQ(FindMemory(d0.host_memory, "tensors"), 256 * kMiB + 50000 * 4096);
  EXPECT_EQ(d0.hbm_ecc_err_count, 0u);
  ASSERT_EQ(d0.cores.size(), 8u);
  for (const CoreReading& c : d0.cores) {
    // A missing other_info directory reads as no counters (and is listed as absent above).
    EXPECT_EQ(c.other_info.size(), c.index % 2 == 0 ? 6u : 0u) << c.index;
    EXPECT_EQ(c.outcomes.size(), 24u);
    EXPECT_EQ(c.device_memory.size(), 11u);
  }
  EXPECT_EQ(Find(d0.cores[6].other_info, "nc_time_in_use"), 50006u * 1500);

  const DeviceReading& d1 = r.devices[1];
  EXPECT_EQ(d1.errors,
            (std::vector<std::string>{
                path(1, "connected_devices") + ": empty (the driver could not fit the list)",
                path(1, "stats/memory_usage/host_mem/dma_buffers/total") +
                    ": 18446744073709527040 bytes is not a plausible usage (the counter wrapped)",
                path(1, "neuron_core4/stats/other_info/nc_time_in_use/total") +
                    ": \"busy\" is not a number"}));
  EXPECT_EQ(d1.absent, std::vector<std::string>{});
  EXPECT_FALSE(d1.connected_devices.has_value());
  EXPECT_EQ(d1.serial_number, "");  // the driver's empty line
  EXPECT_EQ(d1.device_name, "Trainium2");
  ASSERT_TRUE(d1.power.has_value());
  EXPECT_EQ(d1.power->status, PowerReading::Status::kNoData);
  EXPECT_EQ(d1.host_memory.size(), 7u);  // dma_buffers left out, not zero
  EXPECT_EQ(FindMemory(d1.host_memory, "constants"), 128 * kMiB + 50100 * 4096);
  ASSERT_EQ(d1.cores.size(), 8u);
  EXPECT_EQ(d1.cores[4].other_info.size(), 5u);  // nc_time_in_use left out
  EXPECT_EQ(Find(d1.cores[4].other_info, "flop_count"), 50104ULL * 1500 * 30'000'000);

  const DeviceReading& d2 = r.devices[2];
  EXPECT_EQ(d2.errors, std::vector<std::string>{});
  EXPECT_EQ(d2.absent, std::vector<std::string>{});
  EXPECT_EQ(d2.serial_number, "7c04e9f3168a0002");
  EXPECT_EQ(d2.connected_devices, (std::vector<int>{14, 1, 6, 3}));
  EXPECT_DOUBLE_EQ(d2.power->avg_percent, 33.52);
}

}  // namespace
}  // namespace neuronmon::neurondev
