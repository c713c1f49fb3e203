#include "exporter/neuron_ls_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "proto/names/names.h"
#include "tests/golden_file.h"

namespace neuronmon::exporter {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

// tests/CMakeLists.txt's NEURONMON_TESTDATA_DIR names the calling folder's testdata
// (tests/exporter/testdata), so the shared tests/testdata is found from the source root.
std::string GoldenPath(std::string_view name) {
  return std::string(NEURONMON_SOURCE_DIR) + "/tests/testdata/neuron_ls/" + std::string(name);
}

void ExpectMatchesGolden(const std::string& actual, const std::string& name) {
  test_util::ExpectMatchesGolden(actual, GoldenPath(name));
}

struct DeviceSpec {
  std::string bdf;
  std::string cpu_affinity;
  int numa_node;
  std::vector<std::uint32_t> connected_to;
};

v1::Inventory MakeInventory(std::string_view type, std::string_view id, std::string_view chip,
                            std::uint32_t cores, std::uint64_t hbm,
                            const std::vector<DeviceSpec>& specs) {
  v1::Inventory inventory;
  inventory.mutable_instance_info()->set_instance_type(std::string(type));
  inventory.mutable_instance_info()->set_instance_id(std::string(id));
  v1::HardwareInfo& hardware = *inventory.mutable_hardware_info();
  hardware.set_neuron_device_type(std::string(chip));
  hardware.set_neuron_device_count(static_cast<std::uint32_t>(specs.size()));
  hardware.set_neuron_device_memory_size(hbm);
  hardware.set_neuroncore_per_device_count(cores);
  hardware.set_logical_neuroncore_config(chip == "trainium2" ? 2 : 1);
  for (std::uint32_t i = 0; i < specs.size(); ++i) {
    v1::Device& device = *inventory.add_devices();
    device.set_index(i);
    device.set_core_count(cores);
    for (std::uint32_t c = 0; c < cores; ++c) device.add_core_ids(i * cores + c);
    device.set_hbm_bytes(hbm);
    device.set_pci_bdf(specs[i].bdf);
    device.set_cpu_affinity(specs[i].cpu_affinity);
    device.set_numa_node(specs[i].numa_node);
    for (std::uint32_t peer : specs[i].connected_to) device.add_connected_to(peer);
  }
  return inventory;
}

void AddProcess(v1::Inventory& inventory, std::uint32_t pid, std::string_view command,
                std::string_view runtime_version, const std::vector<std::uint32_t>& devices) {
  v1::Process& process = *inventory.add_processes();
  process.set_pid(pid);
  process.set_command(std::string(command));
  process.set_runtime_version(std::string(runtime_version));
  for (std::uint32_t device : devices) process.add_device_indices(device);
}

std::vector<std::uint32_t> AllDevices(std::uint32_t count) {
  std::vector<std::uint32_t> devices(count);
  for (std::uint32_t i = 0; i < count; ++i) devices[i] = i;
  return devices;
}

v1::Inventory Trn1_2xlarge() {
  v1::Inventory inventory = MakeInventory("trn1.2xlarge", "i-0bea223b1afb7e159", "trainium", 2,
                                          32 * kGiB, {{"0000:00:1e.0", "0-7", -1, {}}});
  AddProcess(inventory, 16237, "python equinox_mnist_verification.py", "2.27.23", {0});
  AddProcess(inventory, 1789, "neuron-monitor -c /etc/neuron-monitor.json", "", {0});
  return inventory;
}

// The 4x4 torus: device i links [up, left, down, right] with wrap-around.
std::vector<std::uint32_t> TorusLinks(std::uint32_t i) {
  const std::uint32_t row = i / 4;
  const std::uint32_t col = i % 4;
  return {(i + 12) % 16, row * 4 + (col + 3) % 4, (i + 4) % 16, row * 4 + (col + 1) % 4};
}

v1::Inventory Trn2_48xlarge() {
  const char* buses[] = {"cc", "b5", "b6", "cb", "6f", "58", "59", "6e",
                         "9b", "84", "85", "9a", "f8", "e1", "e2", "f7"};
  std::vector<DeviceSpec> specs;
  for (std::uint32_t i = 0; i < 16; ++i) {
    const bool numa1 = i < 4 || i >= 12;
    specs.push_back({"0000:" + std::string(buses[i]) + ":00.0",
                     numa1 ? "48-95,144-191" : "0-47,96-143", numa1 ? 1 : 0, TorusLinks(i)});
  }
  v1::Inventory inventory =
      MakeInventory("trn2.48xlarge", "i-aabbccdd123456789", "trainium2", 4, 96 * kGiB, specs);
  AddProcess(inventory, 268911,
             "neuron-bench exec --run-as-cc-neff --warmup none --fixed-instance-count 64 "
             "--enable-only-latency /tmp/neff/model.neff",
             "2.0.0", AllDevices(16));
  AddProcess(inventory, 269192, "neuron-ls --show-all-procs", "", AllDevices(16));
  return inventory;
}

// BDFs are made up: no inf2.48xlarge capture shows them.
v1::Inventory Inf2_48xlarge() {
  std::vector<DeviceSpec> specs;
  for (std::uint32_t i = 0; i < 12; ++i) {
    const bool numa1 = i >= 6;
    specs.push_back({"0000:" + std::string(numa1 ? "90" : "10") + ":1" + "abcdef"[i % 6] + ".0",
                     numa1 ? "48-95,144-191" : "0-47,96-143",
                     numa1 ? 1 : 0,
                     {(i + 11) % 12, (i + 1) % 12}});
  }
  v1::Inventory inventory =
      MakeInventory("inf2.48xlarge", "i-0123456789abcdef0", "inferentia2", 2, 32 * kGiB, specs);
  AddProcess(inventory, 4242,
             "python3 inference.py --model meta-llama/Llama-3.1-8B --tp-degree 4 --batch-size 1 "
             "--sequence-length 4096",
             "2.23.112.0", {0, 1});
  AddProcess(inventory, 5151, "torchrun --nproc-per-node 2 finetune.py", "2.23.112.0", {1});
  AddProcess(inventory, 777, "neuron-monitor", "", AllDevices(12));
  return inventory;
}

// Every rendering of one instance: idle and running tables, --wide, --show-all-procs,
// --topology and --json-output.
void ExpectAllViewsMatchGoldens(const v1::Inventory& running, const std::string& instance) {
  v1::Inventory idle = running;
  idle.clear_processes();
  ExpectMatchesGolden(RenderTable(idle, {}), instance + "_table.golden");
  ExpectMatchesGolden(RenderTable(running, {}), instance + "_procs.golden");
  ExpectMatchesGolden(RenderTable(running, {.wide = true}), instance + "_wide.golden");
  ExpectMatchesGolden(RenderTable(running, {.show_all_procs = true}),
                      instance + "_all_procs.golden");
  ExpectMatchesGolden(RenderTopology(running), instance + "_topology.golden");
  ExpectMatchesGolden(RenderJson(running, {}), instance + "_json.golden");
}

TEST(NeuronLsGolden, Trn1_2xlarge) { ExpectAllViewsMatchGoldens(Trn1_2xlarge(), "trn1.2xlarge"); }

TEST(NeuronLsGolden, Trn2_48xlarge) {
  ExpectAllViewsMatchGoldens(Trn2_48xlarge(), "trn2.48xlarge");
}

TEST(NeuronLsGolden, Inf2_48xlarge) {
  ExpectAllViewsMatchGoldens(Inf2_48xlarge(), "inf2.48xlarge");
}

TEST(NeuronLsGolden, UltraServerDrawsOneTorusPerNode) {
  v1::Inventory ultra = Trn2_48xlarge();
  ultra.clear_processes();
  for (std::uint32_t i = 16; i < 64; ++i) {
    v1::Device& device = *ultra.add_devices();
    device = ultra.devices(static_cast<int>(i % 16));
    device.set_index(i);
    for (std::uint32_t& peer : *device.mutable_connected_to()) peer += i - i % 16;
  }
  ExpectMatchesGolden(RenderTopology(ultra), "trn2u.48xlarge-x4_topology.golden");
}

// Exactly what neuron-ls prints on a trn1.2xlarge (AWS DLAMI guide; the same capture appears
// in several user reports).
TEST(RenderTable, Trn1DeviceTableMatchesRealOutput) {
  v1::Inventory idle = Trn1_2xlarge();
  idle.clear_processes();
  EXPECT_EQ(RenderTable(idle, {}),
            "instance-type: trn1.2xlarge\n"
            "instance-id: i-0bea223b1afb7e159\n"
            "+--------+--------+----------+--------+--------------+----------+------+\n"
            "| NEURON | NEURON |  NEURON  | NEURON |     PCI      |   CPU    | NUMA |\n"
            "| DEVICE | CORES  | CORE IDS | MEMORY |     BDF      | AFFINITY | NODE |\n"
            "+--------+--------+----------+--------+--------------+----------+------+\n"
            "| 0      | 2      | 0-1      | 32 GB  | 0000:00:1e.0 | 0-7      | -1   |\n"
            "+--------+--------+----------+--------+--------------+----------+------+\n");
}

// As captured on a trn1.2xlarge while a training script ran (runtime 2.27.23).
TEST(RenderTable, RunningProcessAddsProcessColumnsToDeviceTable) {
  v1::Inventory inventory = Trn1_2xlarge();
  inventory.mutable_instance_info()->set_instance_id("i-09e7a3b60c6a6eac8");
  EXPECT_EQ(RenderTable(inventory, {}), R"(instance-type: trn1.2xlarge
instance-id: i-09e7a3b60c6a6eac8
+--------+--------+----------+--------+--------------+-------+----------+------+--------------------------------------+---------+
| NEURON | NEURON |  NEURON  | NEURON |     PCI      |  PID  |   CPU    | NUMA |               COMMAND                | RUNTIME |
| DEVICE | CORES  | CORE IDS | MEMORY |     BDF      |       | AFFINITY | NODE |                                      | VERSION |
+--------+--------+----------+--------+--------------+-------+----------+------+--------------------------------------+---------+
| 0      | 2      | 0-1      | 32 GB  | 0000:00:1e.0 | 16237 | 0-7      | -1   | python equinox_mnist_verification.py | 2.27.23 |
+--------+--------+----------+--------+--------------+-------+----------+------+--------------------------------------+---------+
)");
}

// --who: USER and JOB after the AWS columns; JOB is the Slurm job (with its array task), else
// namespace/pod, else the container; unknown is NA, and the default table does not change.
TEST(RenderTable, WhoAddsUserAndJobColumns) {
  v1::Inventory inventory = Trn1_2xlarge();
  inventory.mutable_instance_info()->set_instance_id("i-09e7a3b60c6a6eac8");
  const std::string aws = RenderTable(inventory, {});
  v1::Attribution* a = inventory.mutable_processes(0)->mutable_attribution();
  a->set_user("alice");
  a->set_slurm_job_id("4242");
  a->set_slurm_array_job_id("4242");
  a->set_slurm_array_task_id("7");
  EXPECT_EQ(RenderTable(inventory, {}), aws);
  const std::string who = RenderTable(inventory, {.who = true});
  EXPECT_NE(who.find("|  PID  |   CPU    | NUMA |               COMMAND                | RUNTIME | "
                     "USER  |  JOB   |\n"),
            std::string::npos)
      << who;
  EXPECT_NE(who.find("| python equinox_mnist_verification.py | 2.27.23 | alice | 4242_7 |\n"),
            std::string::npos)
      << who;
  a->Clear();
  a->set_uid(1000);
  a->set_pod("vllm-0\x1b[2J");
  a->set_namespace_("inference");
  const std::string pod = RenderTable(inventory, {.wide = true, .who = true});
  EXPECT_NE(pod.find("| 1000 | inference/vllm-0 |"), std::string::npos) << pod;
  EXPECT_EQ(pod.find('\x1b'), std::string::npos);
  a->Clear();
  EXPECT_NE(RenderTable(inventory, {.who = true}).find("| 2.27.23 | NA   | NA  |"),
            std::string::npos)
      << RenderTable(inventory, {.who = true});
  // The JSON: an attribution object with what is known, only with --who.
  a->set_user("alice");
  a->set_container_id(std::string(64, 'a'));
  EXPECT_EQ(RenderJson(inventory, {}).find("attribution"), std::string::npos);
  const std::string json = RenderJson(inventory, {.who = true});
  EXPECT_NE(json.find("\"attribution\": {\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"user\": \"alice\""), std::string::npos) << json;
  EXPECT_EQ(JobOf(*a), std::string(12, 'a'));
}

TEST(RenderTable, Trn2FirstRowAndHeaderLines) {
  v1::Inventory idle = Trn2_48xlarge();
  idle.clear_processes();
  const std::string table = RenderTable(idle, {});
  EXPECT_EQ(table.substr(0, table.find('+')),
            "instance-type: trn2.48xlarge\n"
            "instance-id: i-aabbccdd123456789\n"
            "logical-neuroncore-config: 2\n");
  EXPECT_NE(table.find("| 0      | 4      | 0-3      | 96 GB  | 12, 3, 4, 1   | 0000:cc:00.0 | "
                       "48-95,144-191 | 1    |\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| 15     | 4      | 60-63    | 96 GB  | 11, 14, 3, 12 | 0000:f7:00.0 | "
                       "48-95,144-191 | 1    |\n"),
            std::string::npos)
      << table;
}

TEST(RenderTable, NonRuntimeProcessesOnlyWithShowAllProcs) {
  v1::Inventory inventory = Trn1_2xlarge();
  inventory.mutable_processes()->DeleteSubrange(0, 1);  // keep only neuron-monitor
  EXPECT_EQ(RenderTable(inventory, {}).find("PID"), std::string::npos);
  const std::string all = RenderTable(inventory, {.show_all_procs = true});
  EXPECT_NE(all.find("| 0      | 2      | 32 GB  | 00:1e.0 | 1789 | "
                     "neuron-monitor -c /etc/neuron-monitor... | NA      |\n"),
            std::string::npos)
      << all;
}

// On a real host whose runtime datastores were read, a holder without one is not a runtime,
// whatever its name: listed only with --show-all-procs. One with a runtime version always is.
TEST(NeuronLsProcesses, AHolderWithoutADatastoreIsNotAnApplication) {
  v1::Inventory inventory = Inf2_48xlarge();
  AddProcess(inventory, 9090, "/usr/local/bin/my-exporter --neuron", "", {1});
  const std::string before = RenderTable(inventory, {});
  EXPECT_NE(before.find("my-exporter"), std::string::npos);
  inventory.mutable_processes(inventory.processes_size() - 1)->set_no_datastore(true);
  EXPECT_EQ(RenderTable(inventory, {}).find("my-exporter"), std::string::npos);
  EXPECT_NE(RenderTable(inventory, {.show_all_procs = true}).find("my-exporter"),
            std::string::npos);
  inventory.mutable_processes(0)->set_no_datastore(true);  // contradicted by its version
  EXPECT_NE(RenderTable(inventory, {}).find("4242"), std::string::npos);
}

TEST(IsMonitoringTool, TheToolsByTheirProgramsName) {
  for (const char* tool : {"neuron-monitor", "neuron-monitor -c /etc/neuron-monitor.json",
                           "neuron-ls --show-all-procs", "/opt/aws/neuron/bin/neuron-top",
                           "/usr/sbin/neuron-monitord --config /etc/x.json"}) {
    EXPECT_TRUE(IsMonitoringTool(tool)) << tool;
  }
  for (const char* application :
       {"python3 neuron-monitor-prometheus.py", "torchrun --nproc-per-node 16 train.py",
        "neuron-lsx", "neuron-bench exec", "/opt/neuron-top/python3 serve.py", "", " neuron-ls",
        "/usr/bin/python3 /opt/aws/neuron/bin/neuron-ls"}) {
    EXPECT_FALSE(IsMonitoringTool(application)) << application;
  }
}

// On a real host without AWS's neuron-monitor no process has a runtime version: an application
// is still listed (RUNTIME VERSION "NA"); the monitoring tools only with --show-all-procs.
TEST(RenderTable, ApplicationsWithoutARuntimeVersionAreListed) {
  v1::Inventory inventory = Trn1_2xlarge();
  inventory.mutable_processes(0)->set_runtime_version("");
  AddProcess(inventory, 1801, "/opt/aws/neuron/bin/neuron-top", "", {0});
  AddProcess(inventory, 1802, "/usr/sbin/neuron-monitord", "", {0});
  const std::string table = RenderTable(inventory, {});
  EXPECT_NE(table.find("| 0      | 2      | 0-1      | 32 GB  | 0000:00:1e.0 | 16237 | 0-7      | "
                       "-1   | python equinox_mnist_verification.py | NA      |\n"),
            std::string::npos)
      << table;
  for (const char* tool : {"1789", "1801", "1802"}) {
    EXPECT_EQ(table.find(tool), std::string::npos) << tool << "\n" << table;
  }
  const std::string json = RenderJson(inventory, {});
  EXPECT_NE(json.find("\"pid\": 16237"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"pid\": 1789"), std::string::npos) << json;
  const std::string all = RenderTable(inventory, {.show_all_procs = true});
  for (const char* pid : {"16237", "1789", "1801", "1802"}) {
    EXPECT_NE(all.find("| " + std::string(pid) + " "), std::string::npos) << pid << "\n" << all;
  }
}

TEST(RenderTable, WideWithoutProcessesShowsNaRow) {
  v1::Inventory idle = Trn1_2xlarge();
  idle.clear_processes();
  const std::string wide = RenderTable(idle, {.wide = true});
  EXPECT_NE(wide.find("| 0      | 2      | 32 GB  | 00:1e.0 | NA  | NA      | NA      |\n"),
            std::string::npos)
      << wide;
}

TEST(RenderTable, OddInventoryStillRendersOneLinePerRow) {
  v1::Inventory inventory = MakeInventory("odd", "i-?", "", 0, 0, {{"", "", -1, {}}});
  AddProcess(inventory, 1, "python\ttrain.py\n--resume", "2.0", {0});
  AddProcess(inventory, 2, "orphan", "2.0", {7});  // a device the inventory does not have
  EXPECT_EQ(RenderTable(inventory, {.wide = true}), R"(instance-type: odd
instance-id: i-?
+--------+--------+--------+-----+-----+--------------------------+---------+
| NEURON | NEURON | NEURON | PCI | PID |         COMMAND          | RUNTIME |
| DEVICE | CORES  | MEMORY | BDF |     |                          | VERSION |
+--------+--------+--------+-----+-----+--------------------------+---------+
| 0      | 0      | 0 GB   |     | 1   | python train.py --resume | 2.0     |
+--------+--------+--------+-----+-----+--------------------------+---------+
)");
  EXPECT_NE(RenderJson(inventory, {}).find(R"("command": "python\ttrain.py\n--resume")"),
            std::string::npos);
}

// Strings from the daemon (on a real host: other users' command lines) reach the terminal without
// their escape sequences and control characters; the JSON keeps them, escaped by its writer.
TEST(RenderTable, DaemonTextReachesTheTerminalWithoutEscapes) {
  const std::string evil =
      "ok\x1b]0;pwned\x07\x1b[2J\r\xc2\x9b"
      "31m\xe2\x80\xae"
      "end";
  v1::Inventory inventory =
      MakeInventory(evil, evil, "trainium", 2, 32 * kGiB, {{evil, evil, -1, {}}});
  AddProcess(inventory, 42, evil, evil, {0});
  for (const LsOptions options : {LsOptions{}, LsOptions{.wide = true}}) {
    const std::string table = RenderTable(inventory, options);
    EXPECT_NE(table.find("instance-type: ok"), std::string::npos) << table;
    for (const std::string_view bad : {"\x1b", "\x07", "\r", "\xc2\x9b", "\xe2\x80\xae"}) {
      EXPECT_EQ(table.find(bad), std::string::npos) << table;
    }
  }
  EXPECT_NE(RenderJson(inventory, {}).find(R"("command": "ok\u001b]0;pwned\u0007\u001b[2J\r)"),
            std::string::npos)
      << RenderJson(inventory, {});
}

TEST(RenderTopology, ChainAsInf1) {
  v1::Inventory inventory = MakeInventory("inf1.6xlarge", "i-1", "inferentia", 4, 8 * kGiB,
                                          {{"0000:00:1c.0", "0-23", -1, {1}},
                                           {"0000:00:1d.0", "0-23", -1, {2, 0}},
                                           {"0000:00:1e.0", "0-23", -1, {3, 1}},
                                           {"0000:00:1f.0", "0-23", -1, {2}}});
  EXPECT_EQ(RenderTopology(inventory),
            "Neuron Device Topology\n"
            "\n"
            "  [ 0 ]◄––►[ 1 ]◄––►[ 2 ]◄––►[ 3 ]\n");
}

TEST(RenderTopology, SingleDeviceIsOneBox) {
  EXPECT_EQ(RenderTopology(Trn1_2xlarge()), "Neuron Device Topology\n\n  [ 0 ]\n");
}

TEST(RenderTopology, NoDevicesIsEmpty) { EXPECT_EQ(RenderTopology(v1::Inventory()), ""); }

TEST(RenderJson, Trn1MatchesRealOutput) {
  v1::Inventory idle = Trn1_2xlarge();
  idle.clear_processes();
  // Verbatim `neuron-ls --json-output` from a trn1.2xlarge (aws-neuronx-tools 2.28.23).
  EXPECT_EQ(RenderJson(idle, {}),
            "[\n"
            "    {\n"
            "        \"neuron_device\": 0,\n"
            "        \"bdf\": \"0000:00:1e.0\",\n"
            "        \"cpu_affinity\": \"0-7\",\n"
            "        \"numa_node\": \"-1\",\n"
            "        \"connected_to\": null,\n"
            "        \"nc_count\": 2,\n"
            "        \"memory_size\": 34359738368,\n"
            "        \"neuroncore_ids\": [\n"
            "            0,\n"
            "            1\n"
            "        ],\n"
            "        \"neuron_processes\": []\n"
            "    }\n"
            "]");
}

TEST(RenderJson, NoDevicesIsEmptyArray) { EXPECT_EQ(RenderJson(v1::Inventory(), {}), "[]"); }

TEST(FormatCoreIds, RangeWhenConsecutiveElseList) {
  const auto ids = [](std::vector<std::uint32_t> v) { return FormatCoreIds(v); };
  EXPECT_EQ(ids({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(ids({60, 61, 62, 63}), "60-63");
  EXPECT_EQ(ids({0, 1}), "0-1");
  EXPECT_EQ(ids({5}), "5");
  EXPECT_EQ(ids({}), "");
  EXPECT_EQ(ids({0, 2, 5}), "0,2,5");
  EXPECT_EQ(ids({0, 1, 3}), "0,1,3");
  EXPECT_EQ(ids({3, 2, 1}), "3,2,1");
}

TEST(FormatMemorySize, WholeGibibytesLabelledGb) {
  EXPECT_EQ(FormatMemorySize(103079215104), "96 GB");
  EXPECT_EQ(FormatMemorySize(34359738368), "32 GB");
  EXPECT_EQ(FormatMemorySize(8 * kGiB), "8 GB");
  EXPECT_EQ(FormatMemorySize(kGiB - 1), "0 GB");
}

TEST(FormatConnectedDevices, CommaSpaceSeparated) {
  EXPECT_EQ(FormatConnectedDevices(TorusLinks(0)), "12, 3, 4, 1");
  EXPECT_EQ(FormatConnectedDevices(TorusLinks(5)), "1, 4, 9, 6");
  EXPECT_EQ(FormatConnectedDevices(TorusLinks(15)), "11, 14, 3, 12");
  EXPECT_EQ(FormatConnectedDevices({}), "");
}

TEST(ShortBdf, DropsPciDomain) {
  EXPECT_EQ(ShortBdf("0000:cc:00.0"), "cc:00.0");
  EXPECT_EQ(ShortBdf("00:1e.0"), "00:1e.0");
  EXPECT_EQ(ShortBdf(""), "");
}

TEST(TruncateCommand, CutsWithEllipsisAtTheLimit) {
  const std::string forty(40, 'x');
  EXPECT_EQ(TruncateCommand(forty, kCommandWidth), forty);
  EXPECT_EQ(TruncateCommand(forty + "y", kCommandWidth), std::string(37, 'x') + "...");
  EXPECT_EQ(TruncateCommand("neuron-app01 infer --input-data-directory ~/my_input_data "
                            "--inference-count 5000 --parallel 4",
                            kCommandWidth),
            "neuron-app01 infer --input-data-direc...");
  EXPECT_EQ(TruncateCommand("neuron-app01 infer --input-data-directory ~/my_input_data "
                            "--inference-count 5000 --parallel 4",
                            kWideCommandWidth),
            "neuron-app01 infer --input-data-directory ~/my_input_data --inference-count 5...");
  EXPECT_EQ(TruncateCommand("short", kCommandWidth), "short");
  EXPECT_EQ(TruncateCommand("", kCommandWidth), "");
}

TEST(TruncateCommand, CountsCharactersNotBytes) {
  EXPECT_EQ(TruncateCommand("ééééé", 5), "ééééé");
  EXPECT_EQ(TruncateCommand("éééééé", 5), "éé...");
}

}  // namespace
}  // namespace neuronmon::exporter
