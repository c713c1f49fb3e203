#include "neurondev/sysfs_tree.h"

#include <fcntl.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "neurondev/device_files.h"
#include "neurondev/device_plan.h"
#include "neurondev/device_planner.h"

namespace neuronmon::neurondev {
namespace {

namespace fs = std::filesystem;

// Reads a device by path, keeping nothing but its directory open while it reads.
DeviceReading ReadOnce(const std::string& root, const TreeLimits& limits, int index,
                       std::string& buffer, const std::string& driver_version) {
  DevicePlan plan = DevicePlanner(limits, buffer, 1).PlanDevice(root, index, driver_version);
  return ReadPlanned(plan, limits, Refresh(), buffer);
}

}  // namespace

SysfsTree::SysfsTree(std::string root, TreeLimits limits)
    : root_(std::move(root)), limits_(limits) {}

Result<std::vector<int>> SysfsTree::ListDevices() const {
  for (const char* dir : {"/devices/virtual/neuron_device", "/class/neuron_device"}) {
    const std::string path = root_ + dir;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) continue;
    std::vector<int> out;
    fs::directory_iterator it(path, ec);
    if (ec) return Status::IoError(path + ": cannot list: " + ec.message());
    for (fs::directory_iterator end; it != end; it.increment(ec)) {
      if (ec) return Status::IoError(path + ": cannot list: " + ec.message());
      const std::string name = it->path().filename().string();
      if (name.rfind("neuron", 0) != 0) continue;
      Result<std::uint64_t> n = ParseCounter(std::string_view(name).substr(6));
      if (n.ok() && *n < 4096) out.push_back(static_cast<int>(*n));
    }
    std::sort(out.begin(), out.end());
    if (out.size() > limits_.max_devices) out.resize(limits_.max_devices);
    return out;
  }
  return std::vector<int>{};
}

DeviceReading SysfsTree::ReadDevice(int index) const {
  std::string buffer(limits_.max_file_bytes + 1, '\0');
  return ReadOnce(root_, limits_, index, buffer, "");
}

NodeIndex SysfsTree::IndexDevice(int index, const std::string& driver_version) const {
  const UniqueFd fd(::open(IdentifyDeviceDir(root_, index).path.c_str(), kDirectoryFlags));
  if (fd.get() < 0) return NodeIndex();
  return NodeIndex::Build(fd.get(), driver_version,
                          {.max_entries_per_directory = limits_.max_entries_per_directory});
}

TreeReading SysfsTree::Read() const {
  TreeReading out;
  ReadVersion(root_, limits_, out);
  Result<std::vector<int>> devices = ListDevices();
  if (!devices.ok()) {
    out.errors.push_back(devices.status().message());
    return out;
  }
  std::string buffer(limits_.max_file_bytes + 1, '\0');
  for (int n : *devices)
    out.devices.push_back(ReadOnce(root_, limits_, n, buffer, out.driver_version.value_or("")));
  return out;
}

}  // namespace neuronmon::neurondev
