// neurondev::Host on fabricated hosts: the inventory neuron-ls shows, unmeasured signals named,
// and the runtime layer driven by a fake neuron-monitor executable (replaying recorded documents,
// missing, printing garbage). The fake is a real child process, so those tests wait for its
// output with a deadline.
#include "neurondev/host.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "proto/common/datastore_layout.h"
#include "tests/neurondev/fake_kubelet.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using testing::FakeTree;

MonoTime Now() { return SteadyClock().Now(); }

// An executable script that runs the fake neuron-monitor with `args` (and AWS's `-c CONFIG`).
std::string FakeMonitor(const FakeTree& tree, const std::string& args) {
  const std::string path = tree.root() + "/fake-neuron-monitor.sh";
  std::ofstream(path) << "#!/bin/sh\nexec " << NEURONMON_FAKE_NEURON_MONITOR << " " << args
                      << " \"$@\"\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

HostOptions OptionsFor(const FakeTree& tree, const std::string& neuron_monitor) {
  tree.Write("proc/.empty", "");  // a process table with no Neuron process
  HostOptions o;
  o.sysfs_root = tree.root();
  o.proc_root = tree.root() + "/proc";
  o.neuron_monitor = neuron_monitor;
  o.config_dir = tree.root();
  o.dev_root = tree.root() + "/dev";
  o.pod_resources.socket_path = tree.root() + "/kubelet.sock";  // none unless a test serves one
  o.kernel_log_options.path = tree.root() + "/kmsg";            // none unless a test writes one
  return o;
}

// Reads until `done(snapshot)` or a few seconds of real time pass (a child process is involved).
Snapshot ReadUntil(Host& host, const std::function<bool(const Snapshot&)>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Snapshot s;
  while (std::chrono::steady_clock::now() < deadline) {
    s = host.Read(Now());
    if (done(s)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return s;
}

TEST(Host, NoDevicesIsAClearError) {
  FakeTree tree;
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("no Neuron devices under " + tree.root()),
            std::string::npos);
  EXPECT_FALSE(HasNeuronDevices(tree.root()));
}

TEST(Host, Trn2InventoryIsWhatNeuronLsShows) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  tree.Symlink("/dev/null", "dev/neuron3");  // a node, but not one that answers the driver's ioctl
  ASSERT_TRUE(HasNeuronDevices(tree.root()));
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const v1::Inventory inv = (*host)->Inventory(Now());
  EXPECT_FALSE(inv.simulated());
  EXPECT_EQ(inv.device_spec(), "neuron");
  EXPECT_EQ(inv.topology(), "torus-4x4");
  EXPECT_EQ(inv.hardware_info().neuron_device_type(), "trainium2");
  EXPECT_EQ(inv.hardware_info().neuron_device_count(), 16u);
  EXPECT_EQ(inv.hardware_info().logical_neuroncore_config(), 2u);
  EXPECT_EQ(inv.hardware_info().neuroncore_per_device_count(), 4u);
  EXPECT_EQ(inv.hardware_info().neuron_device_memory_size(), 96ULL << 30);
  ASSERT_EQ(inv.devices_size(), 16);
  EXPECT_EQ(inv.devices(3).physical_core_count(), 8u);
  EXPECT_EQ(inv.devices(3).core_ids(0), 12u);
  EXPECT_EQ(inv.devices(3).device_name(), "Trainium2");
  EXPECT_EQ(inv.devices(0).connected_to_size(), 4);
  // Without device nodes that answer the driver's ioctl: unknown, never guessed, and said why.
  EXPECT_EQ(inv.devices(0).pci_bdf(), "");
  EXPECT_EQ(inv.devices(0).numa_node(), -1);
  EXPECT_EQ(inv.devices(3).pci_bdf(), "");
  EXPECT_EQ(inv.devices(3).cpu_affinity(), "");
  const std::string described = (*host)->Describe();
  EXPECT_NE(described.find("16 x Trainium2, driver 2.28"), std::string::npos);
  EXPECT_EQ(described.find("driver layout"), std::string::npos) << described;
  EXPECT_NE(described.find("PCI placement unknown (" + tree.root() +
                           "/dev/neuron0: No such file or directory and 15 more)"),
            std::string::npos)
      << described;
}

TEST(Host, WhatTheDriverCannotGiveIsUnmeasuredWithTheReason) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  Result<std::unique_ptr<Host>> host =
      Host::Open(OptionsFor(tree, tree.root() + "/missing/neuron-monitor"), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  EXPECT_NE(s.UnmeasuredReason(Signal::kHbmTraffic).find("no HBM traffic counter"),
            std::string::npos);
  EXPECT_NE(s.UnmeasuredReason(Signal::kEccCorrected).find("only uncorrected"), std::string::npos);
  // Driver 2.26 counts executions only at process exit.
  EXPECT_NE(s.UnmeasuredReason(Signal::kExecutions).find("before 2.30.2"), std::string::npos);
  EXPECT_NE(s.UnmeasuredReason(Signal::kLatency).find("install aws-neuronx-tools"),
            std::string::npos);
  EXPECT_NE((*host)->RuntimeStatus().find("install aws-neuronx-tools"), std::string::npos);
  // Clients learn it from the inventory (neuron-top shows it in its title).
  EXPECT_EQ((*host)->Inventory(Now()).runtime_status(), (*host)->RuntimeStatus());
  // Busy time comes from the tensor engine's counters on older drivers: measured. FLOPs are not.
  EXPECT_EQ(s.UnmeasuredReason(Signal::kCoreActivity), "");
  EXPECT_NE(s.UnmeasuredReason(Signal::kFlops).find("before 2.30.2"), std::string::npos);
}

// Before driver 2.30.2 flop_count is added in only when a process exits: while a job runs, busy
// time is measured from pe_cntrs but FLOPs are unmeasured — never a 0 that reads as idle math.
TEST(Host, FlopsBeforeDriver2302AreUnmeasuredWhileBusyTimeIsMeasured) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  const MonoTime t0 = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), t0);
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot before = (*host)->Read(t0);
  tree.AdvanceTrn2TensorEngine(std::chrono::seconds(10), 0.5, 2);
  const Snapshot after = (*host)->Read(t0 + std::chrono::seconds(10));
  for (std::size_t c = 8; c < 12; ++c) {
    EXPECT_NEAR(static_cast<double>(after.cores[c].busy_ns - before.cores[c].busy_ns), 5e9, 1e6)
        << "core " << c;
  }
  EXPECT_EQ(after.UnmeasuredReason(Signal::kCoreActivity), "");
  EXPECT_EQ(after.UnmeasuredReason(Signal::kFlops),
            "the Neuron driver (before 2.30.2) adds flop_count in only when a process exits; " +
                (*host)->RuntimeStatus());
  EXPECT_EQ(after.cores[8].flops, 0);  // a counter of an unmeasured signal stays 0
}

// FLOPs are never measured where busy time is not: a core without a busy-time source leaves both
// unmeasured, for the same reason.
TEST(Host, FlopsAreUnmeasuredWithCoreActivity) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  tree.Remove(tree.Device(4, "neuron_core2/stats/tensor_engine/pe_cntrs"));
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  EXPECT_NE(s.UnmeasuredReason(Signal::kCoreActivity).find("no pe_cntrs"), std::string::npos);
  EXPECT_EQ(s.UnmeasuredReason(Signal::kFlops), s.UnmeasuredReason(Signal::kCoreActivity));
}

// Health is judged on the driver's own totals since it loaded — counted already at the first read —
// and its power reading; what an older driver lacks is named, never read as 0.
TEST(Host, HealthCountersAndPowerAreTheDriversOwn) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();  // device 3: 2 uncorrected, 4 repairable HBM ECC errors
  tree.Write(tree.Device(5, "neuron_core1/stats/status/hw_nc_ue_error/total"), "3\n");
  tree.Write(tree.Device(5, "neuron_core0/stats/status/hw_dma_abort_error/total"), "1\n");
  tree.Write(tree.Device(5, "neuron_core1/stats/status/hw_repairable_hbm_ue_error/total"), "2\n");
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.devices.size(), 16u);
  EXPECT_EQ(s.devices[3].errors.mem_ecc_uncorrected, 2u);
  EXPECT_EQ(s.devices[3].errors.mem_ecc_repairable, 4u);
  EXPECT_EQ(s.devices[2].errors.Total(), 0u);
  EXPECT_EQ(s.devices[5].errors.nc_uncorrectable, 3u);
  EXPECT_EQ(s.devices[5].errors.dma_abort, 1u);
  EXPECT_EQ(s.devices[5].errors.hbm_repairable, 2u);
  // Driver 2.26 has no health_status: its event counter is named as missing.
  EXPECT_EQ(s.devices[0].errors_unavailable,
            "the driver does not expose health_status/hw_error_event (driver 2.28+)");
  const DevicePower& p = s.devices[1].power;
  EXPECT_EQ(p.unavailable, "");
  EXPECT_DOUBLE_EQ(p.average_percent, 24.76);
  EXPECT_DOUBLE_EQ(p.min_percent, 12.01);
  EXPECT_DOUBLE_EQ(p.max_percent, 31.01);
  EXPECT_EQ(p.sampled_unix_ns, 1'758'000'001'000'000'000);
}

TEST(Host, APowerFileWithoutAReadingSaysWhy) {
  FakeTree tree;
  tree.WritePartialTree();  // neuron0: no stats/power; neuron1: POWER_STATUS_NO_DATA
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.devices.size(), 3u);
  EXPECT_EQ(s.devices[0].power.unavailable, "the driver exposes no stats/power/utilization");
  EXPECT_EQ(s.devices[1].power.unavailable, "the driver has no reading yet (POWER_STATUS_NO_DATA)");
  EXPECT_EQ(s.devices[2].power.unavailable, "");
  EXPECT_EQ(s.devices[2].errors_unavailable, "");  // driver 2.28's tree has every counter
}

// The driver's NEURON_HW_ERR lines in the kernel log count for the device they name (by serial,
// else by nd-id); a log that cannot be read leaves them unknown, with the reason, and the host's
// description says so.
TEST(Host, KernelLogEventsCountForTheirDevice) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  HostOptions o = OptionsFor(tree, "");
  {
    Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
    ASSERT_TRUE(host.ok()) << host.status().message();
    const Snapshot s = (*host)->Read(Now());
    const std::string why = "cannot read " + tree.root() + "/kmsg: No such file or directory";
    EXPECT_EQ(s.devices[0].kernel_log_unavailable, why);
    EXPECT_NE((*host)->Describe().find("hardware error events unknown: " + why), std::string::npos);
  }
  tree.Write("kmsg",
             "3,7,100,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR instance-id=i-1 nd-id=9 "
             "nc-id=1 action=TERMINATE_INSTANCE\n"
             "6,8,101,-;neuron9: resetting\n");
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  Snapshot s = (*host)->Read(Now());
  EXPECT_EQ(s.devices[9].kernel_log_unavailable, "");
  EXPECT_EQ(s.devices[9].errors.kernel_nc_uncorrectable, 1u);
  EXPECT_EQ(s.devices[9].errors.KernelTotal(), 1u);
  EXPECT_EQ(s.devices[8].errors.KernelTotal(), 0u);
  EXPECT_EQ((*host)->Describe().find("hardware error events unknown"), std::string::npos);
  std::ofstream(tree.root() + "/kmsg", std::ios::app)
      << "3,9,102,-;NEURON_HW_ERR=DMA_ERROR nd-id=2\n";
  s = (*host)->Read(Now());
  EXPECT_EQ(s.devices[2].errors.kernel_dma, 1u);
  EXPECT_EQ(s.devices[9].errors.kernel_nc_uncorrectable, 1u);
  // serial-num= names the device (the fixture's serials are 9ff5434815c80000 + N); nd-id= is the
  // runtime's index, which in a container given neuron1 alone says 0.
  std::ofstream(tree.root() + "/kmsg", std::ios::app)
      << "3,10,103,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR instance-id=i-1 hostname=h nd-id=0 "
         "nc-id=0 serial-num=9FF5434815C80001 action=TERMINATE_INSTANCE\n";
  s = (*host)->Read(Now());
  EXPECT_EQ(s.devices[1].errors.kernel_hbm_uncorrectable, 1u);
  EXPECT_EQ(s.devices[0].errors.KernelTotal(), 0u);
  // Off by configuration: said so.
  o.kernel_log = false;
  host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  s = (*host)->Read(Now());
  EXPECT_EQ(s.devices[9].errors.KernelTotal(), 0u);
  EXPECT_EQ(s.devices[9].kernel_log_unavailable,
            "the kernel log is not read (kernel_log.enabled is false)");
}

// Device memory by the driver's categories: each core's `total` (the usage) and `peak` summed over
// the device; a peak below the usage (a counter just cleared) counts as the usage.
TEST(Host, DeviceMemoryCategoriesAreTheCoresSummed) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  for (int k = 0; k < 8; ++k) {
    const std::string dir = "neuron_core" + std::to_string(k) + "/stats/memory_usage/device_mem/";
    tree.Write(tree.Device(2, dir + "tensors/total"), std::to_string(1000 * (k + 1)) + "\n");
    tree.Write(tree.Device(2, dir + "tensors/peak"),
               std::to_string(k == 0 ? 1 : 2000 * (k + 1)) + "\n");
  }
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  const DeviceMemory& m = s.devices[2].memory;
  ASSERT_TRUE(m.measured);
  const std::size_t tensors = DeviceMemoryCategory("tensors");
  EXPECT_EQ(m.used[tensors], 36000u);
  EXPECT_EQ(m.peak[tensors], 1000u + 2000u * 35);
  // Every category the driver has is there, and a device's figures are its own.
  EXPECT_GT(m.used[DeviceMemoryCategory("driver_memory")], 0u);
  EXPECT_NE(s.devices[3].memory.used[tensors], m.used[tensors]);
}

TEST(Host, LiveCountersGiveUtilization) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  const MonoTime t0 = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), t0);
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot before = (*host)->Read(t0);
  tree.AdvanceTrn2Counters(std::chrono::seconds(10), 0.5, 2);
  const Snapshot after = (*host)->Read(t0 + std::chrono::seconds(10));
  EXPECT_EQ(after.epoch, before.epoch);
  // Device 2's logical cores 8..11 were 50 % busy for 10 s; device 3's did not move.
  for (std::size_t c = 8; c < 12; ++c) {
    EXPECT_NEAR(static_cast<double>(after.cores[c].busy_ns - before.cores[c].busy_ns), 5e9, 1e6)
        << "core " << c;
  }
  EXPECT_EQ(after.cores[12].busy_ns, before.cores[12].busy_ns);
  EXPECT_EQ(after.UnmeasuredReason(Signal::kCoreActivity), "");
  // flop_count moves live too: 30 MFLOP per busy µs on each of the logical core's 2 physical ones.
  EXPECT_EQ(after.UnmeasuredReason(Signal::kFlops), "");
  EXPECT_DOUBLE_EQ(after.cores[8].flops - before.cores[8].flops, 2 * 5e6 * 30e6);
  EXPECT_EQ(after.cores[12].flops, before.cores[12].flops);
}

// A live driver that lacks flop_count on a core cannot give the host's FLOPs: unmeasured, and why.
TEST(Host, LiveCountersWithoutFlopCountLeaveFlopsUnmeasured) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  tree.Remove(tree.Device(7, "neuron_core5/stats/other_info/flop_count"));
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  EXPECT_EQ(s.UnmeasuredReason(Signal::kCoreActivity), "");
  EXPECT_NE(s.UnmeasuredReason(Signal::kFlops).find("the Neuron driver exposes no flop_count"),
            std::string::npos);
}

// nc_time_in_use counts µs (AWS's guide). A reading past the interval is clamped to 100 % and
// counted; it does not change the unit, so the next window reads right.
TEST(Host, BusyTimeIsMicrosecondsAndAnOverlongReadingIsClamped) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  const MonoTime t0 = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), t0);
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot first = (*host)->Read(t0);
  tree.AdvanceTrn2Counters(std::chrono::seconds(10), 0.5, 2);
  // One physical core's counter jumps by 50 s of µs in a 10 s window (a torn or foreign value).
  const std::string file = tree.Device(2, "neuron_core0/stats/other_info/nc_time_in_use/total");
  std::uint64_t value = 0;
  std::ifstream(tree.root() + "/" + file) >> value;
  ASSERT_GT(value, 0u);
  tree.Write(file, std::to_string(value + 50'000'000) + "\n");
  const Snapshot clamped = (*host)->Read(t0 + std::chrono::seconds(10));
  EXPECT_EQ(clamped.epoch, first.epoch);
  EXPECT_EQ((*host)->clamped_busy_readings(), 1u);
  tree.AdvanceTrn2Counters(std::chrono::seconds(10), 0.5, 2);
  const Snapshot after = (*host)->Read(t0 + std::chrono::seconds(20));
  for (std::size_t c = 8; c < 12; ++c) {
    EXPECT_NEAR(static_cast<double>(after.cores[c].busy_ns - clamped.cores[c].busy_ns), 5e9, 1e6)
        << "core " << c << ": still µs, no unit guessed from the overlong reading";
  }
  EXPECT_EQ((*host)->clamped_busy_readings(), 1u);
}

std::uint64_t ReadNumber(const FakeTree& tree, const std::string& relative) {
  std::uint64_t value = 0;
  std::ifstream(tree.root() + "/" + relative) >> value;
  return value;
}

// A counter that drops alone (a root write zeroed it) is held: no new epoch, no growth, and it
// counts on from its new value. The kernel log's events stay.
TEST(Host, ACounterThatDropsAloneIsHeld) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  tree.Write("kmsg", "3,7,100,-;NEURON_HW_ERR=DMA_ERROR nd-id=5\n");
  const MonoTime t0 = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), t0);
  ASSERT_TRUE(host.ok());
  const Snapshot before = (*host)->Read(t0);
  ASSERT_EQ(before.devices[5].errors.kernel_dma, 1u);
  tree.Write(tree.Device(5, "neuron_core3/stats/other_info/nc_time_in_use/total"), "0\n");
  const Snapshot after = (*host)->Read(t0 + std::chrono::seconds(1));
  EXPECT_EQ(after.epoch, before.epoch);
  // Device 5's logical core 1 (physical 2 and 3) grew by nothing.
  EXPECT_EQ(after.cores[5 * 4 + 1].busy_ns, before.cores[5 * 4 + 1].busy_ns);
  EXPECT_EQ(after.devices[5].errors.kernel_dma, 1u);
  tree.AdvanceTrn2Counters(std::chrono::seconds(10), 0.5, 5);
  const Snapshot next = (*host)->Read(t0 + std::chrono::seconds(11));
  EXPECT_NEAR(static_cast<double>(next.cores[5 * 4 + 1].busy_ns - after.cores[5 * 4 + 1].busy_ns),
              5e9, 1e6);
}

// A replaced device directory (the driver reloaded) is device-level evidence: a new epoch, in
// which the driver's counters count from zero. The kernel log's events are not wiped.
TEST(Host, AReplacedDeviceDirectoryStartsANewEpoch) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  tree.Write("kmsg", "3,7,100,-;NEURON_HW_ERR=DMA_ERROR nd-id=5\n");
  const MonoTime t0 = Now();
  HostOptions o = OptionsFor(tree, "");
  o.sampler.rediscover_every = 1;
  Result<std::unique_ptr<Host>> host = Host::Open(o, t0);
  ASSERT_TRUE(host.ok());
  const Snapshot before = (*host)->Read(t0);
  std::string dir = tree.root() + "/" + tree.Device(5);
  dir.pop_back();  // the trailing '/'
  std::filesystem::rename(dir, dir + ".old");
  std::filesystem::copy(dir + ".old", dir, std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(dir + ".old");
  const Snapshot after = (*host)->Read(t0 + std::chrono::seconds(1));
  EXPECT_EQ(after.epoch, before.epoch + 1);
  EXPECT_EQ(after.devices[5].errors.kernel_dma, 1u);
}

// trn2 firmware shows an uncorrected HBM error in mem_ecc_repairable_uncorrected while a repair
// is pending and in mem_ecc_uncorrected once it failed: the total moving between the files is
// neither a reset nor new errors, and the health follows the file (pending: reset; failed:
// replace).
TEST(Host, TheTwoUncorrectedHbmFilesAreOneCounter) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  const MonoTime t0 = Now();
  HostOptions o = OptionsFor(tree, "");
  o.sampler.errors_every = 1;
  Result<std::unique_ptr<Host>> host = Host::Open(o, t0);
  ASSERT_TRUE(host.ok());
  const std::string uncorrected = tree.Device(3, "stats/hardware/mem_ecc_uncorrected");
  const std::string repairable = tree.Device(3, "stats/hardware/mem_ecc_repairable_uncorrected");
  const std::uint64_t u = ReadNumber(tree, uncorrected), r = ReadNumber(tree, repairable);
  tree.Write(repairable, std::to_string(r + 2) + "\n");  // two errors, repair pending
  const Snapshot pending = (*host)->Read(t0);
  (void)(*host)->Read(t0 + std::chrono::seconds(1));
  tree.Write(repairable, std::to_string(r) + "\n");  // the repair failed: the two move
  tree.Write(uncorrected, std::to_string(u + 2) + "\n");
  const Snapshot failed = (*host)->Read(t0 + std::chrono::seconds(2));
  EXPECT_EQ(failed.epoch, pending.epoch);
  EXPECT_EQ(failed.devices[3].ecc.mem_uncorrected, pending.devices[3].ecc.mem_uncorrected);
  EXPECT_EQ(failed.devices[3].errors.mem_ecc_uncorrected, u + 2);
  EXPECT_EQ(failed.devices[3].errors.mem_ecc_repairable, r);
  EXPECT_EQ(pending.devices[3].errors.mem_ecc_repairable, r + 2);
}

// One torn pe_cntrs read (a 64-bit counter read as two 32-bit halves) is re-read; torn again, it
// is no value for that read — never a core at 100 % or a drop — and the next value covers both
// intervals.
TEST(Host, ATornTensorEngineReadIsNoValue) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();  // flat counters: busy time from pe_cntrs
  const MonoTime t0 = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), t0);
  ASSERT_TRUE(host.ok());
  const Snapshot first = (*host)->Read(t0);
  const std::string pe = tree.Device(4, "neuron_core0/stats/tensor_engine/pe_cntrs");
  std::ifstream in(tree.root() + "/" + pe);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  tree.AdvanceTrn2Counters(std::chrono::seconds(1), 0.5, 4);
  std::ifstream in2(tree.root() + "/" + pe);
  const std::string advanced((std::istreambuf_iterator<char>(in2)),
                             std::istreambuf_iterator<char>());
  // Row group 2's idle counter torn: its high half read before the low half wrapped.
  std::string torn = "xrow_grp,mm_active,wl_active,idle\n";
  std::istringstream rows(advanced);
  std::string line;
  std::getline(rows, line);
  while (std::getline(rows, line)) {
    if (line.rfind("2,", 0) == 0) {
      const std::size_t comma = line.rfind(',');
      line = line.substr(0, comma + 1) +
             std::to_string(std::stoull(line.substr(comma + 1)) + (std::uint64_t{1} << 32));
    }
    torn += line + "\n";
  }
  tree.Write(pe, torn);
  const Snapshot held = (*host)->Read(t0 + std::chrono::seconds(1));
  EXPECT_EQ(held.epoch, first.epoch);
  EXPECT_EQ(held.cores[4 * 2].busy_ns, first.cores[4 * 2].busy_ns) << "no value, not 100 %";
  EXPECT_NE(held.devices[4].error.find("torn read twice"), std::string::npos)
      << held.devices[4].error;
  EXPECT_EQ(held.UnmeasuredReason(Signal::kCoreActivity), "");
  tree.Write(pe, advanced);
  tree.AdvanceTrn2Counters(std::chrono::seconds(1), 0.5, 4);
  const Snapshot next = (*host)->Read(t0 + std::chrono::seconds(2));
  EXPECT_EQ(next.epoch, first.epoch);
  EXPECT_NEAR(static_cast<double>(next.cores[4 * 2].busy_ns - first.cores[4 * 2].busy_ns), 1e9,
              2e7);
  (void)good;
}

TEST(HostWithNeuronMonitor, RuntimeFiguresComeFromItsDocuments) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  const std::string monitor =
      FakeMonitor(tree, std::string("--period-ms 50 --replay ") + NEURONMON_TESTDATA_DIR +
                            "/neuron_monitor/trn1.32xlarge_healthy-training.golden");
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, monitor), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = ReadUntil(**host, [](const Snapshot& r) { return !r.runtimes.empty(); });
  ASSERT_FALSE(s.runtimes.empty()) << (*host)->RuntimeStatus();
  EXPECT_EQ(s.UnmeasuredReason(Signal::kLatency), "");
  EXPECT_EQ(s.UnmeasuredReason(Signal::kExecutions), "");
  EXPECT_EQ(s.UnmeasuredReason(Signal::kCoreActivity), "");
  EXPECT_EQ(s.UnmeasuredReason(Signal::kFlops), "");  // neuron-monitor's, on any driver
  EXPECT_EQ((*host)->RuntimeStatus(), "");
  EXPECT_NE((*host)->Describe().find("runtime figures from neuron-monitor"), std::string::npos);
}

// Two applications on NeuronCore 0 (50 % and 25 % of it) and one on core 1 (75 %), listing 0 for
// the cores they do not use, as neuron-monitor does: core 0 is as busy as core 1 in every
// snapshot — the runtimes' sum, never one runtime's share or the last one's 0.
TEST(HostWithNeuronMonitor, ACoreSharedByTwoRuntimesIsBusyForBoth) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  const auto entry = [](int pid, double core0, double core1) {
    return "{\"pid\":" + std::to_string(pid) + ",\"neuron_runtime_tag\":\"" + std::to_string(pid) +
           "\",\"error\":\"\",\"report\":{\"neuroncore_counters\":{\"period\":1,"
           "\"neuroncores_in_use\":{\"0\":{\"neuroncore_utilization\":" +
           std::to_string(core0) + "},\"1\":{\"neuroncore_utilization\":" + std::to_string(core1) +
           "},\"2\":{\"neuroncore_utilization\":0}},\"error\":\"\"}}}";
  };
  tree.Write("shared.jsonl", "{\"neuron_runtime_data\":[" + entry(4100, 50, 75) + "," +
                                 entry(4200, 25, 0) + "]}\n");
  const std::string monitor =
      FakeMonitor(tree, "--period-ms 20 --replay " + tree.root() + "/shared.jsonl");
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, monitor), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = ReadUntil(**host, [](const Snapshot& r) {
    return r.runtimes.size() == 2 && r.cores[0].busy_ns >= 3'000'000'000u;  // 4 documents or more
  });
  ASSERT_EQ(s.runtimes.size(), 2u) << (*host)->RuntimeStatus();
  EXPECT_GE(s.cores[0].busy_ns, 3'000'000'000u);
  EXPECT_EQ(s.cores[0].busy_ns, s.cores[1].busy_ns);
  EXPECT_EQ(s.cores[2].busy_ns, 0u);
  // These documents carry no flops (as neuron-monitor before Neuron 2.7): unmeasured, not 0.
  EXPECT_NE(s.UnmeasuredReason(Signal::kFlops).find("neuron-monitor reports no FLOPs"),
            std::string::npos);
}

TEST(HostWithNeuronMonitor, GarbageIsReportedAndNotTurnedIntoFigures) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  const std::string monitor = FakeMonitor(tree, "--period-ms 20 --garbage");
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, monitor), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  Snapshot s = ReadUntil(**host, [&](const Snapshot&) {
    return (*host)->RuntimeStatus().find("not a document") != std::string::npos;
  });
  EXPECT_NE((*host)->RuntimeStatus().find("not a document"), std::string::npos)
      << (*host)->RuntimeStatus();
  EXPECT_TRUE(s.runtimes.empty());
  EXPECT_FALSE(s.UnmeasuredReason(Signal::kLatency).empty());
}

}  // namespace

namespace {

// A process of the fabricated /proc holding /dev/neuron<N> for each N of `devices`, in `cgroup`.
void WriteProcess(const FakeTree& tree, int pid, const std::vector<int>& devices,
                  const std::string& cgroup) {
  const std::string dir = "proc/" + std::to_string(pid) + "/";
  tree.Write(dir + "comm", "python\n");
  tree.Write(dir + "cgroup", "0::" + cgroup + "\n");
  int fd = 10;
  for (int d : devices)
    tree.Symlink("/dev/neuron" + std::to_string(d), dir + "fd/" + std::to_string(fd++));
}

const std::string kPodCgroup =
    "/kubepods.slice/kubepods-besteffort.slice/"
    "kubepods-besteffort-pod1f2e3d4c_5b6a_7980_1a2b_3c4d5e6f7a8b.slice/cri-containerd-" +
    std::string(64, 'a') + ".scope";

const v1::Process* FindProcess(const v1::Inventory& inv, std::uint32_t pid) {
  for (const v1::Process& p : inv.processes()) {
    if (p.pid() == pid) return &p;
  }
  return nullptr;
}

}  // namespace

TEST(HostOnKubernetes, AllocationsAndThePodsOfProcessesComeFromTheKubelet) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();                         // 16 devices of 4 logical cores
  WriteProcess(tree, 4100, {0, 1}, kPodCgroup);                // both devices: train-0's worker
  WriteProcess(tree, 4200, {3}, kPodCgroup);                   // device 3: two pods' cores
  WriteProcess(tree, 4300, {0}, "/system.slice/ssh.service");  // on the node, not in a pod
  WriteProcess(tree, 4400, {7}, kPodCgroup);                   // device 7: nobody's
  testing::FakeKubelet kubelet(tree.root() + "/kubelet.sock");
  kubelet.Serve({
      {"train-0", "ml", "worker", "aws.amazon.com/neuron", {"0", "1"}},
      {"infer-a", "serving", "model", "aws.amazon.com/neuroncore", {"12", "13"}},
      {"infer-b", "serving", "model", "aws.amazon.com/neuroncore", {"14"}},
      {"gpu", "ml", "cuda", "nvidia.com/gpu", {"GPU-1"}},
  });
  HostOptions o = OptionsFor(tree, "");
  o.process_scan_every = 1;
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  (*host)->Read(Now());
  const v1::Inventory inv = (*host)->Inventory(Now());
  EXPECT_EQ(inv.kubernetes_status(), "");
  EXPECT_NE((*host)->Describe().find(", pods from the kubelet"), std::string::npos);

  ASSERT_EQ(inv.allocations_size(), 3);
  const v1::PodAllocation& train = inv.allocations(0);
  EXPECT_EQ(train.pod(), "train-0");
  EXPECT_EQ(train.namespace_(), "ml");
  EXPECT_EQ(train.container(), "worker");
  EXPECT_EQ(train.resource_name(), "aws.amazon.com/neuron");
  EXPECT_EQ(
      std::vector<std::uint32_t>(train.device_indices().begin(), train.device_indices().end()),
      (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(train.core_ids_size(), 8);
  const v1::PodAllocation& infer = inv.allocations(1);
  EXPECT_EQ(infer.pod(), "infer-a");
  EXPECT_EQ(
      std::vector<std::uint32_t>(infer.device_indices().begin(), infer.device_indices().end()),
      (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(std::vector<std::uint32_t>(infer.core_ids().begin(), infer.core_ids().end()),
            (std::vector<std::uint32_t>{12, 13}));

  ASSERT_EQ(inv.processes_size(), 4);
  const v1::Attribution& worker = FindProcess(inv, 4100)->attribution();
  EXPECT_EQ(worker.pod(), "train-0");
  EXPECT_EQ(worker.namespace_(), "ml");
  EXPECT_EQ(worker.container(), "worker");
  EXPECT_EQ(worker.pod_uid(), "1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b");
  for (std::uint32_t pid : {4200u, 4300u, 4400u}) {
    const v1::Attribution& a = FindProcess(inv, pid)->attribution();
    EXPECT_EQ(a.pod(), "") << pid;
    EXPECT_EQ(a.namespace_(), "") << pid;
    EXPECT_EQ(a.container(), "") << pid;
  }
}

TEST(HostOnKubernetes, NoKubeletSocketIsNotKubernetesAndSaysNothing) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  WriteProcess(tree, 4100, {0}, kPodCgroup);
  HostOptions o = OptionsFor(tree, "");
  o.process_scan_every = 1;
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  (*host)->Read(Now());
  const v1::Inventory inv = (*host)->Inventory(Now());
  EXPECT_EQ(inv.kubernetes_status(), "");
  EXPECT_EQ(inv.allocations_size(), 0);
  ASSERT_EQ(inv.processes_size(), 1);
  EXPECT_EQ(inv.processes(0).attribution().pod(), "");
  EXPECT_EQ(inv.processes(0).attribution().pod_uid(), "1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b");
  EXPECT_EQ((*host)->Describe().find("pods"), std::string::npos) << (*host)->Describe();
}

TEST(HostOnKubernetes, AFailingKubeletIsNamedInTheInventoryAndReadsGoOn) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  WriteProcess(tree, 4100, {0}, kPodCgroup);
  testing::FakeKubelet kubelet(tree.root() + "/kubelet.sock");
  kubelet.Serve({{"train-0", "ml", "worker", "aws.amazon.com/neuron", {"0"}}});
  kubelet.FailWith("kubelet is restarting");
  HostOptions o = OptionsFor(tree, "");
  o.process_scan_every = 1;
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  EXPECT_EQ(s.error, "");
  const v1::Inventory inv = (*host)->Inventory(Now());
  EXPECT_NE(inv.kubernetes_status().find("UNAVAILABLE: kubelet is restarting"), std::string::npos)
      << inv.kubernetes_status();
  EXPECT_EQ(inv.allocations_size(), 0);
  EXPECT_EQ(inv.processes(0).attribution().pod(), "");
  EXPECT_NE((*host)->Describe().find(", pods unknown: kubelet PodResources at " + tree.root() +
                                     "/kubelet.sock: UNAVAILABLE: kubelet is restarting"),
            std::string::npos)
      << (*host)->Describe();
}

TEST(HostOnKubernetes, OffAsksNoKubelet) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  testing::FakeKubelet kubelet(tree.root() + "/kubelet.sock");
  kubelet.Serve({{"train-0", "ml", "worker", "aws.amazon.com/neuron", {"0"}}});
  HostOptions o = OptionsFor(tree, "");
  o.kubernetes = false;
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  (*host)->Read(Now());
  EXPECT_EQ((*host)->Inventory(Now()).allocations_size(), 0);
  EXPECT_EQ(kubelet.calls(), 0);
}

}  // namespace neuronmon::neurondev

namespace neuronmon::neurondev {
namespace {

std::string StatLine(int pid, std::uint64_t start_ticks) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice threads itrealvalue starttime vsize rss ...
  return std::to_string(pid) + " (python) S 1 1 1 0 -1 0 0 0 0 0 250 50 0 0 20 0 4 0 " +
         std::to_string(start_ticks) + " 1000000 100 18446744073709551615\n";
}

// A process holding `devices`, with its stat line (started at `start_ticks`).
void WriteHolder(const FakeTree& tree, int pid, const std::vector<int>& devices,
                 const std::string& cgroup, std::uint64_t start_ticks) {
  WriteProcess(tree, pid, devices, cgroup);
  tree.Write("proc/" + std::to_string(pid) + "/stat", StatLine(pid, start_ticks));
}

// Each process says when it started (stat field 22), in the inventory; a pid another process
// takes between two scans (a different start time) leaves the runtimes at once, never inheriting
// the first one's place.
TEST(Host, AProcessIsItsPidAndStartTime) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  WriteHolder(tree, 5100, {0}, "/user.slice", 777);
  HostOptions o = OptionsFor(tree, "");
  o.process_scan_every = 1000;  // one scan, at the first read
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.runtimes.size(), 1u);
  EXPECT_EQ(s.runtimes[0].cpu_user_ns, 2500000000u);  // 250 ticks at 100 Hz
  const v1::Inventory inv = (*host)->Inventory(Now());
  ASSERT_NE(FindProcess(inv, 5100), nullptr);
  EXPECT_EQ(FindProcess(inv, 5100)->start_time_ticks(), 777u);
  // The pid is reused by a process that started later: not the runtime scanned.
  tree.Write("proc/5100/stat", StatLine(5100, 9000));
  s = (*host)->Read(Now());
  EXPECT_TRUE(s.runtimes.empty());
}

// A runtime that holds a device alone holds every category the driver counts on its cores
// (driver memory, collectives and DMA rings too, in `other`); on a device it shares, the driver's
// per-core figures cannot be split between processes, so that part is unavailable with the reason,
// never guessed and never a silent 0.
TEST(Host, ARuntimesDeviceMemoryIsEveryCategoryOfTheDevicesItHoldsAlone) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  WriteHolder(tree, 5100, {0}, "/user.slice", 500);
  WriteHolder(tree, 5200, {1, 2}, "/user.slice", 600);
  WriteHolder(tree, 5300, {2}, "/user.slice", 700);
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.runtimes.size(), 3u);
  const auto device_total = [&](int d) {
    std::uint64_t total = 0;
    for (std::uint64_t v : s.devices[d].memory.used) total += v;
    return total;
  };
  const auto runtime = [&](std::uint32_t pid) -> const RuntimeSample& {
    return *std::find_if(s.runtimes.begin(), s.runtimes.end(),
                         [&](const RuntimeSample& r) { return r.pid == pid; });
  };
  const RuntimeMemory& alone = *runtime(5100).memory;
  EXPECT_TRUE(alone.device_unavailable.empty()) << alone.device_unavailable;
  ASSERT_GT(device_total(0), 0u);
  EXPECT_EQ(alone.DeviceTotal(), device_total(0));
  std::uint64_t other = 0;
  for (const CoreMemory& c : alone.cores) other += c.other;
  EXPECT_EQ(other, device_total(0) - s.devices[0].memory.used[DeviceMemoryCategory("tensors")] -
                       s.devices[0].memory.used[DeviceMemoryCategory("constants")] -
                       s.devices[0].memory.used[DeviceMemoryCategory("model_code")] -
                       s.devices[0].memory.used[DeviceMemoryCategory("runtime_memory")] -
                       s.devices[0].memory.used[DeviceMemoryCategory("model_shared_scratchpad")]);
  EXPECT_GT(other, 0u);
  const RuntimeMemory& partly = *runtime(5200).memory;
  EXPECT_EQ(partly.DeviceTotal(), device_total(1));
  EXPECT_NE(partly.device_unavailable.find("ND2 is shared"), std::string::npos)
      << partly.device_unavailable;
  EXPECT_EQ(partly.device_unavailable.find("ND1"), std::string::npos);
  const RuntimeMemory& shared = *runtime(5300).memory;
  EXPECT_TRUE(shared.cores.empty());
  EXPECT_NE(shared.device_unavailable.find("ND2 is shared"), std::string::npos);
}

// A runtime datastore image as the driver maps it: `busy_us` and `tensors` on each physical core
// of `cores`, `completed` executions on the first of them, runtime version 2.22.14.
void WriteDatastore(const FakeTree& tree, int device, int pid, std::vector<int> cores,
                    std::uint64_t busy_us, std::uint64_t tensors, std::uint64_t completed,
                    std::uint64_t macs = 0) {
  std::string image(datastore::kDriverSize, '\0');
  const auto put = [&](std::size_t offset, std::uint64_t v) {
    std::memcpy(image.data() + offset, &v, sizeof v);
  };
  std::memcpy(image.data(), "nds", 4);
  const std::int32_t version = 1;
  std::memcpy(image.data() + 4, &version, sizeof version);
  put(datastore::DeviceCounterOffset(datastore::kRuntimeVersion),
      datastore::EncodeVersion(2, 22, 14));
  put(datastore::DeviceCounterOffset(datastore::kFrameworkVersion),
      datastore::EncodeVersion(2, 1, 2));
  for (int c : cores) {
    put(datastore::CoreCounterOffset(c, datastore::kTimeInUse), busy_us);
    put(datastore::CoreCounterOffset(c, datastore::kDeviceTensors), tensors);
    put(datastore::CoreCounterOffset(c, datastore::kMacCount), macs);
  }
  put(datastore::CoreCounterOffset(cores.front(), datastore::kInferCompleted), completed);
  tree.Write("datastore/neuron" + std::to_string(device) + "/" + std::to_string(pid), image);
}

// With the runtimes' datastores (--datastore-root), each runtime's figures are its own: the cores
// it uses on a device it shares, its memory there, its executions even on a driver that counts
// them only at exit (2.28), and its runtime version in the inventory. An image that is not a
// datastore is named and its device keeps the driver's figures.
TEST(Host, RuntimeDatastoresGiveEachApplicationItsOwnFigures) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();  // 8 physical cores a device, 4 logical (lnc 2)
  WriteHolder(tree, 5100, {0}, "/user.slice", 500);
  WriteHolder(tree, 5200, {1}, "/user.slice", 600);
  WriteHolder(tree, 5300, {1}, "/user.slice", 700);
  WriteHolder(tree, 5400, {2}, "/user.slice", 800);
  WriteDatastore(tree, 0, 5100, {0, 1, 2, 3, 4, 5, 6, 7}, 1000, 100, 7);
  WriteDatastore(tree, 1, 5200, {0, 1, 2, 3}, 1000, 50, 3);  // logical cores 4, 5
  WriteDatastore(tree, 1, 5300, {4, 5, 6, 7}, 2000, 60, 4);  // logical cores 6, 7
  tree.Write("datastore/neuron2/5400", "not a datastore");
  HostOptions o = OptionsFor(tree, "");
  o.datastore_root = tree.root() + "/datastore";
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  const auto runtime = [&](std::uint32_t pid) -> const RuntimeSample& {
    return *std::find_if(s.runtimes.begin(), s.runtimes.end(),
                         [&](const RuntimeSample& r) { return r.pid == pid; });
  };
  ASSERT_EQ(s.runtimes.size(), 4u);
  EXPECT_EQ(runtime(5100).cores, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(runtime(5200).cores, (std::vector<std::uint32_t>{4, 5}));
  EXPECT_EQ(runtime(5300).cores, (std::vector<std::uint32_t>{6, 7}));
  EXPECT_EQ(runtime(5400).cores, (std::vector<std::uint32_t>{8, 9, 10, 11})) << "the fallback";
  EXPECT_EQ(runtime(5200).memory->cores.size(), 2u);
  EXPECT_EQ(runtime(5200).memory->cores[0].tensors, 100u);  // two physical cores of 50
  EXPECT_TRUE(runtime(5200).memory->device_unavailable.empty());
  EXPECT_EQ(runtime(5300).memory->cores[1].tensors, 120u);
  EXPECT_EQ(runtime(5100).executions.completed, 7u);
  EXPECT_EQ(runtime(5200).executions.completed, 3u);
  EXPECT_EQ(runtime(5300).executions.completed, 4u);
  // 5400's device had no datastore: its executions are the driver's, unmeasured before 2.30.2.
  EXPECT_FALSE(s.UnmeasuredReason(Signal::kExecutions).empty());
  const v1::Inventory inv = (*host)->Inventory(Now());
  ASSERT_NE(FindProcess(inv, 5200), nullptr);
  EXPECT_EQ(FindProcess(inv, 5200)->runtime_version(), "2.22.14");
  EXPECT_EQ(FindProcess(inv, 5200)->framework_version(), "2.1.2");
  EXPECT_EQ(std::vector<std::uint32_t>(FindProcess(inv, 5200)->core_ids().begin(),
                                       FindProcess(inv, 5200)->core_ids().end()),
            (std::vector<std::uint32_t>{4, 5}));
  EXPECT_EQ(FindProcess(inv, 5400)->runtime_version(), "");
  EXPECT_EQ(FindProcess(inv, 5400)->framework_version(), "");
  const std::string described = (*host)->Describe();
  EXPECT_NE(described.find("runtime datastores from image files under " + o.datastore_root),
            std::string::npos);
  EXPECT_NE(described.find("ND2 pid 5400: datastore of 15 bytes"), std::string::npos) << described;
  // Every runtime read from its datastore: executions are measured on this old driver too.
  tree.Remove("proc/5400");
  for (int i = 0; i < 6; ++i) (*host)->Read(Now());  // a scan without 5400
  EXPECT_EQ((*host)->Read(Now()).UnmeasuredReason(Signal::kExecutions), "");
}

// On a driver that adds busy time and FLOPs into sysfs only when a process exits (2.28), a device
// whose every holder's datastore is read has its cores' busy time and FLOPs from the datastores'
// growth, live: the driver's own counters did not move here at all. The first reading of a
// datastore is its past, never one interval's.
TEST(Host, DatastoresGiveLiveBusyTimeAndFlopsOnAnOldDriver) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();  // lnc 2: logical core 8 is device 2's physical 0 and 1
  WriteHolder(tree, 5100, {2}, "/user.slice", 500);
  WriteDatastore(tree, 2, 5100, {0, 1, 2, 3}, 900'000'000, 10, 1, 1'000'000);
  HostOptions o = OptionsFor(tree, "");
  o.datastore_root = tree.root() + "/datastore";
  const MonoTime t0 = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(o, t0);
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot before = (*host)->Read(t0);
  EXPECT_EQ(before.cores[8].busy_ns, 0u) << "900 s the process counted before: not this interval";
  WriteDatastore(tree, 2, 5100, {0, 1, 2, 3}, 900'000'000 + 5'000'000, 10, 1,
                 1'000'000 + 4'000'000);
  const Snapshot after = (*host)->Read(t0 + std::chrono::seconds(10));
  EXPECT_EQ(after.cores[8].busy_ns - before.cores[8].busy_ns, 5'000'000'000u);
  EXPECT_EQ(after.cores[8].physical_busy_ns,
            (std::vector<std::uint64_t>{5'000'000'000u, 5'000'000'000u}));
  EXPECT_DOUBLE_EQ(after.cores[8].flops - before.cores[8].flops, 2 * 2 * 4e6);
  EXPECT_EQ(after.cores[9].busy_ns - before.cores[9].busy_ns, 5'000'000'000u);
  EXPECT_EQ(after.cores[10].busy_ns, before.cores[10].busy_ns) << "physical 4, 5: no growth";
  EXPECT_EQ(after.UnmeasuredReason(Signal::kCoreActivity), "");
  EXPECT_EQ(after.UnmeasuredReason(Signal::kFlops), "");
  EXPECT_NE(after.UnmeasuredReason(Signal::kLatency).find("no latency figure"), std::string::npos);
}

// A device the datastores serve has its activity files re-read only rarely; when it stops being
// served, the driver's counters take over from a fresh baseline: the time they were kept is never
// one interval's growth (no reading clamped, no burst of busy time), and from then on they count.
TEST(Host, ADeviceTheDatastoresStopServingGoesBackToTheDriversCountersWithoutABurst) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver230();
  WriteHolder(tree, 5100, {2}, "/user.slice", 500);
  WriteDatastore(tree, 2, 5100, {0, 1, 2, 3, 4, 5, 6, 7}, 1000, 10, 1);
  HostOptions o = OptionsFor(tree, "");
  o.datastore_root = tree.root() + "/datastore";
  o.process_scan_every = 1;
  MonoTime t = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(o, t);
  ASSERT_TRUE(host.ok()) << host.status().message();
  std::vector<Snapshot> reads{(*host)->Read(t)};
  const auto advance = [&] {
    tree.AdvanceTrn2Counters(std::chrono::seconds(10), 0.5, 2);
    t += std::chrono::seconds(10);
    reads.push_back((*host)->Read(t));
  };
  advance();  // served: the datastore did not move, so neither does the core
  tree.Remove("datastore/neuron2/5100");
  advance();  // not served any more; the driver's files were last read a read ago
  advance();  // the driver's counters again, from a fresh baseline
  advance();  // and counting
  const auto grew = [&](std::size_t i) {
    return reads[i].cores[8].busy_ns - reads[i - 1].cores[8].busy_ns;
  };
  EXPECT_EQ(grew(1), 0u);
  EXPECT_EQ(grew(2), 0u);
  EXPECT_EQ(grew(3), 0u);
  EXPECT_NEAR(static_cast<double>(grew(4)), 5e9, 1e6);
  EXPECT_EQ((*host)->clamped_busy_readings(), 0u);
}

// Sets counter `k` of physical core `core` in an image WriteDatastore wrote.
void PutCounter(const FakeTree& tree, const std::string& relative, int core,
                datastore::CoreCounter k, std::uint64_t v) {
  const std::string path = tree.root() + "/" + relative;
  std::string image((std::istreambuf_iterator<char>(std::ifstream(path, std::ios::binary).rdbuf())),
                    std::istreambuf_iterator<char>());
  std::memcpy(image.data() + datastore::CoreCounterOffset(core, k), &v, sizeof v);
  tree.Write(relative, image);
}

// A driver before 2.30.2 adds a process's hardware errors to its per-core counters only when the
// process exits; the live processes' datastores count them meanwhile, so a device's errors are
// current. A process that exits before the tree shows its count never makes a count fall (and
// count again). A live driver's counters already hold them: nothing is added.
TEST(Host, OnAnOldDriverTheDatastoresMakeHardwareErrorsCurrent) {
  for (const bool live : {false, true}) {
    SCOPED_TRACE(live ? "2.30" : "2.28");
    FakeTree tree;
    if (live) {
      tree.WriteTrn2_48xlarge_Driver230();
    } else {
      tree.WriteTrn2_48xlarge_Driver228();
    }
    WriteProcess(tree, 5100, {0}, "/user.slice");
    tree.Write("proc/5100/stat", StatLine(5100, 500));
    WriteDatastore(tree, 0, 5100, {0, 1}, 1000, 10, 1);
    PutCounter(tree, "datastore/neuron0/5100", 1, datastore::kHwErrNcUe, 3);
    PutCounter(tree, "datastore/neuron0/5100", 0, datastore::kHwErrDmaAbort, 2);
    PutCounter(tree, "datastore/neuron0/5100", 1, datastore::kHwErrRepairableHbmUe, 5);
    HostOptions o = OptionsFor(tree, "");
    o.datastore_root = tree.root() + "/datastore";
    o.process_scan_every = 1;
    Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
    ASSERT_TRUE(host.ok()) << host.status().message();
    const Snapshot s = (*host)->Read(Now());
    const HardwareErrors& e = s.devices[0].errors;
    const HardwareErrors& other = s.devices[1].errors;  // no process: the driver's alone
    EXPECT_EQ(e.nc_uncorrectable - other.nc_uncorrectable, live ? 0u : 3u);
    EXPECT_EQ(e.dma_abort - other.dma_abort, live ? 0u : 2u);
    EXPECT_EQ(e.hbm_repairable - other.hbm_repairable, live ? 0u : 5u);
    // The process exits; the tree has not counted it yet: the device's count does not fall.
    tree.Remove("datastore/neuron0/5100");
    tree.Remove("proc/5100");
    const Snapshot after = (*host)->Read(Now());
    EXPECT_EQ(after.devices[0].errors.nc_uncorrectable, e.nc_uncorrectable);
  }
}

// Whatever a datastore claims, a core is busy at most the time since the last read (its writer may
// be hostile, and several may claim one core); and one holder whose datastore turns to garbage
// keeps what it said at its last read for a few reads (its cumulative executions never fall and
// count again), and costs its neighbours on the same device nothing.
TEST(Host, DatastoreBusyTimeIsBoundedAndOneBadDatastoreDoesNotCostItsNeighbours) {
  FakeTree tree;
  tree.WriteTrn2_48xlarge_Driver228();
  WriteHolder(tree, 5100, {2}, "/user.slice", 500);
  WriteHolder(tree, 5200, {2}, "/user.slice", 600);
  WriteDatastore(tree, 2, 5100, {0, 1}, 1000, 10, 1);
  WriteDatastore(tree, 2, 5200, {2, 3}, 1000, 10, 1);
  HostOptions o = OptionsFor(tree, "");
  o.datastore_root = tree.root() + "/datastore";
  MonoTime t = Now();
  Result<std::unique_ptr<Host>> host = Host::Open(o, t);
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot first = (*host)->Read(t);
  // 5200 claims a million seconds on its cores in ten.
  WriteDatastore(tree, 2, 5100, {0, 1}, 1000 + 4'000'000, 10, 1);
  WriteDatastore(tree, 2, 5200, {2, 3}, 1000 + 1'000'000'000'000, 10, 1);
  t += std::chrono::seconds(10);
  const Snapshot second = (*host)->Read(t);
  EXPECT_EQ(second.cores[8].busy_ns - first.cores[8].busy_ns, 4'000'000'000u);
  EXPECT_EQ(second.cores[9].busy_ns - first.cores[9].busy_ns, 10'000'000'000u) << "the interval";
  // 5200's datastore turns to garbage: 5100's core still counts from its datastore.
  tree.Write("datastore/neuron2/5200", "garbage");
  WriteDatastore(tree, 2, 5100, {0, 1}, 1000 + 7'000'000, 10, 1);
  t += std::chrono::seconds(10);
  const Snapshot third = (*host)->Read(t);
  EXPECT_EQ(third.cores[8].busy_ns - second.cores[8].busy_ns, 3'000'000'000u);
  const auto runtime = [&](std::uint32_t pid) -> const RuntimeSample& {
    return *std::find_if(third.runtimes.begin(), third.runtimes.end(),
                         [&](const RuntimeSample& r) { return r.pid == pid; });
  };
  EXPECT_EQ(runtime(5100).cores, (std::vector<std::uint32_t>{8}));
  const auto executions_at = [](const Snapshot& s, std::uint32_t pid) {
    return std::find_if(s.runtimes.begin(), s.runtimes.end(),
                        [&](const RuntimeSample& r) { return r.pid == pid; })
        ->executions.completed;
  };
  ASSERT_GT(executions_at(second, 5200), 0u);
  EXPECT_EQ(runtime(5200).cores, (std::vector<std::uint32_t>{9})) << "kept from its last read";
  EXPECT_EQ(executions_at(third, 5200), executions_at(second, 5200))
      << "never falls in a read that missed it";
  EXPECT_EQ(third.cores[9].busy_ns, second.cores[9].busy_ns) << "no growth it did not show";
}

// A holder without a datastore (a monitoring tool such as AWS's neuron-monitor) uses none of the
// cores of a device whose other holders' datastores were read; on a device where no holder has one
// (the datastores cannot tell), it keeps the driver's figures, as without datastores.
TEST(Host, AHolderWithoutADatastoreUsesNoneOfAServedDevicesCores) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();  // 2 cores a device
  WriteHolder(tree, 5100, {0}, "/user.slice", 500);
  WriteHolder(tree, 5300, {0, 1}, "/user.slice", 600);
  WriteDatastore(tree, 0, 5100, {0, 1}, 1000, 10, 2);
  HostOptions o = OptionsFor(tree, "");
  o.datastore_root = tree.root() + "/datastore";
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.runtimes.size(), 2u);
  EXPECT_EQ(s.runtimes[0].cores, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(s.runtimes[1].cores, (std::vector<std::uint32_t>{2, 3})) << "ND1's, from the driver";
  // 5300 has none where 5100's was read, but ND1's datastores cannot tell: unknown, listed.
  const v1::Inventory inv = (*host)->Inventory(Now());
  EXPECT_FALSE(FindProcess(inv, 5300)->no_datastore());
  EXPECT_FALSE(FindProcess(inv, 5100)->no_datastore());
  // A holder of ND0 alone without one, where 5100's was read: not a runtime (neuron-ls hides it).
  WriteHolder(tree, 5400, {0}, "/user.slice", 700);
  HostOptions rescan = o;
  Result<std::unique_ptr<Host>> again = Host::Open(rescan, Now());
  ASSERT_TRUE(again.ok());
  (*again)->Read(Now());
  EXPECT_TRUE(FindProcess((*again)->Inventory(Now()), 5400)->no_datastore());
  EXPECT_FALSE(FindProcess((*again)->Inventory(Now()), 5300)->no_datastore());
}

// The daemon's own datastore reads open the devices read-only, which the process scan sees: the
// daemon's pid is never a holder.
TEST(Host, TheDaemonsOwnPidIsNeverAnApplication) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  WriteHolder(tree, 5100, {0}, "/user.slice", 500);
  WriteHolder(tree, 5200, {0, 1}, "/system.slice/neuron-monitord.service", 600);
  HostOptions o = OptionsFor(tree, "");
  o.own_pid = 5200;
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.runtimes.size(), 1u);
  EXPECT_EQ(s.runtimes[0].pid, 5100u);
  EXPECT_TRUE(s.runtimes[0].memory->device_unavailable.empty()) << "ND0 is 5100's alone";
  EXPECT_EQ(FindProcess((*host)->Inventory(Now()), 5200), nullptr);
}

// The live driver source on a host whose device nodes do not answer the datastore ioctl (here
// /dev/null): the reason is named, the runtime keeps the driver's figures, and no figure is 0 for
// it.
TEST(Host, ARefusedDatastoreIoctlIsNamedAndTheDriversFiguresStay) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  WriteHolder(tree, 5100, {0}, "/user.slice", 500);
  tree.Symlink("/dev/null", "dev/neuron0");
  Result<std::unique_ptr<Host>> host = Host::Open(OptionsFor(tree, ""), Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = (*host)->Read(Now());
  ASSERT_EQ(s.runtimes.size(), 1u);
  EXPECT_EQ(s.runtimes[0].cores.size(), 2u) << "the device's cores, as without datastores";
  EXPECT_NE(s.UnmeasuredReason(Signal::kExecutions).find("before 2.30.2"), std::string::npos);
  const std::string described = (*host)->Describe();
  EXPECT_NE(
      described.find("runtime datastores from the driver (" + tree.root() + "/dev/neuron<N>) (" +
                     tree.root() + "/dev/neuron0: the driver refused the datastore of pid 5100"),
      std::string::npos)
      << described;
}

// The datastores come first; neuron-monitor, when it runs, adds only what they lack (latency): the
// runtime's executions are its datastore's, its latency neuron-monitor's, and neuron-monitor's
// other runtimes (not holders on this host) are not invented.
TEST(HostWithNeuronMonitor, DatastoresComeFirstAndNeuronMonitorAddsLatency) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  WriteHolder(tree, 41200, {0}, "/user.slice", 500);
  WriteDatastore(tree, 0, 41200, {0, 1}, 1000, 10, 7);
  const std::string monitor =
      FakeMonitor(tree, std::string("--period-ms 50 --replay ") + NEURONMON_TESTDATA_DIR +
                            "/neuron_monitor/trn1.32xlarge_healthy-training.golden");
  HostOptions o = OptionsFor(tree, monitor);
  o.datastore_root = tree.root() + "/datastore";
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const Snapshot s = ReadUntil(**host, [](const Snapshot& r) {
    return r.runtimes.size() == 1 && !r.runtimes[0].total_latency.empty();
  });
  ASSERT_EQ(s.runtimes.size(), 1u);
  EXPECT_EQ(s.runtimes[0].pid, 41200u);
  EXPECT_EQ(s.runtimes[0].executions.completed, 7u);
  EXPECT_FALSE(s.runtimes[0].total_latency.empty());
  EXPECT_EQ(s.UnmeasuredReason(Signal::kLatency), "");
  EXPECT_EQ(s.UnmeasuredReason(Signal::kExecutions), "");
}

// The daemon takes the process scan's step after handing a reading over (AfterRead), so the step's
// budget delays no report; a Read that follows it takes no step of its own, and a caller that never
// calls AfterRead has the step taken inside Read.
TEST(Host, TheScanStepCanFollowTheRead) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  HostOptions o = OptionsFor(tree, "");
  o.process_scan_every = 1;
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  EXPECT_TRUE((*host)->Read(Now()).runtimes.empty());
  WriteHolder(tree, 5200, {0}, "/user.slice", 500);
  (*host)->AfterRead();  // its step finds 5200
  WriteHolder(tree, 5300, {1}, "/user.slice", 600);
  Snapshot s = (*host)->Read(Now());  // no step of its own: 5300 is not seen yet
  ASSERT_EQ(s.runtimes.size(), 1u);
  EXPECT_EQ(s.runtimes[0].pid, 5200u);
  s = (*host)->Read(Now());  // no AfterRead since: the step is taken here
  EXPECT_EQ(s.runtimes.size(), 2u);
}

// neuron-monitor names runtimes by pid alone: once the pid names a process that started at
// another time, its runtime leaves at once, and the next document listing the pid starts it afresh
// rather than adding to the first process's counts.
TEST(HostWithNeuronMonitor, ARuntimeWhosePidIsReusedStartsAfresh) {
  FakeTree tree;
  tree.WriteTrn1_32xlarge_Driver226();
  const std::string monitor =
      FakeMonitor(tree, std::string("--period-ms 20 --replay ") + NEURONMON_TESTDATA_DIR +
                            "/neuron_monitor/trn1.32xlarge_healthy-training.golden");
  HostOptions o = OptionsFor(tree, monitor);
  tree.Write("proc/41200/stat", StatLine(41200, 777));
  Result<std::unique_ptr<Host>> host = Host::Open(o, Now());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const auto completed = [](const Snapshot& s) -> std::optional<std::uint64_t> {
    for (const RuntimeSample& r : s.runtimes) {
      if (r.pid == 41200) return r.executions.completed;
    }
    return std::nullopt;
  };
  // Several documents' worth, so a fresh start is visibly smaller.
  std::optional<std::uint64_t> first;
  Snapshot s = ReadUntil(**host, [&](const Snapshot& r) {
    if (!first && completed(r).value_or(0) > 0) first = completed(r);
    return first && completed(r).value_or(0) >= 4 * *first;
  });
  ASSERT_TRUE(first.has_value()) << (*host)->RuntimeStatus();
  const std::uint64_t before = completed(s).value_or(0);
  ASSERT_GE(before, 4 * *first);
  tree.Write("proc/41200/stat", StatLine(41200, 9000));
  s = (*host)->Read(Now());
  EXPECT_FALSE(completed(s).has_value());
  s = ReadUntil(**host, [&](const Snapshot& r) { return completed(r).has_value(); });
  ASSERT_TRUE(completed(s).has_value());
  EXPECT_LT(*completed(s), before);
}

}  // namespace
}  // namespace neuronmon::neurondev
