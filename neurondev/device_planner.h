// DevicePlanner discovers a device's layout in the driver's sysfs tree — its directory, the
// counters and memory categories it lists, its cores — as SysfsTree reads it, reads its constant
// files, and opens the files a reading reads, keeping at most a budget of descriptors (device
// directories first; the rest are opened at every read) and setting each file's pace. One
// planner plans the devices of one discovery. Internal to SysfsTree and SysfsSampler; it borrows
// the limits and the read buffer. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "neurondev/device_plan.h"
#include "neurondev/tree_reading.h"

namespace neuronmon::neurondev {

class Subdirectories;  // device_planner.cc

// Discovers devices' layouts as SysfsTree reads them and opens their files, keeping at most
// `budget` descriptors (device directories first); the rest are opened at every read. Reads the
// constant files on the way.
class DevicePlanner {
 public:
  // `slow_pe`: pe_cntrs is read as a slow-moving file (busy time comes from nc_time_in_use).
  // `buffer` is max_file_bytes + 1 long.
  DevicePlanner(const TreeLimits& limits, std::string& buffer, std::size_t budget,
                bool slow_pe = false)
      : limits_(limits), buffer_(buffer), budget_(budget), slow_pe_(slow_pe) {}

  // The plan of device `index` under the sysfs mount `root`, whose driver is `driver_version`
  // (which of its nodes are expected; "" unknown).
  DevicePlan PlanDevice(const std::string& root, int index, const std::string& driver_version = "");

 private:
  // Re-reads `file` at `pace`, at the samples of the next phase: consecutive files of a pace
  // are spread over its samples.
  void Paced(PlannedFile& file, Pace pace);
  PlannedFile PlanPaced(const DevicePlan& d, std::string relative, Pace pace);
  PlannedFile Plan(const DevicePlan& d, std::string relative);
  // Opens `relative` from `listing`, the directory it is in from `leaf` on, when that is open:
  // fewer names to look up than from the device's directory.
  PlannedFile Plan(const DevicePlan& d, std::string relative, const Subdirectories& listing,
                   std::size_t leaf);
  // `<dir>/<name>/total` for every subdirectory `name` of `dir`, at `pace` unless `name` is one
  // of `live`.
  std::vector<PlannedCounter> PlanCounters(const DevicePlan& d, const std::string& dir, Pace pace,
                                           std::initializer_list<std::string_view> live);
  // `<dir>/<category>/{total,peak}` for every subdirectory of `dir`.
  std::vector<PlannedMemory> PlanMemory(const DevicePlan& d, const std::string& dir);
  // The physical cores' directories, `neuron_core<K>`, ascending K.
  std::vector<std::uint32_t> CoreIndices(const DevicePlan& d);
  // Every file of health_status/ (the driver adds nodes there between generations).
  std::vector<PlannedCounter> PlanHealth(const DevicePlan& d, const std::string& dir);
  PlannedCore PlanCore(const DevicePlan& d, std::uint32_t k);
  // core_count, connected_devices, serial_number and architecture/*, read by path.
  void ReadConstants(DevicePlan& d);

  const TreeLimits& limits_;
  std::string& buffer_;
  std::size_t budget_;
  bool slow_pe_;
  bool noatime_ = true;
  std::vector<std::string> missing_;  // directories found missing, for the device being planned
  std::size_t kept_ = 0;
  std::uint32_t phase_ = 0;
};

}  // namespace neuronmon::neurondev
