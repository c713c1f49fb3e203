// write_driver_tree: writes a simulated instance as a Neuron driver sysfs tree and /proc
// (simdev::DriverTreeWriter) under DIR/sys and DIR/proc, for running neuron-monitord
// --device neuron on a machine without Neuron devices (bench/README.md: "Real-host backend").
//   write_driver_tree DIR [--device sim:trn2.48xlarge] [--scenario NAME|FILE] [--at 60]
//                         [--follow SECONDS] [--datastores]
// --follow keeps rewriting the tree once a second, the simulation advancing in real time;
// --datastores writes each runtime's datastore image under DIR/datastore (--datastore-root).
#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  std::string dir, device = "sim:trn2.48xlarge", scenario_name = "healthy-training";
  double at = 60, follow = 0;
  bool datastores = false;
  CLI::App app{"write a simulated instance as a Neuron driver tree"};
  app.add_option("DIR", dir, "output directory (DIR/sys, DIR/proc)")->required();
  app.add_option("--device", device, "simulated instance");
  app.add_option("--scenario", scenario_name, "simulated scenario (a name or a file)");
  app.add_option("--at", at, "simulated time of the first write, seconds");
  app.add_option("--follow", follow, "keep writing once a second for this many seconds");
  app.add_flag("--datastores", datastores, "write runtime datastore images under DIR/datastore");
  CLI11_PARSE(app, argc, argv);
  auto instance = simdev::Instance::Named(device, scenario_name, 1);
  if (!instance.ok()) return std::cerr << instance.status().message() << "\n", 1;
  std::filesystem::create_directories(dir + "/sys");
  std::filesystem::create_directories(dir + "/proc");
  simdev::DriverTreeOptions options;
  if (datastores) options.datastore_root = dir + "/datastore";
  simdev::DriverTreeWriter writer(dir + "/sys", dir + "/proc", options);
  const auto start = std::chrono::steady_clock::now();
  for (double s = 0; s <= follow; s += 1) {
    const Nanos t(static_cast<std::int64_t>((at + s) * 1e9));
    const Status written = writer.Write((*instance)->Inventory(t), (*instance)->Read(t));
    if (!written.ok()) return std::cerr << written.message() << "\n", 1;
    std::this_thread::sleep_until(start + std::chrono::seconds(static_cast<int>(s) + 1));
  }
  return 0;
}
