#include "simdev/driver_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "simdev/instance.h"
#include "simdev/preset.h"
#include "simdev/scenario_library.h"

namespace neuronmon::simdev {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// Where temporary trees go: /dev/shm when it is writable and TEST_TMPDIR does not say otherwise.
// A trn2 tree is some 12,000 small files; sysfs and procfs live in memory too, and on a disk
// (ext4 with discard) writing and removing them takes some 30 times longer.
std::string TempBase() {
  if (std::getenv("TEST_TMPDIR") == nullptr && ::access("/dev/shm", W_OK | X_OK) == 0) {
    return "/dev/shm";
  }
  return ::testing::TempDir();
}

// A temporary directory holding a `sys` and a `proc` root, removed at the end of the test.
class TempRoots {
 public:
  TempRoots() {
    std::string pattern = (fs::path(TempBase()) / "driver-tree-XXXXXX").string();
    root_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
    EXPECT_FALSE(root_.empty());
  }
  ~TempRoots() {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  const std::string& root() const { return root_; }
  std::string sys() const { return root_ + "/sys"; }
  std::string proc() const { return root_ + "/proc"; }
  std::string Device(int n, const std::string& relative = "") const {
    return sys() + "/devices/virtual/neuron_device/neuron" + std::to_string(n) + "/" + relative;
  }

 private:
  std::string root_;
};

// The file's contents, or "<absent>".
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<absent>";
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Line(std::uint64_t v) { return std::to_string(v) + "\n"; }

// Each argument followed by a NUL, as /proc/<pid>/cmdline and environ hold them.
std::string NulTerminated(std::initializer_list<std::string_view> args) {
  std::string out;
  for (std::string_view a : args) (out += a) += '\0';
  return out;
}

std::unique_ptr<Instance> Make(std::string_view scenario, std::string_view device) {
  Result<Scenario> s =
      scenario.front() == '{' ? ParseScenario(scenario, "inline.json") : LoadScenario(scenario);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Result<InstanceSpec> spec = ParseDeviceSpec(device);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  Result<std::unique_ptr<Instance>> i = Instance::Create(*spec, *s, 7);
  EXPECT_TRUE(i.ok()) << i.status().ToString();
  return i.ok() ? std::move(*i) : nullptr;
}

// Reads the instance at `t` and writes the tree; returns the snapshot written.
Snapshot WriteAt(Instance& inst, DriverTreeWriter& writer, int t) {
  const Snapshot s = inst.Read(seconds(t));
  const Status status = writer.Write(inst.Inventory(seconds(t)), s);
  EXPECT_TRUE(status.ok()) << "t=" << t << ": " << status.ToString();
  return s;
}

const RuntimeSample* OnCore(const Snapshot& s, std::uint32_t core) {
  for (const RuntimeSample& r : s.runtimes) {
    if (!r.cores.empty() && r.cores.front() == core) return &r;
  }
  return nullptr;
}

std::string PeCounters(std::uint64_t busy_ns, Nanos device_time) {
  const auto busy = static_cast<std::uint64_t>(std::llround(static_cast<double>(busy_ns) * 1.4));
  const std::uint64_t mm = busy * 3 / 4;
  const auto idle = static_cast<std::uint64_t>(std::llround(
      static_cast<double>(device_time.count() - static_cast<std::int64_t>(busy_ns)) * 1.4));
  std::string out = "xrow_grp,mm_active,wl_active,idle\n";
  for (int r = 0; r < 4; ++r) {
    out += std::to_string(r) + "," + std::to_string(mm) + "," + std::to_string(busy - mm) + "," +
           std::to_string(idle) + "\n";
  }
  return out;
}

// A hand-made snapshot of `inventory`'s instance with no runtime.
Snapshot Blank(const v1::Inventory& inventory) {
  Snapshot s;
  s.devices.resize(static_cast<std::size_t>(inventory.devices_size()));
  for (const v1::Device& d : inventory.devices()) s.cores.resize(s.cores.size() + d.core_count());
  s.wall = WallTime(seconds(1767225600));
  s.device_time = seconds(100);
  return s;
}

// Adds a runtime holding `cores` to both, its memory `host_tensors` / `device_tensors` bytes.
void AddRuntime(v1::Inventory& inventory, Snapshot& s, std::uint32_t pid, std::string tag,
                std::vector<std::uint32_t> cores, std::uint64_t host_tensors,
                std::uint64_t device_tensors) {
  v1::Process* p = inventory.add_processes();
  p->set_pid(pid);
  p->set_tag(tag);
  p->set_command("/usr/bin/python3  serve.py --port 8080");
  RuntimeSample r;
  r.pid = pid;
  r.tag = std::move(tag);
  r.cores = cores;
  auto memory = std::make_shared<RuntimeMemory>();
  memory->host.tensors = host_tensors;
  for (std::uint32_t c : cores) memory->cores.push_back({.core = c, .tensors = device_tensors});
  r.memory = std::move(memory);
  s.runtimes.push_back(std::move(r));
}

v1::Inventory PresetInventory(const std::string& preset) {
  Result<InstanceSpec> spec = FindPreset(preset);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return BuildInventory(*spec, 1);
}

// A trn2.48xlarge (logical NeuronCore config 2, the default) running healthy-training, its tree
// written once at t = 60 s: some 12,000 files, so the tests that only read it share it.
class DriverTreeTrn2 : public ::testing::Test {
 protected:
  struct Shared {
    TempRoots roots;
    Snapshot snapshot;
    v1::Inventory inventory;
  };

  static void SetUpTestSuite() {
    shared_ = std::make_unique<Shared>();
    auto inst = Make("healthy-training", "sim:trn2.48xlarge");
    ASSERT_EQ(inst->spec().lnc, 2);
    DriverTreeWriter writer(shared_->roots.sys(), shared_->roots.proc());
    shared_->snapshot = WriteAt(*inst, writer, 60);
    shared_->inventory = inst->Inventory(seconds(60));
  }
  static void TearDownTestSuite() { shared_.reset(); }

  const TempRoots& roots = shared_->roots;
  const Snapshot& s = shared_->snapshot;
  const v1::Inventory& inv = shared_->inventory;

 private:
  static inline std::unique_ptr<Shared> shared_;
};

TEST_F(DriverTreeTrn2, WritesADeviceAsTheDriverPrintsIt) {
  const v1::Device& d = inv.devices(3);

  EXPECT_EQ(Slurp(roots.sys() + "/module/neuron/version"), "2.30.2.0\n");
  EXPECT_EQ(Slurp(roots.Device(3, "core_count")), "8");
  std::string connected;
  for (std::uint32_t peer : d.connected_to()) {
    connected += (connected.empty() ? "" : ", ") + std::to_string(peer);
  }
  EXPECT_EQ(Slurp(roots.Device(3, "connected_devices")), connected + "\n");
  EXPECT_EQ(Slurp(roots.Device(3, "info/serial_number")), d.serial_number() + "\n");
  EXPECT_EQ(Slurp(roots.Device(3, "info/architecture/arch_type")), "NDv3\n");
  EXPECT_EQ(Slurp(roots.Device(3, "info/architecture/instance_type")), "Trn2\n");
  EXPECT_EQ(Slurp(roots.Device(3, "info/architecture/device_name")), "Trainium2\n");
  const fs::path link = roots.sys() + "/class/neuron_device/neuron3";
  EXPECT_EQ(fs::read_symlink(link).string(), "../../devices/virtual/neuron_device/neuron3");
  EXPECT_EQ(Slurp(link.string() + "/core_count"), "8");

  // Host memory: the one worker on device 3.
  const RuntimeSample* worker = OnCore(s, d.core_ids(0));
  ASSERT_NE(worker, nullptr);
  const HostMemory& host = worker->memory->host;
  ASSERT_GT(host.tensors, 0u);
  const std::string host_mem = "stats/memory_usage/host_mem/";
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "tensors/total")), Line(host.tensors));
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "tensors/present")), Line(host.tensors));
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "tensors/peak")), Line(host.tensors));
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "constants/total")), Line(host.constants));
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "application_memory/total")),
            Line(host.application_memory));
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "dma_buffers/total")), Line(host.dma_buffers));
  EXPECT_EQ(Slurp(roots.Device(3, host_mem + "dma_rings/total")), "0\n");

  EXPECT_EQ(Slurp(roots.Device(3, "stats/hardware/mem_ecc_uncorrected")),
            Line(s.devices[3].ecc.mem_uncorrected));
  EXPECT_EQ(Slurp(roots.Device(3, "stats/hardware/mem_ecc_repairable_uncorrected")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(3, "stats/hardware/health_status/hbm_ecc_err_count")),
            Line(s.devices[3].ecc.mem_uncorrected));
  EXPECT_EQ(Slurp(roots.Device(3, "stats/hardware/health_status/hw_error_event")), "0\n");
  const auto wall = std::chrono::duration_cast<seconds>(s.wall.time_since_epoch()).count();
  const DevicePower& power = s.devices[3].power;
  ASSERT_EQ(power.unavailable, "");
  char line[96];
  std::snprintf(line, sizeof line, "POWER_STATUS_VALID,%lld,%.2f,%.2f,%.2f\n",
                static_cast<long long>(wall), power.min_percent, power.max_percent,
                power.average_percent);
  EXPECT_EQ(Slurp(roots.Device(3, "stats/power/utilization")), line);

  // Executions count on the first physical core of the worker's lowest logical core.
  ASSERT_GT(worker->executions.completed, 0u);
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core0/stats/status/success/total")),
            Line(worker->executions.completed));
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core0/stats/status/timeout/total")),
            Line(worker->executions.timed_out));
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core1/stats/status/success/total")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core2/stats/status/success/total")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core2/stats/status/hw_repairable_hbm_ue_error/total")),
            "0\n");
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core8/core_count")), "<absent>");
}

TEST_F(DriverTreeTrn2, SplitsALogicalCoreOverItsPhysicalCores) {
  const std::uint32_t g = inv.devices(3).core_ids(1);
  const CoreCounters& core = s.cores[g];
  ASSERT_EQ(core.physical_busy_ns.size(), 2u);
  ASSERT_NE(core.physical_busy_ns[0], core.physical_busy_ns[1]);
  // Logical core 1 of device 3 is physical cores 2 and 3.
  for (std::uint32_t j = 0; j < 2; ++j) {
    const std::string dir = "neuron_core" + std::to_string(2 + j) + "/stats/";
    SCOPED_TRACE(dir);
    EXPECT_EQ(Slurp(roots.Device(3, dir + "other_info/nc_time_in_use/total")),
              Line(core.physical_busy_ns[j] / 1000));
    EXPECT_EQ(Slurp(roots.Device(3, dir + "other_info/flop_count/total")),
              Line(static_cast<std::uint64_t>(std::llround(core.flops / 2))));
    EXPECT_EQ(Slurp(roots.Device(3, dir + "other_info/inference_count/total")), "0\n");
    EXPECT_EQ(Slurp(roots.Device(3, dir + "tensor_engine/pe_cntrs")),
              PeCounters(core.physical_busy_ns[j], s.device_time));
  }
  std::uint64_t tensors = 0;
  for (const RuntimeSample& r : s.runtimes) {
    for (const CoreMemory& m : r.memory->cores) tensors += m.core == g ? m.tensors : 0;
  }
  ASSERT_GT(tensors, 0u);
  const std::string mem = "stats/memory_usage/device_mem/tensors/total";
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core2/" + mem)), Line(tensors / 2 + tensors % 2));
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core3/" + mem)), Line(tensors / 2));
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core3/stats/memory_usage/device_mem/collectives/peak")),
            "0\n");
}

TEST(DriverTree, MapsEachPhysicalCoreToALogicalCoreWithLnc1) {
  TempRoots roots;
  auto inst = Make("healthy-training", "sim:trn2.48xlarge:lnc=1");
  DriverTreeWriter writer(roots.sys(), roots.proc());
  const Snapshot s = WriteAt(*inst, writer, 60);
  const v1::Device d = inst->Inventory(seconds(60)).devices(3);
  ASSERT_EQ(d.core_ids_size(), 8);
  EXPECT_EQ(Slurp(roots.Device(3, "core_count")), "8");
  const CoreCounters& core = s.cores[d.core_ids(5)];
  ASSERT_GT(core.busy_ns, 0u);
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core5/stats/other_info/nc_time_in_use/total")),
            Line(core.busy_ns / 1000));
  EXPECT_EQ(Slurp(roots.Device(3, "neuron_core5/stats/other_info/flop_count/total")),
            Line(static_cast<std::uint64_t>(std::llround(core.flops))));
}

TEST(DriverTree, NamesTheArchitectureOfEachDeviceType) {
  struct Case {
    const char* preset;
    const char* arch;
    const char* instance;
    const char* device;
  };
  for (const Case& c : {Case{"inf2.48xlarge", "NDv3\n", "Inf2\n", "Inferentia2\n"},
                        Case{"trn1.32xlarge", "NDv2\n", "Trn1\n", "Trainium1\n"},
                        Case{"trn1.2xlarge", "NDv2\n", "Trn1\n", "Trainium1\n"}}) {
    SCOPED_TRACE(c.preset);
    TempRoots roots;
    const v1::Inventory inv = PresetInventory(c.preset);
    DriverTreeWriter writer(roots.sys(), roots.proc());
    ASSERT_TRUE(writer.Write(inv, Blank(inv)).ok());
    const int last = inv.devices_size() - 1;
    EXPECT_EQ(Slurp(roots.Device(last, "info/architecture/arch_type")), c.arch);
    EXPECT_EQ(Slurp(roots.Device(last, "info/architecture/instance_type")), c.instance);
    EXPECT_EQ(Slurp(roots.Device(last, "info/architecture/device_name")), c.device);
    EXPECT_EQ(Slurp(roots.Device(last, "core_count")), "2");
    EXPECT_NE(Slurp(roots.Device(last, "neuron_core1/stats/tensor_engine/pe_cntrs")), "<absent>");
    EXPECT_EQ(Slurp(roots.Device(last, "neuron_core2/stats/tensor_engine/pe_cntrs")), "<absent>");
  }
}

// Runtime "b" serves on device 2 and exits at 30 s; "a" trains on devices 0-1 throughout.
constexpr std::string_view kExitScenario = R"({
  "name": "exit",
  "runtimes": [
    {"name": "a", "tag": "a{rank}", "devices": "0-1", "load": "1s",
     "training": {"tokens_per_step": 65536, "warmup": {"steps": 0}}},
    {"name": "b", "tag": "b", "devices": [2], "load": "1s",
     "inference": {"requests_per_second": 50}}
  ],
  "faults": [
    {"type": "runtime_exit", "runtime": "b", "at": "30s"},
    {"type": "timeouts", "runtime": "b", "start": "5s", "per_second": 1}
  ]
})";

TEST(DriverTree, KeepsTheCountsOfARuntimeThatExited) {
  TempRoots roots;
  auto inst = Make(kExitScenario, "sim:trn1.32xlarge");
  DriverTreeWriter writer(roots.sys(), roots.proc());
  const std::string status = "neuron_core0/stats/status/";
  const Snapshot s29 = WriteAt(*inst, writer, 29);
  const RuntimeSample* b = OnCore(s29, inst->Inventory(seconds(29)).devices(2).core_ids(0));
  ASSERT_NE(b, nullptr);
  ASSERT_GT(b->executions.completed, 0u);
  ASSERT_GT(b->executions.timed_out, 0u);
  EXPECT_EQ(Slurp(roots.Device(2, status + "success/total")), Line(b->executions.completed));
  EXPECT_EQ(Slurp(roots.Device(2, status + "timeout/total")), Line(b->executions.timed_out));

  const Snapshot s40 = WriteAt(*inst, writer, 40);
  ASSERT_EQ(s40.runtimes.size(), s29.runtimes.size() - 1);
  EXPECT_EQ(Slurp(roots.Device(2, status + "success/total")), Line(b->executions.completed));
  EXPECT_EQ(Slurp(roots.Device(2, status + "timeout/total")), Line(b->executions.timed_out));
  // Its memory is freed: current usage 0, the last change the whole of it, the peak kept.
  const std::string tensors = "stats/memory_usage/host_mem/tensors/";
  EXPECT_EQ(Slurp(roots.Device(2, tensors + "total")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(2, tensors + "present")), Line(b->memory->host.tensors));
  EXPECT_EQ(Slurp(roots.Device(2, tensors + "peak")), Line(b->memory->host.tensors));
}

TEST(DriverTree, OldDriversHaveNoHealthStatusAndFlatCounters) {
  TempRoots roots;
  auto inst = Make(kExitScenario, "sim:trn1.32xlarge");
  DriverTreeWriter writer(roots.sys(), roots.proc(), {.driver_version = "2.26.0.0"});
  const std::string status = "neuron_core0/stats/status/success/total";
  const std::string busy = "neuron_core0/stats/other_info/nc_time_in_use/total";
  const std::string pe = "neuron_core0/stats/tensor_engine/pe_cntrs";
  const Snapshot s20 = WriteAt(*inst, writer, 20);
  EXPECT_EQ(Slurp(roots.sys() + "/module/neuron/version"), "2.26.0.0\n");
  EXPECT_FALSE(fs::exists(roots.Device(2, "stats/hardware/health_status")));
  EXPECT_EQ(Slurp(roots.Device(2, "stats/hardware/sram_ecc_uncorrected")), "0\n");
  // While "b" runs, its core's counters stay flat; pe_cntrs move.
  EXPECT_EQ(Slurp(roots.Device(2, status)), "0\n");
  EXPECT_EQ(Slurp(roots.Device(2, busy)), "0\n");
  const std::uint32_t g = inst->Inventory(seconds(20)).devices(2).core_ids(0);
  ASSERT_GT(s20.cores[g].busy_ns, 0u);
  EXPECT_EQ(Slurp(roots.Device(2, pe)), PeCounters(s20.cores[g].busy_ns, s20.device_time));
  const Snapshot s29 = WriteAt(*inst, writer, 29);
  EXPECT_EQ(Slurp(roots.Device(2, status)), "0\n");
  // After it exits they show what it had done.
  const Snapshot s40 = WriteAt(*inst, writer, 40);
  EXPECT_EQ(Slurp(roots.Device(2, status)), Line(OnCore(s29, g)->executions.completed));
  EXPECT_EQ(Slurp(roots.Device(2, busy)), Line(s40.cores[g].busy_ns / 1000));
  EXPECT_GT(s40.cores[g].busy_ns, s20.cores[g].busy_ns);
  // "a" is still running: flat at 0.
  EXPECT_EQ(Slurp(roots.Device(0, status)), "0\n");
  EXPECT_EQ(Slurp(roots.Device(0, busy)), "0\n");
}

TEST(DriverTree, ADeviceResetRestartsEveryCounter) {
  TempRoots roots;
  v1::Inventory inv = PresetInventory("trn1.2xlarge");
  Snapshot s = Blank(inv);
  AddRuntime(inv, s, 500, "old", {0}, 4096, 8192);
  AddRuntime(inv, s, 600, "new", {1}, 1024, 2048);
  s.runtimes[0].executions.completed = 70;
  s.runtimes[1].executions.completed = 30;
  s.cores[0].busy_ns = 5'000'000;
  s.cores[0].flops = 1e9;
  DriverTreeWriter writer(roots.sys(), roots.proc(), {.driver_version = "2.26.0.0"});
  ASSERT_TRUE(writer.Write(inv, s).ok());
  // pid 500 exits: its counts land on core 0.
  v1::Inventory after = PresetInventory("trn1.2xlarge");
  *after.add_processes() = inv.processes(1);
  s.runtimes.erase(s.runtimes.begin());
  ASSERT_TRUE(writer.Write(after, s).ok());
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core0/stats/status/success/total")), "70\n");
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core0/stats/other_info/nc_time_in_use/total")), "5000\n");
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core0/stats/other_info/flop_count/total")),
            "1000000000\n");
  EXPECT_EQ(Slurp(roots.Device(0, "stats/memory_usage/host_mem/tensors/peak")), "5120\n");

  // Reset: the device's counters and the runtime's restart; nothing from before survives.
  s.epoch = 1;
  s.cores[0].busy_ns = 0;
  s.cores[0].flops = 0;
  s.runtimes[0].executions.completed = 2;
  ASSERT_TRUE(writer.Write(after, s).ok());
  for (const char* file : {"success/total", "success/present"}) {
    EXPECT_EQ(Slurp(roots.Device(0, std::string("neuron_core0/stats/status/") + file)), "0\n");
  }
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core0/stats/other_info/nc_time_in_use/total")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core0/stats/other_info/flop_count/total")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(0, "stats/memory_usage/host_mem/tensors/peak")), "1024\n");
  // pid 600 exits after the reset: only what it did since counts.
  s.runtimes.clear();
  ASSERT_TRUE(writer.Write(PresetInventory("trn1.2xlarge"), s).ok());
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core1/stats/status/success/total")), "2\n");
}

TEST(DriverTree, RemovesADeviceThatDisappearsAndRestoresItWhenBack) {
  TempRoots roots;
  auto inst = Make(R"({"name": "lost", "runtimes": [],
      "faults": [{"type": "device_lost", "device": 1, "start": "20s", "end": "30s"}]})",
                   "sim:trn1.32xlarge");
  DriverTreeWriter writer(roots.sys(), roots.proc());
  WriteAt(*inst, writer, 10);
  const std::string link = roots.sys() + "/class/neuron_device/neuron1";
  EXPECT_TRUE(fs::is_directory(roots.Device(1)));
  const Snapshot s25 = WriteAt(*inst, writer, 25);
  ASSERT_FALSE(s25.devices[1].present);
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_FALSE(fs::exists(roots.Device(1)));
  EXPECT_EQ(Slurp(roots.Device(0, "core_count")), "2");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(roots.sys() + "/devices/virtual/neuron_device")) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names.size(), 15u) << "no leftovers beside the 15 devices";
  WriteAt(*inst, writer, 35);
  EXPECT_EQ(Slurp(roots.Device(1, "core_count")), "2");
  EXPECT_EQ(Slurp(link + "/neuron_core1/stats/status/success/total"), "0\n");
}

TEST_F(DriverTreeTrn2, WritesTheRuntimesProcesses) {
  ASSERT_EQ(inv.processes_size(), 16);
  const v1::Process& rank3 = inv.processes(3);
  ASSERT_EQ(rank3.tag(), "llama3-8b-rank3");
  const std::string pid = std::to_string(rank3.pid());
  const std::string p = roots.proc() + "/" + pid + "/";
  EXPECT_EQ(Slurp(p + "cmdline"),
            NulTerminated({"torchrun", "--nproc-per-node", "16", "train_llama.py", "--model",
                           "llama3-8b", "--bf16"}));
  EXPECT_EQ(Slurp(p + "comm"), "torchrun\n");
  EXPECT_EQ(Slurp(p + "status"),
            "Name:\ttorchrun\nState:\tS (sleeping)\nTgid:\t" + pid + "\nPid:\t" + pid +
                "\nPPid:\t1\n"
                "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n");
  EXPECT_EQ(Slurp(p + "environ"), NulTerminated({"NEURON_PROCESS_TAG=llama3-8b-rank3"}));
  EXPECT_EQ(Slurp(p + "cgroup"), "0::/user.slice/user-1000.slice/session-1.scope\n");
  EXPECT_EQ(fs::read_symlink(p + "fd/3").string(), "/dev/neuron3");
  EXPECT_EQ(Slurp(p + "fdinfo/3"), "pos:\t0\nflags:\t02100002\nmnt_id:\t26\n") << "O_RDWR";
  EXPECT_FALSE(fs::exists(fs::symlink_status(p + "fd/4")));
  EXPECT_FALSE(fs::exists(p + "fdinfo/4"));
  EXPECT_EQ(std::distance(fs::directory_iterator(roots.proc()), fs::directory_iterator()), 16);
}

TEST(DriverTree, WritesProcessesSpanningDevicesAndRemovesThoseThatExit) {
  TempRoots roots;
  v1::Inventory inv = PresetInventory("trn1.32xlarge");
  Snapshot s = Blank(inv);
  AddRuntime(inv, s, 700, "700", {3, 4, 5}, 100, 10);
  AddRuntime(inv, s, 800, "long-command-name-tag", {9}, 50, 5);
  inv.mutable_processes(1)->set_command("/opt/venv/bin/a-very-long-program-name --x");
  DriverTreeWriter writer(roots.sys(), roots.proc());
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_EQ(Slurp(roots.proc() + "/700/cmdline"),
            NulTerminated({"/usr/bin/python3", "serve.py", "--port", "8080"}));
  EXPECT_EQ(Slurp(roots.proc() + "/700/comm"), "python3\n");
  EXPECT_EQ(Slurp(roots.proc() + "/700/environ"), "") << "the tag is the pid: no variable";
  EXPECT_EQ(fs::read_symlink(roots.proc() + "/700/fd/3").string(), "/dev/neuron1");
  EXPECT_EQ(fs::read_symlink(roots.proc() + "/700/fd/4").string(), "/dev/neuron2");
  EXPECT_EQ(Slurp(roots.proc() + "/800/comm"), "a-very-long-pro\n") << "15 bytes, as the kernel";
  // Host memory of a runtime spanning devices counts on its lowest.
  EXPECT_EQ(Slurp(roots.Device(1, "stats/memory_usage/host_mem/tensors/total")), "100\n");
  EXPECT_EQ(Slurp(roots.Device(2, "stats/memory_usage/host_mem/tensors/total")), "0\n");
  EXPECT_EQ(Slurp(roots.Device(2, "neuron_core0/stats/memory_usage/device_mem/tensors/total")),
            "10\n");
  // A runtime that leaves a device loses its descriptor and fdinfo; one that comes back has both.
  const std::string fd4 = roots.proc() + "/700/fd/4", info4 = roots.proc() + "/700/fdinfo/4";
  EXPECT_EQ(Slurp(info4), "pos:\t0\nflags:\t02100002\nmnt_id:\t26\n");
  s.runtimes[0].cores = {3};
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(fd4)));
  EXPECT_FALSE(fs::exists(info4));
  EXPECT_TRUE(fs::exists(roots.proc() + "/700/fdinfo/3"));
  s.runtimes[0].cores = {3, 4, 5};
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_EQ(fs::read_symlink(fd4).string(), "/dev/neuron2");
  EXPECT_EQ(Slurp(info4), "pos:\t0\nflags:\t02100002\nmnt_id:\t26\n");

  s.runtimes.erase(s.runtimes.begin());
  inv.mutable_processes()->DeleteSubrange(0, 1);
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_FALSE(fs::exists(roots.proc() + "/700"));
  EXPECT_EQ(Slurp(roots.proc() + "/800/comm"), "a-very-long-pro\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(roots.proc()), fs::directory_iterator()), 1);
}

TEST(DriverTree, WritesNothingUnderProcWhenToldNot) {
  TempRoots roots;
  v1::Inventory inv = PresetInventory("trn1.2xlarge");
  Snapshot s = Blank(inv);
  AddRuntime(inv, s, 700, "t", {0}, 1, 1);
  DriverTreeWriter writer(roots.sys(), roots.proc(), {.write_proc = false});
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_FALSE(fs::exists(roots.proc()));
  EXPECT_EQ(Slurp(roots.Device(0, "neuron_core0/stats/memory_usage/device_mem/tensors/total")),
            "1\n");
}

TEST(DriverTree, TracksTheLastChangeAndThePeakOfMemory) {
  TempRoots roots;
  v1::Inventory inv = PresetInventory("trn1.2xlarge");
  Snapshot s = Blank(inv);
  AddRuntime(inv, s, 700, "t", {0, 1}, 1000, 3000);
  DriverTreeWriter writer(roots.sys(), roots.proc());
  auto set = [&](std::uint64_t host, std::uint64_t device) {
    auto memory = std::make_shared<RuntimeMemory>(*s.runtimes[0].memory);
    memory->host.tensors = host;
    memory->cores[0].tensors = device;
    s.runtimes[0].memory = memory;
    ASSERT_TRUE(writer.Write(inv, s).ok());
  };
  const std::string host = roots.Device(0, "stats/memory_usage/host_mem/tensors/");
  const std::string device = roots.Device(0, "neuron_core0/stats/memory_usage/device_mem/tensors/");
  set(1000, 3000);
  set(4000, 9000);
  set(2500, 100);
  EXPECT_EQ(Slurp(host + "total"), "2500\n");
  EXPECT_EQ(Slurp(host + "present"), "1500\n");
  EXPECT_EQ(Slurp(host + "peak"), "4000\n");
  EXPECT_EQ(Slurp(device + "total"), "100\n");
  EXPECT_EQ(Slurp(device + "present"), "8900\n");
  EXPECT_EQ(Slurp(device + "peak"), "9000\n");
  set(2500, 100);
  EXPECT_EQ(Slurp(host + "present"), "1500\n") << "no change: the last change stays";
}

TEST(DriverTree, RewritesOnlyTheFilesThatChanged) {
  TempRoots roots;
  auto inst = Make("healthy-training", "sim:trn1.32xlarge");
  DriverTreeWriter writer(roots.sys(), roots.proc());
  const Snapshot s = inst->Read(seconds(60));
  const v1::Inventory inv = inst->Inventory(seconds(60));
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_GT(writer.files_written(), 16u * 2 * 90);
  const std::string serial = roots.Device(5, "info/serial_number");
  struct stat before {};
  ASSERT_EQ(::stat(serial.c_str(), &before), 0);
  ASSERT_TRUE(writer.Write(inv, s).ok());
  EXPECT_EQ(writer.files_written(), 0u);
  WriteAt(*inst, writer, 61);
  EXPECT_GT(writer.files_written(), 0u);
  EXPECT_LT(writer.files_written(), 16u * 2 * 20) << "only counters that moved";
  struct stat after {};
  ASSERT_EQ(::stat(serial.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino) << "an unchanged file is not replaced";
  // No temporary files are left behind.
  for (const auto& e : fs::recursive_directory_iterator(roots.root())) {
    ASSERT_NE(e.path().filename().string().front(), '.') << e.path();
  }
}

TEST(DriverTree, RefusesInputThatDoesNotFitAndNamesBadPaths) {
  TempRoots roots;
  v1::Inventory inv = PresetInventory("trn1.2xlarge");
  Snapshot s = Blank(inv);

  DriverTreeWriter bad_version(roots.sys(), roots.proc(), {.driver_version = "latest"});
  EXPECT_EQ(bad_version.Write(inv, s).message(),
            "driver_version \"latest\" is not a version such as 2.30.2.0; nothing written");
  EXPECT_FALSE(fs::exists(roots.sys()));

  DriverTreeWriter writer(roots.sys(), roots.proc());
  Snapshot short_snapshot = s;
  short_snapshot.devices.clear();
  EXPECT_EQ(writer.Write(inv, short_snapshot).message(),
            "inventory device 0: the snapshot has only 0 devices");
  Snapshot stranger = s;
  AddRuntime(inv, stranger, 900, "x", {0}, 1, 1);
  inv.clear_processes();
  EXPECT_EQ(writer.Write(inv, stranger).message(), "runtime 900 has no process in the inventory");
  Snapshot failed = s;
  failed.error = "driver not loaded";
  EXPECT_FALSE(writer.Write(inv, failed).ok());
  EXPECT_FALSE(fs::exists(roots.sys()));

  // The sysfs root is a file: the error names the directory that could not be made.
  std::ofstream(roots.root() + "/file") << "x";
  DriverTreeWriter blocked(roots.root() + "/file/sys", roots.proc());
  const Status status = blocked.Write(inv, s);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(roots.root() + "/file/sys/module/neuron"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace neuronmon::simdev
