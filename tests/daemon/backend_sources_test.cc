// Backend::Sources: a real host's backend (over a driver tree the simulator writes) reports what
// its sources refused or left out, which /metrics exports; the simulator reports nothing.
#include <gtest/gtest.h>

#include <fstream>

#include "daemon/core/backend.h"
#include "daemon/core/daemon_core.h"
#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"
#include "tests/temp_dir.h"

namespace neuronmon::daemon {
namespace {

TEST(BackendSources, ARealHostCountsWhatItsSourcesRefused) {
  test_util::TempDir dir("sources");
  Result<simdev::InstanceSpec> spec = simdev::ParseDeviceSpec("sim:trn1.2xlarge");
  ASSERT_TRUE(spec.ok());
  Result<simdev::Scenario> scenario = simdev::LoadScenario("healthy-training");
  ASSERT_TRUE(scenario.ok());
  Result<std::unique_ptr<simdev::Instance>> sim =
      simdev::Instance::Create(*spec, std::move(*scenario), 1);
  ASSERT_TRUE(sim.ok());
  const std::string sys = dir.File("sys"), proc = dir.File("proc"), kmsg = dir.File("kmsg");
  simdev::DriverTreeWriter writer(sys, proc, {.kernel_log = kmsg});
  const Nanos t(std::chrono::seconds(30));
  ASSERT_TRUE(writer.Write((*sim)->Inventory(t), (*sim)->Read(t)).ok());
  // What a local user gets into the log: a segfaulting program's name (kernel facility, level
  // info) and a write to /dev/kmsg (user facility, level err). Then an event naming no device.
  std::ofstream(kmsg, std::ios::app)
      << "6,90,100,-;x NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0 action=TERMINATE_INSTANCE "
         "y[1]: segfault at 0\n"
      << "11,91,101,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0\n"
      << "3,92,102,-;NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR\n";
  BackendOptions options;
  options.device = "neuron";
  options.host.sysfs_root = sys;
  options.host.proc_root = proc;
  options.host.neuron_monitor = "";
  options.host.kubernetes = false;
  options.host.kernel_log_options.path = kmsg;
  Result<std::unique_ptr<Backend>> backend = MakeBackend(options, MonoTime(t));
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  DaemonCore core(CoreOptions{}, std::move(*backend), nullptr);
  EXPECT_FALSE(core.sources().has_value());  // nothing read yet
  core.Sample(MonoTime(t), WallTime{});
  ASSERT_TRUE(core.sources().has_value());
  const SourceStats& s = *core.sources();
  EXPECT_EQ(s.kernel_log_refused, 2u);
  EXPECT_EQ(s.kernel_log_unattributed, 1u);
  EXPECT_EQ(s.processes_unexamined.at("uid_limited"), 0u);
  EXPECT_EQ(s.processes_unexamined.size(), 4u);
  EXPECT_FALSE(s.runtimes_dropped.has_value());  // no neuron-monitor
  EXPECT_EQ(core.history().newest()->devices[0].errors.KernelTotal(), 0u);

  // Without the kernel log, its counters are absent rather than zero.
  options.host.kernel_log_options.path = kmsg;
  options.host.kernel_log = false;
  Result<std::unique_ptr<Backend>> quiet = MakeBackend(options, MonoTime(t));
  ASSERT_TRUE(quiet.ok()) << quiet.status().message();
  (*quiet)->Read(MonoTime(t));
  ASSERT_TRUE((*quiet)->Sources().has_value());
  EXPECT_FALSE((*quiet)->Sources()->kernel_log_refused.has_value());
}

TEST(BackendSources, TheSimulatorHasNone) {
  BackendOptions options;
  options.device = "sim:trn1.2xlarge";
  Result<std::unique_ptr<Backend>> backend = MakeBackend(options, MonoTime{});
  ASSERT_TRUE(backend.ok());
  (*backend)->Read(MonoTime{});
  EXPECT_FALSE((*backend)->Sources().has_value());
}

}  // namespace
}  // namespace neuronmon::daemon
