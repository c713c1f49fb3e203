// neuron-ls on a real host: the simulator writes sim:trn2.48xlarge as a driver tree (and /proc
// and DMI), neurondev::Host reads it, and neuron-ls's table and JSON of that inventory equal those
// of the simulator's own — once the facts a driver tree does not give (PCI address, CPU affinity,
// NUMA node, runtime version, region) are blanked on the simulator's side too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exporter/driver_report.h"
#include "exporter/neuron_ls_format.h"
#include "neurondev/host.h"
#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

namespace fs = std::filesystem;

// What a driver tree cannot say, blanked.
v1::Inventory WithoutUnknowableFacts(v1::Inventory inv) {
  v1::InstanceInfo* info = inv.mutable_instance_info();
  const std::string type = info->instance_type(), id = info->instance_id();
  info->Clear();
  info->set_instance_type(type);
  info->set_instance_id(id);
  for (v1::Device& d : *inv.mutable_devices()) {
    d.set_pci_bdf("");
    d.set_cpu_affinity("");
    d.set_numa_node(-1);
  }
  for (v1::Process& p : *inv.mutable_processes()) p.set_runtime_version("");
  return inv;
}

TEST(NeuronLsOnAHost, Trn2TreePrintsWhatTheSimulatorPrints) {
  testing::FakeTree root;  // a temporary directory
  const std::string sys = root.root() + "/sys", proc = root.root() + "/proc";
  fs::create_directories(sys);
  fs::create_directories(proc);
  auto sim = simdev::Instance::Named("sim:trn2.48xlarge", "healthy-training", 1);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const Nanos t = std::chrono::seconds(60);
  const v1::Inventory truth = (*sim)->Inventory(t);
  simdev::DriverTreeWriter writer(sys, proc);
  ASSERT_TRUE(writer.Write(truth, (*sim)->Read(t)).ok());
  root.Write("sys/devices/virtual/dmi/id/sys_vendor", "Amazon EC2\n");
  root.Write("sys/devices/virtual/dmi/id/product_name",
             truth.instance_info().instance_type() + "\n");
  root.Write("sys/devices/virtual/dmi/id/board_asset_tag",
             truth.instance_info().instance_id() + "\n");

  HostOptions options;
  options.sysfs_root = sys;
  options.proc_root = proc;
  options.neuron_monitor = "";
  options.kubernetes = false;  // a test host that is a Kubernetes node must not add its pods
  options.kernel_log = false;  // nor this machine's kernel log its events
  auto host = Host::Open(options, MonoTime(t));
  ASSERT_TRUE(host.ok()) << host.status().message();
  (*host)->Read(MonoTime(t));
  const v1::Inventory read = (*host)->Inventory(MonoTime(t));
  const v1::Inventory want = WithoutUnknowableFacts(truth);
  ASSERT_EQ(read.processes_size(), want.processes_size());
  for (const bool all : {false, true}) {
    const exporter::LsOptions ls{.wide = false, .show_all_procs = all};
    EXPECT_EQ(exporter::RenderTable(read, ls), exporter::RenderTable(want, ls));
    EXPECT_EQ(exporter::RenderJson(read, ls), exporter::RenderJson(want, ls));
  }
  EXPECT_EQ(exporter::RenderTopology(read), exporter::RenderTopology(want));
  // Not vacuous: the host found the instance and every worker process.
  EXPECT_EQ(read.instance_info().instance_type(), "trn2.48xlarge");
  EXPECT_EQ(read.processes_size(), 16);
  EXPECT_NE(exporter::RenderTable(read, {.wide = false, .show_all_procs = true}).find("torchrun"),
            std::string::npos);
  // Without neuron-monitor no runtime version is known: the training processes are listed anyway.
  EXPECT_NE(exporter::RenderTable(read, {}).find("torchrun"), std::string::npos);
}

// neuron-ls --driver on a reorganised (2.31) tree: the version and generation, the moved nodes with
// both paths, the unknown ones; the same as JSON; and no devices is a clear error.
TEST(NeuronLsDriver, ReportsTheLayoutOfTheLocalDriver) {
  EXPECT_EQ(exporter::LayoutGeneration("2.24.7.0"), "2.24-2.27");
  EXPECT_EQ(exporter::LayoutGeneration("2.28.4.0"), "2.28-2.30.1");
  EXPECT_EQ(exporter::LayoutGeneration("2.30.2.0"), "2.30.2");
  EXPECT_EQ(exporter::LayoutGeneration("2.31.7.0"), "2.31+ (reorganised)");
  EXPECT_EQ(exporter::LayoutGeneration("latest"), "unknown");
  testing::FakeTree root;
  const std::string sys = root.root() + "/sys", proc = root.root() + "/proc";
  auto sim = simdev::Instance::Named("sim:trn1.2xlarge", "healthy-training", 3);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  simdev::DriverTreeWriter writer(sys, proc, {.driver_version = "2.31.7.0"});
  const Nanos t = std::chrono::seconds(10);
  ASSERT_TRUE(writer.Write((*sim)->Inventory(t), (*sim)->Read(t)).ok());
  std::ostringstream out, err;
  HostOptions host;
  host.sysfs_root = sys;
  host.dev_root = root.root() + "/dev";
  host.neuron_monitor = "";
  root.Symlink("/dev/null", "dev/neuron0");  // a character device the daemon may read
  EXPECT_EQ(exporter::PrintDriverReport(host, false, out, err), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("driver: 2.31.7.0, layout 2.31+ (reorganised)"), std::string::npos) << text;
  EXPECT_NE(text.find("  moved:   stats/hardware/health_status -> health_status\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  unknown: info/firmware_version\n"), std::string::npos) << text;
  EXPECT_NE(text.find(", 0 missing, 2 unknown"), std::string::npos) << text;
  // Which source serves which signal: the datastores first, the driver's sysfs as the fallback.
  EXPECT_NE(text.find("runtime datastores: the driver (" + root.root() + "/dev/neuron<N>)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  NeuronCore busy time: runtime datastores from the driver (" + root.root() +
                      "/dev/neuron<N>): TIME_IN_USE of each process and core; then driver sysfs: "
                      "nc_time_in_use\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  execution latency: unavailable: only AWS's neuron-monitor gives latency "
                      "(neuron_monitor is \"\")\n"),
            std::string::npos)
      << text;
  std::ostringstream json;
  EXPECT_EQ(exporter::PrintDriverReport(host, true, json, err), 0);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["driver_version"], "2.31.7.0");
  EXPECT_EQ(j["layout_generation"], "2.31+ (reorganised)");
  ASSERT_EQ(j["devices"].size(), 1u);
  EXPECT_EQ(j["devices"][0]["unknown"].size(), 2u);
  EXPECT_FALSE(j["devices"][0]["moved"].empty());
  EXPECT_EQ(j["devices"][0]["moved"][0].count("path"), 1u);
  ASSERT_EQ(j["sources"][2]["signal"], "executions per application");
  EXPECT_EQ(j["sources"][2]["sources"].size(), 2u);
  // Without access to the device nodes: why, and the driver's sysfs serves what it can.
  host.dev_root = root.root() + "/nodev";
  std::ostringstream without;
  EXPECT_EQ(exporter::PrintDriverReport(host, false, without, err), 0);
  EXPECT_NE(without.str().find("runtime datastores: unavailable: " + root.root() +
                               "/nodev/neuron0: No such file or directory"),
            std::string::npos)
      << without.str();
  EXPECT_NE(without.str().find("  NeuronCore busy time: driver sysfs: nc_time_in_use\n"),
            std::string::npos);
  EXPECT_NE(without.str().find(
                "  runtime and framework versions: unavailable: only the runtime's datastore"),
            std::string::npos);
  std::ostringstream none, why;
  host.sysfs_root = root.root() + "/nowhere";
  EXPECT_EQ(exporter::PrintDriverReport(host, false, none, why), 1);
  EXPECT_NE(why.str().find("no Neuron devices under"), std::string::npos);
}

}  // namespace
}  // namespace neuronmon::neurondev
