// The real backend against ground truth: while a simulated scenario runs, the simulator writes
// its state as a Neuron driver tree and /proc (simdev::DriverTreeWriter), neurondev::Host reads
// it, and every field both have must match the simulator's own snapshots — counters as growth
// per read (the host starts counting when it opens), gauges as values — within the rounding of
// the driver's formats (µs busy time, integer FLOPs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "neurondev/host.h"
#include "neurondev/sysfs_tree.h"
#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

namespace fs = std::filesystem;

// A healthy training job whose devices reset at 40 s: every counter restarts.
constexpr char kDeviceReset[] = R"({
  "name": "device-reset",
  "description": "healthy training, devices reset at 40s",
  "instance": "trn2.48xlarge",
  "runtimes": [{
    "name": "train", "tag": "rank{rank}", "pid": 41200,
    "command": "torchrun --nproc-per-node 16 train.py",
    "workers": "per_device", "load": "2s",
    "training": {"parameters": 1.0e9, "tokens_per_step": 65536, "input_seconds": 0.05,
                 "collectives": [{"op": "all_reduce", "bytes": 1048576, "count": 16}]}
  }],
  "faults": [{"type": "device_reset", "at": "40s"}]
})";

class TempRoot {
 public:
  TempRoot() {
    std::string pattern = testing::FastTempDirectory() + "/roundtrip-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempRoot() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Result<simdev::Scenario> LoadNamedScenario(const std::string& name) {
  if (name == "device-reset") return simdev::ParseScenario(kDeviceReset, "device-reset");
  return simdev::LoadScenario(name);
}

MonoTime At(Nanos t) { return MonoTime(t); }

// One round trip: `steps` reads one second apart, from `from`.
// `resets` (when given) counts the reads that started a new epoch. `datastores`: the simulator
// writes its runtimes' datastore images too and the reader reads them (--datastore-root), so
// executions are compared on every driver.
void RoundTrip(const std::string& device, const std::string& scenario_name, Nanos from, int steps,
               const std::string& driver = "2.30.2.0", int* resets = nullptr,
               bool datastores = false) {
  SCOPED_TRACE(device + " " + scenario_name + " driver " + driver +
               (datastores ? " with datastores" : ""));
  Result<simdev::InstanceSpec> spec = simdev::ParseDeviceSpec(device);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  Result<simdev::Scenario> scenario = LoadNamedScenario(scenario_name);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  Result<std::unique_ptr<simdev::Instance>> sim =
      simdev::Instance::Create(*spec, std::move(*scenario), 7);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  TempRoot sys, proc, images;
  simdev::DriverTreeOptions tree_options;
  tree_options.driver_version = driver;
  if (datastores) tree_options.datastore_root = images.path();
  tree_options.kernel_log = sys.path() + "/kmsg";  // the driver's NEURON_HW_ERR lines
  simdev::DriverTreeWriter writer(sys.path(), proc.path(), tree_options);
  Snapshot truth = (*sim)->Read(from);
  ASSERT_TRUE(writer.Write((*sim)->Inventory(from), truth).ok());
  HostOptions options;
  options.sysfs_root = sys.path();
  options.proc_root = proc.path();
  options.neuron_monitor = "";
  options.kubernetes = false;  // a test host that is a Kubernetes node must not add its pods
  options.kernel_log_options.path = tree_options.kernel_log;
  options.logical_nc_config = spec->lnc;
  // The writer replaces files by rename and every field is compared at every read: discover and
  // read everything each time.
  options.sampler = {.rediscover_every = 1, .slow_every = 1};
  options.process_scan_every = 1;
  if (datastores) options.datastore_root = images.path();
  Result<std::unique_ptr<Host>> host = Host::Open(options, At(from));
  ASSERT_TRUE(host.ok()) << host.status().message();
  Snapshot read = (*host)->Read(At(from));
  const bool live = HasLiveCounters(driver);
  for (int step = 1; step <= steps; ++step) {
    const Nanos t = from + std::chrono::seconds(step);
    SCOPED_TRACE("t=" + std::to_string(t.count() / 1'000'000'000) + "s");
    Snapshot next_truth = (*sim)->Read(t);
    ASSERT_TRUE(writer.Write((*sim)->Inventory(t), next_truth).ok());
    Snapshot next = (*host)->Read(At(t));
    // A reset in the simulator is a new epoch for the reader too.
    EXPECT_EQ(next.epoch - read.epoch, next_truth.epoch - truth.epoch);
    const bool reset = next_truth.epoch != truth.epoch;
    if (reset && resets != nullptr) ++*resets;
    ASSERT_EQ(next.cores.size(), next_truth.cores.size());
    // With datastores a runtime's cores' busy time and FLOPs are its datastores' on any driver,
    // to the µs and the MAC.
    std::set<std::uint32_t> runtime_cores;
    if (datastores) {
      for (const RuntimeSample& r : next_truth.runtimes) {
        runtime_cores.insert(r.cores.begin(), r.cores.end());
      }
    }
    for (std::size_t c = 0; c < next.cores.size(); ++c) {
      const bool exact = live || runtime_cores.contains(static_cast<std::uint32_t>(c));
      auto grown = [&](auto now, auto before) { return reset ? now : now - before; };
      const double want =
          static_cast<double>(grown(next_truth.cores[c].busy_ns, truth.cores[c].busy_ns));
      const double got = static_cast<double>(grown(next.cores[c].busy_ns, read.cores[c].busy_ns));
      // µs in the driver's file, plus the pe_cntrs' cycle rounding on flat drivers.
      EXPECT_NEAR(got, want, exact ? 4000 : 1e6) << "core " << c;
      if (exact) {
        EXPECT_NEAR(grown(next.cores[c].flops, read.cores[c].flops),
                    grown(next_truth.cores[c].flops, truth.cores[c].flops), 8)
            << "core " << c;
      }
    }
    ASSERT_EQ(next.devices.size(), next_truth.devices.size());
    for (std::size_t d = 0; d < next.devices.size(); ++d) {
      EXPECT_EQ(next.devices[d].present, next_truth.devices[d].present) << "device " << d;
      if (!next_truth.devices[d].present || reset) continue;
      EXPECT_EQ(next.devices[d].ecc.mem_uncorrected - read.devices[d].ecc.mem_uncorrected,
                next_truth.devices[d].ecc.mem_uncorrected - truth.devices[d].ecc.mem_uncorrected)
          << "device " << d;
      EXPECT_EQ(next.devices[d].ecc.sram_uncorrected - read.devices[d].ecc.sram_uncorrected,
                next_truth.devices[d].ecc.sram_uncorrected - truth.devices[d].ecc.sram_uncorrected)
          << "device " << d;
      if (live) {  // 2.30.2+ counts corrected ECC errors too
        EXPECT_EQ(next.devices[d].ecc.mem_corrected - read.devices[d].ecc.mem_corrected,
                  next_truth.devices[d].ecc.mem_corrected - truth.devices[d].ecc.mem_corrected)
            << "device " << d;
        EXPECT_EQ(next.UnmeasuredReason(Signal::kEccCorrected), "");
        const HardwareErrors& truth_errors = next_truth.devices[d].errors;
        const bool unhealthy =
            truth_errors.mem_ecc_uncorrected + truth_errors.mem_ecc_repairable > 0;
        EXPECT_EQ(!next.devices[d].unhealthy_components.empty(), unhealthy) << "device " << d;
      } else {
        EXPECT_NE(next.UnmeasuredReason(Signal::kEccCorrected), "");
      }
      // Health: the driver's totals and its power reading, as the simulator had them.
      const HardwareErrors& e = next.devices[d].errors;
      const HardwareErrors& w = next_truth.devices[d].errors;
      EXPECT_EQ(e.mem_ecc_uncorrected, w.mem_ecc_uncorrected) << "device " << d;
      EXPECT_EQ(e.sram_ecc_uncorrected, w.sram_ecc_uncorrected) << "device " << d;
      EXPECT_EQ(e.mem_ecc_repairable, w.mem_ecc_repairable) << "device " << d;
      // hw_error_event is in health_status/, from driver 2.28.
      if (driver >= std::string("2.28")) {
        EXPECT_EQ(e.events, w.events) << "device " << d;
      }
      EXPECT_EQ(e.nc_uncorrectable, w.nc_uncorrectable) << "device " << d;
      // The kernel log's events, read back from the lines the writer logged.
      EXPECT_EQ(next.devices[d].kernel_log_unavailable, "") << "device " << d;
      EXPECT_EQ(e.kernel_sram_uncorrectable, w.kernel_sram_uncorrectable) << "device " << d;
      EXPECT_EQ(e.kernel_nc_uncorrectable, w.kernel_nc_uncorrectable) << "device " << d;
      EXPECT_EQ(e.kernel_hbm_uncorrectable, w.kernel_hbm_uncorrectable) << "device " << d;
      EXPECT_EQ(e.kernel_dma, w.kernel_dma) << "device " << d;
      // Memory by the driver's categories: what is in use now, and high-water marks at least
      // that (the driver's are per core, read once a minute here).
      const DeviceMemory& m = next.devices[d].memory;
      const DeviceMemory& n = next_truth.devices[d].memory;
      EXPECT_TRUE(m.measured) << "device " << d;
      for (std::size_t i = 0; i < kDeviceMemoryCategories.size(); ++i) {
        EXPECT_EQ(m.used[i], n.used[i]) << "device " << d << " " << kDeviceMemoryCategories[i];
        EXPECT_GE(m.peak[i], m.used[i]) << "device " << d << " " << kDeviceMemoryCategories[i];
      }
      const DevicePower& p = next.devices[d].power;
      const DevicePower& q = next_truth.devices[d].power;
      EXPECT_EQ(p.unavailable.empty(), q.unavailable.empty())
          << p.unavailable << " / " << q.unavailable;
      if (p.unavailable.empty() && q.unavailable.empty()) {
        EXPECT_NEAR(p.average_percent, q.average_percent, 0.006) << "device " << d;
        EXPECT_NEAR(p.max_percent, q.max_percent, 0.006) << "device " << d;
      }
    }
    ASSERT_EQ(next.runtimes.size(), next_truth.runtimes.size());
    for (std::size_t r = 0; r < next.runtimes.size(); ++r) {
      const RuntimeSample& got = next.runtimes[r];
      const RuntimeSample& want = next_truth.runtimes[r];
      EXPECT_EQ(got.pid, want.pid);
      EXPECT_EQ(got.tag, want.tag);
      EXPECT_EQ(got.cores, want.cores);
      EXPECT_EQ(got.memory->host.Total(), want.memory->host.Total()) << "pid " << got.pid;
      EXPECT_EQ(got.memory->DeviceTotal(), want.memory->DeviceTotal()) << "pid " << got.pid;
      const RuntimeSample* got_before = FindRuntime(read, got.pid);
      const RuntimeSample* want_before = FindRuntime(truth, want.pid);
      if ((!live && !datastores) || reset || got_before == nullptr || want_before == nullptr)
        continue;
      if (datastores) {
        // Time in collectives: the runtime's own, from its cores' CC_TIME (µs).
        std::uint64_t want_ns = 0, want_before_ns = 0;
        for (const CollectiveCounters& c : want.collectives) want_ns += c.busy_ns;
        for (const CollectiveCounters& c : want_before->collectives) want_before_ns += c.busy_ns;
        ASSERT_TRUE(got.collective_time_ns && got_before->collective_time_ns);
        EXPECT_NEAR(static_cast<double>(*got.collective_time_ns - *got_before->collective_time_ns),
                    static_cast<double>(want_ns - want_before_ns), 1000)
            << "pid " << got.pid;
      }
      const ExecutionCounters g = got.executions.Minus(got_before->executions);
      const ExecutionCounters w = want.executions.Minus(want_before->executions);
      EXPECT_EQ(g.completed, w.completed) << "pid " << got.pid;
      EXPECT_EQ(g.completed_with_num_err, w.completed_with_num_err) << "pid " << got.pid;
      EXPECT_EQ(g.timed_out, w.timed_out) << "pid " << got.pid;
      EXPECT_EQ(g.hardware, w.hardware) << "pid " << got.pid;
    }
    EXPECT_FALSE(next.UnmeasuredReason(Signal::kHbmTraffic).empty());
    if (datastores) {
      EXPECT_EQ(next.UnmeasuredReason(Signal::kExecutions), "");
      EXPECT_EQ(next.UnmeasuredReason(Signal::kCollectives), "");
      EXPECT_EQ(next.UnmeasuredReason(Signal::kCoreActivity), "");
      EXPECT_EQ(next.UnmeasuredReason(Signal::kFlops), "") << "MAC_COUNT on any driver";
    }
    truth = std::move(next_truth);
    read = std::move(next);
  }
}

TEST(RoundTrip, HealthyTrainingOnEveryPreset) {
  for (const std::string device :
       {"sim:trn1.2xlarge", "sim:trn1.32xlarge", "sim:trn1n.32xlarge", "sim:inf2.48xlarge",
        "sim:trn2.48xlarge:lnc=1", "sim:trn2.48xlarge:lnc=2"}) {
    RoundTrip(device, "healthy-training", std::chrono::seconds(20), 4);
  }
}

TEST(RoundTrip, InferenceServing) {
  RoundTrip("sim:trn2.48xlarge", "inference-serving", std::chrono::seconds(30), 5);
}

TEST(RoundTrip, EccDegradation) {
  RoundTrip("sim:trn2.48xlarge", "ecc-degradation", std::chrono::seconds(178), 6);
}

TEST(RoundTrip, DeviceReset) {
  int resets = 0;
  RoundTrip("sim:trn2.48xlarge", "device-reset", std::chrono::seconds(37), 6, "2.30.2.0", &resets);
  EXPECT_EQ(resets, 1);
}

// Each generation the writer knows, its nodes where that driver puts them: 2.24 (topology
// root-only, no health_status), 2.28, 2.30.2 (live counters, corrected ECC), and the reorganised
// 2.31 tree, whose moved nodes the reader finds by name.
TEST(RoundTrip, EveryDriverGeneration) {
  for (const char* driver : {"2.24.7.0", "2.28.0.0", "2.30.2.0", "2.31.7.0"}) {
    RoundTrip("sim:trn2.48xlarge", "ecc-degradation", std::chrono::seconds(178), 3, driver);
    RoundTrip("sim:trn1.32xlarge", "healthy-training", std::chrono::seconds(20), 3, driver);
  }
}

// With the runtimes' datastores, each runtime's cores, memory and executions are its own on
// every driver, even one that counts executions only when a process exits.
TEST(RoundTrip, RuntimeDatastoresOnOldAndNewDrivers) {
  for (const char* driver : {"2.24.7.0", "2.30.2.0"}) {
    RoundTrip("sim:trn2.48xlarge", "healthy-training", std::chrono::seconds(20), 3, driver, nullptr,
              true);
    RoundTrip("sim:trn1.32xlarge", "inference-serving", std::chrono::seconds(30), 3, driver,
              nullptr, true);
  }
}

TEST(RoundTrip, OlderDriversTakeBusyTimeFromTheTensorEngine) {
  RoundTrip("sim:trn1.32xlarge", "healthy-training", std::chrono::seconds(20), 4, "2.26.5.0");
}

// The node report of each generation's tree, as `neuron-ls --driver` prints it: every node where
// the 2.24–2.30 layout has it up to 2.30.2 (health_status missing on 2.24, as expected there: not
// reported); in the reorganised tree the moved nodes are found elsewhere and the two nodes this
// project does not know are listed.
TEST(NodeIndex, ReportsWhereEachGenerationKeepsItsNodes) {
  for (const char* driver : {"2.24.7.0", "2.28.0.0", "2.30.2.0", "2.31.7.0"}) {
    SCOPED_TRACE(driver);
    auto sim = simdev::Instance::Named("sim:trn1.2xlarge", "healthy-training", 7);
    ASSERT_TRUE(sim.ok()) << sim.status().message();
    TempRoot sys, proc;
    simdev::DriverTreeWriter writer(sys.path(), proc.path(), {.driver_version = driver});
    const Nanos t = std::chrono::seconds(20);
    ASSERT_TRUE(writer.Write((*sim)->Inventory(t), (*sim)->Read(t)).ok());
    const NodeIndex nodes = SysfsTree(sys.path()).IndexDevice(0, driver);
    EXPECT_EQ(nodes.missing(), std::vector<std::string>{});
    EXPECT_FALSE(nodes.truncated());
    const bool moved = std::string(driver) >= "2.31";
    std::vector<std::string> unknown;
    if (moved) unknown = {"info/firmware_version", "stats/power/utilization_raw"};
    EXPECT_EQ(nodes.unknown(), unknown);
    std::vector<std::string> moved_to;
    for (const NodeIndex::Moved& m : nodes.moved())
      moved_to.push_back(m.canonical + " -> " + m.found);
    if (!moved) {
      EXPECT_EQ(moved_to, std::vector<std::string>{});
    } else {
      EXPECT_NE(std::find(moved_to.begin(), moved_to.end(),
                          "stats/hardware/health_status -> health_status"),
                moved_to.end());
      EXPECT_NE(std::find(moved_to.begin(), moved_to.end(),
                          "neuron_core<K>/stats/tensor_engine/pe_cntrs -> "
                          "neuron_core<K>/engines/tensor/pe_cntrs"),
                moved_to.end());
    }
    // The start-up line says when the layout is not 2.24–2.30's.
    HostOptions options;
    options.sysfs_root = sys.path();
    options.proc_root = proc.path();
    options.neuron_monitor = "";
    options.kubernetes = false;
    options.kernel_log = false;
    Result<std::unique_ptr<Host>> host = Host::Open(options, MonoTime{});
    ASSERT_TRUE(host.ok()) << host.status().message();
    EXPECT_EQ((*host)->Describe().find(", driver layout: ") != std::string::npos, moved)
        << (*host)->Describe();
    // The health_status node is found from 2.28; before, it is neither found nor missing.
    const auto& found = nodes.found();
    EXPECT_EQ(std::find(found.begin(), found.end(), "stats/hardware/health_status") != found.end(),
              std::string(driver) >= "2.28" && !moved);
  }
}

}  // namespace
}  // namespace neuronmon::neurondev
