// The runtime datastore by a round trip: the simulator writes each runtime's datastore images
// beside its driver tree (DriverTreeOptions::datastore_root), neurondev reads them back
// (DatastoreFiles), and the per-application figures over a window are the simulator's own — busy
// share per core, time in collectives, FLOPs (2 × MACs), device memory, executions, the runtime
// version — on trn1 (2 cores a device), trn2 (8 physical cores: the full sets of cores 4-7) and
// inf2.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "neurondev/datastores.h"
#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "tests/neurondev/tree_writer.h"

namespace neuronmon::neurondev {
namespace {

using std::chrono::seconds;

struct Window {
  std::unique_ptr<simdev::Instance> sim;
  v1::Inventory inventory;
  Snapshot a, b;
  // pid -> device -> the reading at a and at b
  std::map<std::uint32_t,
           std::map<std::uint32_t, std::pair<datastore::Reading, datastore::Reading>>>
      read;
};

void RunWindow(const std::string& device, const std::string& scenario, Window& w) {
  testing::FakeTree root;
  auto sim = simdev::Instance::Named(device, scenario, 5);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  w.sim = std::move(*sim);
  const std::string ds = root.root() + "/datastore";
  simdev::DriverTreeWriter writer(root.root() + "/sys", root.root() + "/proc",
                                  {.datastore_root = ds});
  Datastores files(std::make_unique<DatastoreFiles>(ds));
  const Nanos t0 = seconds(60), t1 = seconds(70);
  std::map<std::uint32_t, std::map<std::uint32_t, datastore::Reading>> first;
  for (const Nanos t : {t0, t1}) {
    w.inventory = w.sim->Inventory(t);
    Snapshot s = w.sim->Read(t);
    ASSERT_TRUE(writer.Write(w.inventory, s).ok());
    const std::uint32_t physical = w.inventory.hardware_info().neuroncore_per_device_count() *
                                   w.inventory.hardware_info().logical_neuroncore_config();
    for (const v1::Process& p : w.inventory.processes()) {
      for (std::uint32_t d : p.device_indices()) {
        Result<Datastores::Read> r = files.ReadDatastore(static_cast<int>(d), p.pid(), physical);
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(r->restarted, "");
        if (t == t0) {
          first[p.pid()][d] = r->reading;
        } else {
          w.read[p.pid()][d] = {first[p.pid()][d], r->reading};
        }
      }
    }
    (t == t0 ? w.a : w.b) = std::move(s);
  }
}

void ExpectSimulatorsFigures(const std::string& device, const std::string& scenario) {
  SCOPED_TRACE(device + " " + scenario);
  Window w;
  RunWindow(device, scenario, w);
  ASSERT_FALSE(w.read.empty());
  const v1::HardwareInfo& hw = w.inventory.hardware_info();
  const std::uint32_t per_device = hw.neuroncore_per_device_count();
  const std::uint32_t lnc = std::max(1u, hw.logical_neuroncore_config());
  const double window_us = 10e6;
  for (const RuntimeSample& r : w.b.runtimes) {
    SCOPED_TRACE("pid " + std::to_string(r.pid));
    const RuntimeSample* before = nullptr;
    for (const RuntimeSample& x : w.a.runtimes) {
      if (x.pid == r.pid) before = &x;
    }
    ASSERT_NE(before, nullptr);
    const auto& devices = w.read.at(r.pid);
    ExecutionCounters executions;
    std::uint64_t memory = 0, mem_want = 0;
    for (std::uint32_t g : r.cores) {
      const std::uint32_t d = g / per_device, position = g % per_device;
      const auto& [ra, rb] = devices.at(d);
      double busy_us = 0, macs = 0;
      for (std::uint32_t j = 0; j < lnc; ++j) {
        const std::size_t p = position * lnc + j;
        busy_us += static_cast<double>(rb.Core(p, datastore::kTimeInUse) -
                                       ra.Core(p, datastore::kTimeInUse));
        macs += static_cast<double>(rb.Core(p, datastore::kMacCount) -
                                    ra.Core(p, datastore::kMacCount));
        memory += rb.Core(p, datastore::kDeviceCode) + rb.Core(p, datastore::kDeviceTensors) +
                  rb.Core(p, datastore::kDeviceConstants) +
                  rb.Core(p, datastore::kDeviceScratchpad) + rb.Core(p, datastore::kDeviceMisc);
        // Time in collectives: the runtime's, on each of its cores.
        std::uint64_t cc_want = 0, cc_before = 0;
        for (const CollectiveCounters& c : r.collectives) cc_want += c.busy_ns;
        for (const CollectiveCounters& c : before->collectives) cc_before += c.busy_ns;
        EXPECT_NEAR(
            static_cast<double>(rb.Core(p, datastore::kCcTime) - ra.Core(p, datastore::kCcTime)) /
                window_us,
            static_cast<double>(cc_want - cc_before) / 1e3 / window_us, 1e-5);
      }
      const double want_share =
          static_cast<double>(w.b.cores[g].busy_ns - w.a.cores[g].busy_ns) / 1e3 / window_us;
      EXPECT_NEAR(busy_us / lnc / window_us, want_share, 1e-5) << "core " << g;
      const double want_flops = w.b.cores[g].flops - w.a.cores[g].flops;
      EXPECT_NEAR(2 * macs, want_flops, std::max(4.0 * lnc, want_flops * 1e-9)) << "core " << g;
    }
    for (const CoreMemory& m : r.memory->cores) mem_want += m.Total();
    EXPECT_EQ(memory, mem_want);
    for (const auto& [d, readings] : devices) {
      for (const auto& core : readings.second.cores) {
        for (const datastore::ExecutionCounter& e : datastore::kExecutionCounters) {
          executions.*e.field += core[e.counter];
        }
      }
      EXPECT_EQ(readings.second.runtime_version().Text(), "2.21.41") << "device " << d;
      EXPECT_EQ(readings.second.framework_version().Text(), "2.5.1") << "device " << d;
    }
    EXPECT_EQ(executions, r.executions);
  }
}

TEST(DatastoreRoundTrip, Trn1PerApplicationFiguresAreTheSimulatorsOwn) {
  ExpectSimulatorsFigures("sim:trn1.32xlarge", "healthy-training");
}

TEST(DatastoreRoundTrip, Trn2ReadsThePhysicalCoresOfTheFullSets) {
  ExpectSimulatorsFigures("sim:trn2.48xlarge", "collective-bound");
}

TEST(DatastoreRoundTrip, Inf2ServingIsReadToo) {
  ExpectSimulatorsFigures("sim:inf2.48xlarge", "inference-serving");
}

// A runtime that exits leaves no image behind; one that is not there is NotFound, not zero.
TEST(DatastoreRoundTrip, AnExitedRuntimesImageIsGone) {
  testing::FakeTree root;
  auto sim = simdev::Instance::Named("sim:trn1.2xlarge", "healthy-training", 5);
  ASSERT_TRUE(sim.ok());
  const std::string ds = root.root() + "/datastore";
  simdev::DriverTreeWriter writer(root.root() + "/sys", root.root() + "/proc",
                                  {.datastore_root = ds});
  const Nanos t = seconds(30);
  v1::Inventory inventory = (*sim)->Inventory(t);
  Snapshot s = (*sim)->Read(t);
  ASSERT_TRUE(writer.Write(inventory, s).ok());
  ASSERT_FALSE(s.runtimes.empty());
  const std::uint32_t pid = s.runtimes[0].pid;
  const std::string path = ds + "/neuron0/" + std::to_string(pid);
  ASSERT_TRUE(std::filesystem::exists(path));
  s.runtimes.clear();
  inventory.clear_processes();
  ASSERT_TRUE(writer.Write(inventory, s).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
  Datastores files(std::make_unique<DatastoreFiles>(ds));
  EXPECT_EQ(files.ReadDatastore(0, pid, 2).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace neuronmon::neurondev
