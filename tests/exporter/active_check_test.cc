// neuron-ls --check --active without running anything: nccom-test's output as AWS's guide shows
// it (old and new headers, a failed benchmark), the command line, the references, busy cores, and
// the verdict on each kind of run.
#include "exporter/active_check.h"

#include <gtest/gtest.h>

#include "neurondev/monitor_child.h"

namespace neuronmon::exporter {
namespace {

TEST(ActiveCheck, ParsesNccomTestsOutputOldAndNew) {
  // The guide's first example (an older nccom-test: integer time(us)).
  const NccomOutput old = ParseNccomOutput(
      "     size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
      "    33554432        33554432    uint8         768          40.69          40.69\n"
      "Avg bus bandwidth:      40.6901GB/s\n");
  EXPECT_FALSE(old.failed);
  EXPECT_DOUBLE_EQ(*old.busbw, 40.6901);
  // A current one: time:avg(us), a tab after the colon, an extra --show-algorithm column.
  const NccomOutput now = ParseNccomOutput(
      "    size(B)    count(elems)    type    time:avg(us)    algbw(GB/s)    busbw(GB/s)    "
      "algorithm\n"
      "  536870912       134217728    fp32         9624.31          55.78         103.89    "
      "kangaring\n"
      "Avg bus bandwidth:\t103.8900GB/s\n");
  EXPECT_DOUBLE_EQ(*now.busbw, 103.89);
  // No Avg line: the busbw column's mean.
  const NccomOutput rows = ParseNccomOutput(
      "size(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)\n"
      "1024 256 fp32 6.19 0.17 0.16\n"
      "2048 512 fp32 6.19 0.34 0.32\n");
  EXPECT_NEAR(*rows.busbw, 0.24, 1e-9);
  const NccomOutput failed = ParseNccomOutput(
      "     size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
      "    33554432    Failure running neuron-bench - log file /tmp/nccom_test_log_7pqpdfjf.log\n"
      "1 errors found - test failed\n");
  EXPECT_TRUE(failed.failed);
  EXPECT_FALSE(failed.busbw.has_value());
  EXPECT_EQ(failed.failure,
            "33554432    Failure running neuron-bench - log file /tmp/nccom_test_log_7pqpdfjf.log");
  // "0 errors found" and a warning that mentions a failure are no failed run.
  const NccomOutput fine = ParseNccomOutput(
      "WARNING: Failure to set affinity, continuing\n"
      "Avg bus bandwidth:      190.0000GB/s\n"
      "0 errors found\n");
  EXPECT_FALSE(fine.failed) << fine.failure;
  EXPECT_DOUBLE_EQ(*fine.busbw, 190);
  EXPECT_FALSE(ParseNccomOutput("Neuron DKMS Driver is not running!\n").busbw.has_value());
  EXPECT_FALSE(ParseNccomOutput("Avg bus bandwidth: lots\n").busbw.has_value());
  EXPECT_FALSE(ParseNccomOutput("Avg bus bandwidth: -3GB/s\n").busbw.has_value());
}

TEST(ActiveCheck, CommandLineAndReferences) {
  ActiveOptions o;
  EXPECT_EQ(NccomArgs(32, o),
            (std::vector<std::string>{"allr", "-r", "32", "-b", "268435456", "-e", "268435456",
                                      "-n", "20", "-d", "fp32", "--check"}));
  EXPECT_EQ(ReferenceBusBandwidth("trn1.32xlarge")->link_gbps, 384);
  EXPECT_EQ(ReferenceBusBandwidth("trn1n.32xlarge")->link_gbps, 768);
  EXPECT_NEAR(ReferenceBusBandwidth("trn2.48xlarge")->link_gbps, 953.67, 0.01);
  EXPECT_EQ(ReferenceBusBandwidth("inf2.48xlarge")->link_gbps, 192);
  // One device, no NeuronLink: nothing to compare with.
  EXPECT_FALSE(ReferenceBusBandwidth("trn1.2xlarge").has_value());
  EXPECT_FALSE(ReferenceBusBandwidth("inf2.xlarge").has_value());
  EXPECT_FALSE(ReferenceBusBandwidth("m5.large").has_value());
}

TEST(ActiveCheck, FindsTheToolInPathThenInAwsToolsButNeverARelativeDirectory) {
  ActiveOptions o;
  o.path_env = "relative/dir::/nonexistent";
  o.aws_tools_dir = "/nonexistent/aws/neuron/bin";  // not this host's, which may have the tool
  std::string looked;
  EXPECT_EQ(FindNccomTest(o, &looked), "");
  EXPECT_EQ(looked, "$PATH and /nonexistent/aws/neuron/bin");
  EXPECT_EQ(ActiveOptions().aws_tools_dir, "/opt/aws/neuron/bin");
  o.path_env = "/bin:/usr/bin";
  o.nccom_test = "/bin/sh";  // given: used as it is
  EXPECT_EQ(FindNccomTest(o, &looked), "/bin/sh");
  o.nccom_test = "/nonexistent/nccom-test";
  EXPECT_EQ(FindNccomTest(o, &looked), "");
  EXPECT_EQ(looked, "/nonexistent/nccom-test");
}

v1::Inventory Cores(int devices, int busy) {
  v1::Inventory inv;
  for (int d = 0; d < devices; ++d) {
    v1::Device* dev = inv.add_devices();
    dev->add_core_ids(static_cast<std::uint32_t>(2 * d));
    dev->add_core_ids(static_cast<std::uint32_t>(2 * d + 1));
  }
  v1::Process* tool = inv.add_processes();  // a monitoring tool: no runtime, holds no core
  tool->set_pid(7);
  tool->add_core_ids(0);
  tool->set_no_datastore(true);
  if (busy > 0) {
    v1::Process* p = inv.add_processes();
    p->set_pid(4242);
    p->set_command("/usr/bin/python3 train.py \x1b[31m");
    for (int c = 0; c < busy; ++c) p->add_core_ids(static_cast<std::uint32_t>(c));
  }
  return inv;
}

TEST(ActiveCheck, BusyCoresAndTooFewCoresAreNotRun) {
  EXPECT_FALSE(ActivePrecheck(Cores(16, 0)).has_value());
  const std::optional<ActiveResult> busy = ActivePrecheck(Cores(16, 4));
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->outcome, ActiveOutcome::kDeviceBusy);
  EXPECT_EQ(busy->reason,
            "device_busy: Neuron devices held by pid 4242 (python3); the active check needs every "
            "NeuronCore free");
  // A runtime that holds a device but reports no core, and a pod the kubelet gave devices to
  // before its runtime started, are holders too.
  v1::Inventory opened = Cores(16, 0);
  v1::Process* runtime = opened.add_processes();
  runtime->set_pid(99);
  runtime->add_device_indices(3);
  v1::PodAllocation* pod = opened.add_allocations();
  pod->set_namespace_("ml");
  pod->set_pod("train-0\x1b]0;x\x07");
  pod->add_device_indices(4);
  const std::optional<ActiveResult> held = ActivePrecheck(opened);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->outcome, ActiveOutcome::kDeviceBusy);
  EXPECT_EQ(held->reason,
            "device_busy: Neuron devices held by pid 99, pod ml/train-0; the active check needs "
            "every NeuronCore free");
  v1::Inventory one;
  one.add_devices()->add_core_ids(0);
  const std::optional<ActiveResult> single = ActivePrecheck(one);
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(single->outcome, ActiveOutcome::kUnknown);
  EXPECT_EQ(single->reason,
            "active check not run: a collective needs 2 NeuronCores, this host has 1");
}

neurondev::ChildRun Ran(std::string out, int status = 0) {
  neurondev::ChildRun run;
  run.started = true;
  run.exit_status = status;
  run.out = std::move(out);
  if (status != 0) run.error = "nccom-test exited with status " + std::to_string(status);
  return run;
}

TEST(ActiveCheck, JudgesEachKindOfRun) {
  const ActiveOptions o;
  const std::string avg = "Avg bus bandwidth:      40.6901GB/s\n";
  const ActiveResult pass = JudgeRun(Ran(avg), 32, "trn1.32xlarge", o);
  EXPECT_EQ(pass.outcome, ActiveOutcome::kPassed);
  EXPECT_EQ(pass.reason,
            "all-reduce over 32 NeuronCores 40.69 GB/s bus bandwidth, at least 19.20 (5% of "
            "trn1.32xlarge's NeuronLink 384 GB/s)");
  EXPECT_DOUBLE_EQ(*pass.floor, 19.2);
  const ActiveResult slow = JudgeRun(Ran("Avg bus bandwidth: 3.5GB/s\n"), 32, "trn1.32xlarge", o);
  EXPECT_EQ(slow.outcome, ActiveOutcome::kFailed);
  EXPECT_EQ(slow.reason,
            "all-reduce over 32 NeuronCores 3.50 GB/s bus bandwidth, below 19.20 (5% of "
            "trn1.32xlarge's NeuronLink 384 GB/s)");
  ActiveOptions strict;
  strict.min_busbw = 50;
  EXPECT_EQ(JudgeRun(Ran(avg), 32, "trn1.32xlarge", strict).reason,
            "all-reduce over 32 NeuronCores 40.69 GB/s bus bandwidth, below --min-busbw 50.00");
  // No reference for the type: the collective completing is all it can say.
  const ActiveResult single = JudgeRun(Ran(avg), 2, "trn1.2xlarge", o);
  EXPECT_EQ(single.outcome, ActiveOutcome::kPassed);
  EXPECT_EQ(single.reason,
            "all-reduce over 2 NeuronCores 40.69 GB/s bus bandwidth (no reference for "
            "trn1.2xlarge: give --min-busbw to judge it)");

  neurondev::ChildRun failed = Ran("", 1);
  failed.last_stderr_line = "Neuron DKMS Driver is not running!";
  EXPECT_EQ(JudgeRun(failed, 32, "trn1.32xlarge", o).reason,
            "all-reduce over 32 NeuronCores failed: nccom-test exited with status 1: Neuron DKMS "
            "Driver is not running!");
  const ActiveResult bench =
      JudgeRun(Ran("    33554432    Failure running neuron-bench - log file /tmp/x.log\n"
                   "1 errors found - test failed\n"),
               32, "trn1.32xlarge", o);  // even when it exits 0
  EXPECT_EQ(bench.outcome, ActiveOutcome::kFailed);
  EXPECT_EQ(bench.reason,
            "all-reduce over 32 NeuronCores failed: 33554432    Failure running neuron-bench - "
            "log file /tmp/x.log");
  neurondev::ChildRun hung;
  hung.started = true;
  hung.timed_out = true;
  hung.error = "nccom-test did not finish within 2m";
  EXPECT_EQ(JudgeRun(hung, 32, "trn1.32xlarge", o).outcome, ActiveOutcome::kFailed);
  neurondev::ChildRun missing;
  missing.error = "cannot run /opt/nccom-test: Permission denied";
  const ActiveResult not_run = JudgeRun(missing, 32, "trn1.32xlarge", o);
  EXPECT_EQ(not_run.outcome, ActiveOutcome::kUnknown);
  EXPECT_EQ(not_run.reason,
            "active check not run: nccom-test cannot run /opt/nccom-test: Permission denied");
  EXPECT_EQ(JudgeRun(Ran("nothing useful\n"), 32, "trn1.32xlarge", o).outcome,
            ActiveOutcome::kUnknown);
  // Stopped from outside, or an end not known: nothing learnt about the devices.
  neurondev::ChildRun stopped;
  stopped.started = true;
  stopped.interrupted = 15;
  stopped.error = "nccom-test stopped: this process received signal 15";
  EXPECT_EQ(JudgeRun(stopped, 32, "trn1.32xlarge", o).outcome, ActiveOutcome::kUnknown);
  neurondev::ChildRun lost;
  lost.started = true;
  lost.error = "nccom-test exited (exit status lost)";
  EXPECT_EQ(JudgeRun(lost, 32, "trn1.32xlarge", o).reason,
            "all-reduce over 32 NeuronCores not completed: nccom-test exited (exit status lost)");
  neurondev::ChildRun killed = Ran("", 0);
  killed.exit_status.reset();
  killed.signal = 9;
  killed.error = "nccom-test killed by signal 9 (SIGKILL)";
  EXPECT_EQ(JudgeRun(killed, 32, "trn1.32xlarge", o).outcome, ActiveOutcome::kFailed);
}

// 16 devices of 2 cores, all ok, on a trn1.32xlarge: the passive check is healthy.
CheckResult Healthy() {
  CheckInput in;
  in.source = "neuron-monitord (unix:/x.sock)";
  in.inventory = Cores(16, 0);
  in.inventory->mutable_instance_info()->set_instance_type("trn1.32xlarge");
  for (int d = 0; d < 16; ++d) {
    in.inventory->mutable_devices(d)->set_index(static_cast<std::uint32_t>(d));
  }
  v1::Report r;
  r.set_wall_time_unix_ns(1796000000000000000);
  for (int d = 0; d < 16; ++d) {
    v1::DeviceHealth* h = r.mutable_system()->mutable_device_health()->add_devices();
    h->set_neuron_device_index(static_cast<std::uint32_t>(d));
    h->set_state(v1::HEALTH_STATE_OK);
  }
  in.report = r;
  in.now = FromUnixNanos(1796000000000000000);
  return EvaluateCheck(in, {});
}

TEST(ActiveCheck, ItsResultJoinsThePassiveVerdict) {
  ASSERT_EQ(Healthy().outcome, CheckOutcome::kHealthy);
  const ActiveOptions o;
  CheckResult passed = Healthy();
  AddActive(&passed, JudgeRun(Ran("Avg bus bandwidth: 40.69GB/s\n"), 32, "trn1.32xlarge", o));
  EXPECT_EQ(passed.outcome, CheckOutcome::kHealthy);
  EXPECT_EQ(CheckLine(passed),
            "healthy: 16 devices ok, 32 free NeuronCores; all-reduce over 32 NeuronCores 40.69 "
            "GB/s bus bandwidth, at least 19.20 (5% of trn1.32xlarge's NeuronLink 384 GB/s) "
            "(neuron-monitord (unix:/x.sock))");
  CheckResult failed = Healthy();
  AddActive(&failed, JudgeRun(Ran("Avg bus bandwidth: 1GB/s\n"), 32, "trn1.32xlarge", o));
  EXPECT_EQ(failed.outcome, CheckOutcome::kUnhealthy);
  EXPECT_EQ(CheckLine(failed).rfind("unhealthy: all-reduce over 32 NeuronCores 1.00 GB/s", 0), 0u);
  EXPECT_NE(CheckJson(failed).find(
                "\"active\":{\"result\":\"failed\",\"reason\":\"all-reduce over 32 NeuronCores "
                "1.00 GB/s bus bandwidth, below 19.20 (5% of trn1.32xlarge's NeuronLink 384 "
                "GB/s)\",\"command\":\"\",\"ranks\":32,\"bus_bandwidth\":1,\"reference\":384,"
                "\"floor\":19.2,\"seconds\":0}}"),
            std::string::npos)
      << CheckJson(failed);
  CheckResult busy = Healthy();
  AddActive(&busy, *ActivePrecheck(Cores(16, 4)));
  EXPECT_EQ(busy.outcome, CheckOutcome::kUnknown);
  EXPECT_EQ(CheckLine(busy).rfind("unknown: device_busy: Neuron devices held by pid 4242", 0), 0u);
}

}  // namespace
}  // namespace neuronmon::exporter
