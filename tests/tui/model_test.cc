// The model's merging of the daemon's reports.
#include "tui/model.h"

#include <gtest/gtest.h>

#include "tests/daemon/shared_core_backend.h"
#include "tests/tui/model_fixture.h"

namespace neuronmon::tui {
namespace {

v1::Report RuntimeReport(std::uint64_t seq, std::vector<std::uint32_t> pids) {
  v1::Report r;
  r.set_seq(seq);
  r.add_groups(v1::GROUP_NEURONCORE_COUNTERS);
  for (std::uint32_t pid : pids) {
    v1::RuntimeReport* rt = r.add_runtimes();
    rt->set_pid(pid);
    rt->set_tag("t" + std::to_string(pid));
    v1::CoreCounters* c = rt->mutable_neuroncore_counters()->add_cores();
    c->set_index(pid % 2);
    c->set_utilization_percent(60);
  }
  return r;
}

TEST(Model, MergesGroupsDropsExitedRuntimesCountsASharedCoreOnce) {
  Model m;
  v1::Welcome w;
  w.mutable_inventory()->mutable_hardware_info()->set_neuroncore_per_device_count(2);
  w.mutable_inventory()->add_devices();
  m.SetWelcome(w);
  m.Apply(RuntimeReport(1, {10, 12}));
  ASSERT_EQ(m.runtimes().size(), 2u);
  // pids 10 and 12 both use core 0, which is 60 % busy (each report lists the core's figure):
  // the "all" tab shows the core, not the sum of the two listings.
  EXPECT_DOUBLE_EQ(m.CoreUtilization(0)[0], 60);
  EXPECT_DOUBLE_EQ(m.CoreUtilization(10)[0], 60);
  // A report with only memory_info keeps the runtimes' groups.
  v1::Report memory;
  memory.set_seq(2);
  memory.add_groups(v1::GROUP_MEMORY_INFO);
  memory.mutable_system()->mutable_memory_info()->set_memory_total_bytes(42);
  m.Apply(memory);
  EXPECT_EQ(m.runtimes().size(), 2u);
  EXPECT_EQ(m.system().memory_info().memory_total_bytes(), 42u);
  // A runtime missing from a report with runtime groups has exited.
  m.Apply(RuntimeReport(3, {12}));
  ASSERT_EQ(m.runtimes().size(), 1u);
  EXPECT_EQ(m.runtimes().begin()->report.pid(), 12u);
  // Every report adds a history point per device.
  EXPECT_EQ(m.device_utilization()[0].values().size(), 3u);
  v1::Report none = RuntimeReport(4, {});
  m.Apply(none);
  EXPECT_TRUE(m.runtimes().empty());
}

// Two applications on the same NeuronCores, through the daemon: the "all" tab, the devices'
// history and each application's tab show the cores' own utilization — not twice it (capped at
// 100 %), not a 0 from the application that adds none.
TEST(Model, ASharedCoreFromTheDaemonCountsOnce) {
  const Model m =
      testing::BuildModelOver(daemon::testing::SharedCoreSim("sim:trn1.2xlarge", "healthy-training",
                                                             MonoTime(std::chrono::seconds(1000))),
                              30);
  ASSERT_EQ(m.runtimes().size(), 2u);
  const std::uint32_t owner = m.runtimes()[0].report.pid();
  const std::uint32_t sharer = m.runtimes()[1].report.pid();
  const std::vector<double> all = m.CoreUtilization(0);
  ASSERT_EQ(all.size(), 2u);
  for (std::size_t c = 0; c < all.size(); ++c) {
    EXPECT_GT(all[c], 50) << c;
    EXPECT_LT(all[c], 99.9) << c << ": a busy core counted twice";
    EXPECT_DOUBLE_EQ(all[c], m.CoreUtilization(owner)[c]) << c;
    EXPECT_DOUBLE_EQ(all[c], m.CoreUtilization(sharer)[c]) << c;
    ASSERT_TRUE(m.CoreFlops(0)[c].has_value());
    EXPECT_DOUBLE_EQ(*m.CoreFlops(0)[c], *m.CoreFlops(owner)[c]) << c;
  }
  EXPECT_DOUBLE_EQ(m.device_utilization()[0].values().back(), (all[0] + all[1]) / 2);
}

TEST(Model, FromARealDaemonStream) {
  const Model m = testing::BuildModel("sim:trn1.32xlarge", "healthy-training", 60);
  EXPECT_EQ(m.runtimes().size(), 16u);
  EXPECT_EQ(m.device_utilization().size(), 16u);
  EXPECT_EQ(m.device_utilization()[0].values().size(), 61u);
  EXPECT_GT(m.device_utilization()[0].values().back(), 80);
  EXPECT_TRUE(m.system().has_hbm_stats());
}

}  // namespace
}  // namespace neuronmon::tui
