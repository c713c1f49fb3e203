// BuildReport: window rates against hand-computed values, counter resets, tag filters, lost
// devices and which groups a report carries.
#include "daemon/core/report/report_builder.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/daemon/core_fixture.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;
using testing::Base;
using testing::Inventory;
using testing::Request;

TEST(ReportBuilder, RatesMatchHandComputedValues) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(12, 12);  // a 2 s window
  a.cores[0] = {3'000'000'000, 1e15, 0.9e15, {3'100'000'000, 2'900'000'000}};
  b.cores[0] = {4'500'000'000, 1.2e15, 1.05e15, {4'700'000'000, 4'300'000'000}};
  a.devices[0].hbm_read_bytes = 1'000'000'000'000;
  b.devices[0].hbm_read_bytes = 3'900'000'000'000;
  b.devices[0].hbm_write_bytes = 1'450'000'000'000;
  a.devices[0].ecc.mem_corrected = 4;
  b.devices[0].ecc.mem_corrected = 7;
  RuntimeSample& ra = a.runtimes[0];
  RuntimeSample& rb = b.runtimes[0];
  ra.cpu_user_ns = 1'000'000'000;
  rb.cpu_user_ns = 1'000'000'000 + 19'200'000'000;  // 19.2 CPU-seconds in 2 s of 192 vCPUs = 5%
  ra.executions.completed = 90;
  rb.executions.completed = 100;
  rb.executions.transient = 2;
  ra.total_latency.Add(0.5, 90);
  rb.total_latency = ra.total_latency;
  rb.total_latency.Add(0.025, 10);
  CollectiveCounters& ca = ra.collectives[0];
  CollectiveCounters& cb = rb.collectives[0];
  ca.count = 1000;
  cb.count = 1100;
  cb.bytes = 100 * 1048576;
  cb.busy_ns = 500'000'000;  // 0.5 s of 2 s
  cb.latency.Add(0.005, 100);

  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  for (v1::Group g : AllGroups()) in.groups.push_back({g, &a});
  const v1::Report r = BuildReport(in);
  EXPECT_EQ(r.seq(), 12u);
  EXPECT_EQ(r.period_ns(), 2'000'000'000u);
  EXPECT_EQ(r.window_start_seq(), 10u);
  EXPECT_FALSE(r.counters_reset());
  ASSERT_EQ(r.runtimes_size(), 1);
  const v1::RuntimeReport& rt = r.runtimes(0);
  const v1::CoreCounters& core = rt.neuroncore_counters().cores(0);
  EXPECT_DOUBLE_EQ(core.utilization_percent(), 75);
  EXPECT_DOUBLE_EQ(core.flops(), 1e14);
  EXPECT_DOUBLE_EQ(core.effective_flops(), 0.75e14);
  ASSERT_EQ(core.physical_size(), 2);
  EXPECT_EQ(core.physical(1).index(), 1u);
  EXPECT_DOUBLE_EQ(core.physical(0).utilization_percent(), 80);
  EXPECT_DOUBLE_EQ(core.physical(1).utilization_percent(), 70);
  EXPECT_EQ(rt.neuroncore_counters().cores(3).index(), 3u);
  EXPECT_DOUBLE_EQ(rt.vcpu_usage().user_percent(), 5);
  EXPECT_EQ(rt.execution_stats().execution_summary().completed(), 10u);
  EXPECT_EQ(rt.execution_stats().error_summary().transient(), 2u);
  ASSERT_TRUE(rt.execution_stats().has_total_latency());
  EXPECT_LT(rt.execution_stats().total_latency().p100(), 0.03);  // only the window's executions
  EXPECT_FALSE(rt.execution_stats().has_device_latency());       // none recorded: null
  ASSERT_EQ(rt.collectives_stats().operations_size(), 1);
  const v1::CollectiveStats& op = rt.collectives_stats().operations(0);
  EXPECT_EQ(op.op(), v1::COLLECTIVE_OP_ALL_REDUCE);
  EXPECT_EQ(op.count(), 100u);
  EXPECT_DOUBLE_EQ(op.operations_per_second(), 50);
  EXPECT_DOUBLE_EQ(op.time_share(), 0.25);
  EXPECT_DOUBLE_EQ(op.mean_message_bytes(), 1048576);
  const v1::DeviceHbm& hbm = r.system().hbm_stats().devices(0);
  EXPECT_DOUBLE_EQ(hbm.read_bytes_per_second(), 1.45e12);
  EXPECT_DOUBLE_EQ(hbm.write_bytes_per_second(), 0.725e12);
  EXPECT_DOUBLE_EQ(hbm.bandwidth_utilization_percent(), 75);
  EXPECT_EQ(r.system().neuron_hw_counters().devices(0).mem_ecc_corrected(), 3u);
  EXPECT_EQ(r.totals().cores(0).busy_ns(), 4'500'000'000u);
  EXPECT_EQ(r.totals().runtimes(0).collectives(0).count(), 1100u);
}

// A source that knows the time in collectives but not the operations (the runtime's datastore):
// the window's share, no operations made up; a device reset does not restart the process's own
// counter, so it is not taken whole.
TEST(ReportBuilder, CollectiveTimeWithoutOperationsIsTheWindowsShare) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(12, 12);  // a 2 s window
  a.runtimes[0].collective_time_ns = 7'000'000'000;
  b.runtimes[0].collective_time_ns = 7'600'000'000;  // 0.6 s of 2 s
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.groups.push_back({v1::GROUP_COLLECTIVES_STATS, &a});
  v1::Report r = BuildReport(in);
  ASSERT_EQ(r.runtimes_size(), 1);
  EXPECT_EQ(r.runtimes(0).collectives_stats().operations_size(), 0);
  EXPECT_DOUBLE_EQ(r.runtimes(0).collectives_stats().time_share(), 0.3);
  b.epoch = a.epoch + 1;  // the device was reset in the window
  r = BuildReport(in);
  EXPECT_DOUBLE_EQ(r.runtimes(0).collectives_stats().time_share(), 0.3);
}

// Busy time measured, FLOPs not (a driver before 2.30.2): utilization as ever, no FLOP/s figure,
// and why. Core activity unmeasured says it all in the group's error.
TEST(ReportBuilder, UnmeasuredFlopsAreLeftOutOfTheCoresWithTheReason) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(12, 12);
  a.cores[0].busy_ns = 3'000'000'000;
  b.cores[0].busy_ns = 4'500'000'000;
  b.cores[0].flops = 1e15;  // what a backend must not have, but never shown if it had
  auto u = std::make_shared<Unmeasured>();
  u->Set(Signal::kFlops, "flop_count moves only when a process exits");
  b.unmeasured = u;
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.groups = {{v1::GROUP_NEURONCORE_COUNTERS, &a}};
  const v1::NeuronCoreCounters cores = BuildReport(in).runtimes(0).neuroncore_counters();
  EXPECT_EQ(cores.error(), "");
  EXPECT_EQ(cores.flops_unavailable(), "flop_count moves only when a process exits");
  EXPECT_DOUBLE_EQ(cores.cores(0).utilization_percent(), 75);
  EXPECT_EQ(cores.cores(0).flops(), 0);
  EXPECT_EQ(cores.cores(0).effective_flops(), 0);
  u->Set(Signal::kCoreActivity, "no busy-time source");
  const v1::NeuronCoreCounters none = BuildReport(in).runtimes(0).neuroncore_counters();
  EXPECT_EQ(none.error(), "no busy-time source");
  EXPECT_EQ(none.flops_unavailable(), "");
  EXPECT_EQ(none.cores_size(), 0);
}

// Two applications on one NeuronCore: each lists the core's own utilization (75 %), never a share
// or a 0, and the host summary counts the core once.
TEST(ReportBuilder, ASharedCoreIsTheCoresOwnInEveryRuntimeAndCountsOnce) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(12, 12);
  for (Snapshot* s : {&a, &b}) {
    RuntimeSample sharer = s->runtimes[0];
    sharer.pid = 4343;
    sharer.tag = "sharer";
    sharer.cores = {0};
    s->runtimes.push_back(sharer);
  }
  a.cores[0].busy_ns = 3'000'000'000;
  b.cores[0].busy_ns = 4'500'000'000;
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.groups = {{v1::GROUP_NEURONCORE_COUNTERS, &a}, {v1::GROUP_HOST_SUMMARY, &a}};
  const v1::Report r = BuildReport(in);
  ASSERT_EQ(r.runtimes_size(), 2);
  for (const v1::RuntimeReport& rt : r.runtimes()) {
    ASSERT_GE(rt.neuroncore_counters().cores_size(), 1) << rt.tag();
    EXPECT_EQ(rt.neuroncore_counters().cores(0).index(), 0u);
    EXPECT_DOUBLE_EQ(rt.neuroncore_counters().cores(0).utilization_percent(), 75) << rt.tag();
  }
  EXPECT_EQ(r.host_summary().cores_in_use(), 4u);  // cores 0-3, core 0 once
  EXPECT_DOUBLE_EQ(r.host_summary().utilization_percent(), 75.0 / 4);
  EXPECT_EQ(r.host_summary().runtimes(), 2u);
}

TEST(ReportBuilder, CounterResetStartsANewBaselineNotANegativeRate) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(10, 10);
  Snapshot b = Base(11, 11);
  a.cores[0].busy_ns = 9'000'000'000;
  b.cores[0].busy_ns = 400'000'000;  // restarted: 0.4 s since the reset
  b.epoch = 1;
  a.devices[0].hbm_read_bytes = 5'000'000'000'000;
  b.devices[0].hbm_read_bytes = 1'000'000'000;
  a.runtimes[0].executions.completed = 500;
  b.runtimes[0].executions.completed = 3;
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  for (v1::Group g : AllGroups()) in.groups.push_back({g, &a});
  const v1::Report r = BuildReport(in);
  EXPECT_TRUE(r.counters_reset());
  EXPECT_DOUBLE_EQ(r.runtimes(0).neuroncore_counters().cores(0).utilization_percent(), 40);
  EXPECT_DOUBLE_EQ(r.system().hbm_stats().devices(0).read_bytes_per_second(), 1e9);
  EXPECT_EQ(r.runtimes(0).execution_stats().execution_summary().completed(), 3u);
  EXPECT_EQ(r.totals().epoch(), 1u);
}

TEST(ReportBuilder, TagFilterAndLostDevices) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(1, 1);
  Snapshot b = Base(2, 2);
  b.devices[1].present = false;
  b.runtimes[0].error = "nd1: device is not responding";
  auto sub = Subscription::FromRequest(Request({}, "^vllm"), seconds(1));
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.subscription = &*sub;
  for (v1::Group g : AllGroups()) in.groups.push_back({g, &a});
  const v1::Report r = BuildReport(in);
  EXPECT_EQ(r.runtimes_size(), 0);
  EXPECT_EQ(r.system().hbm_stats().error(), "nd1: device is not responding");
  EXPECT_EQ(r.system().hbm_stats().devices(1).error(), "device is not responding");
  EXPECT_EQ(r.system().neuron_hw_counters().error(), "nd1: device is not responding");
  in.subscription = nullptr;
  const v1::Report all = BuildReport(in);
  ASSERT_EQ(all.runtimes_size(), 1);
  EXPECT_EQ(all.runtimes(0).neuroncore_counters().error(), "nd1: device is not responding");
}

// A device's HBM in use is the driver's own figure, every category summed, when the backend
// measures it — not the runtimes' allocations (which leave out the driver's categories and
// processes it cannot see); without it, the runtimes' allocations.
TEST(ReportBuilder, HbmUsedIsTheDevicesOwnFigureWhenMeasured) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(1, 1);
  Snapshot b = Base(2, 2);
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.groups = {{v1::GROUP_HBM_STATS, &a}};
  const v1::HbmStats before = BuildReport(in).system().hbm_stats();
  const std::uint64_t runtimes = before.devices(0).used_bytes();
  DeviceMemory& m = b.devices[0].memory;
  m.measured = true;
  m.used[DeviceMemoryCategory("tensors")] = 5'000'000'000;
  m.used[DeviceMemoryCategory("driver_memory")] = 700'000'000;
  m.used[DeviceMemoryCategory("collectives")] = 300'000'000;
  const v1::DeviceHbm d = BuildReport(in).system().hbm_stats().devices(0);
  EXPECT_EQ(d.used_bytes(), 6'000'000'000u);
  EXPECT_NE(d.used_bytes(), runtimes);
  // Device 1's is not measured: still its runtimes' allocations.
  EXPECT_EQ(BuildReport(in).system().hbm_stats().devices(1).used_bytes(),
            before.devices(1).used_bytes());
}

TEST(ReportBuilder, OnlyDueGroupsArePresent) {
  const v1::Inventory inv = Inventory();
  Snapshot a = Base(1, 1);
  Snapshot b = Base(2, 2);
  ReportInput in;
  in.inventory = &inv;
  in.end = &b;
  in.groups = {{v1::GROUP_MEMORY_INFO, &a}};
  const v1::Report r = BuildReport(in);
  EXPECT_TRUE(r.system().has_memory_info());
  EXPECT_FALSE(r.system().has_hbm_stats());
  EXPECT_EQ(r.runtimes_size(), 0);  // no runtime group due
}

}  // namespace
}  // namespace neuronmon::daemon
