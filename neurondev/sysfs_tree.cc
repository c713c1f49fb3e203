#include "neurondev/sysfs_tree.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "neurondev/device_files.h"
#include "neurondev/device_plan.h"
#include "neurondev/device_planner.h"

namespace neuronmon::neurondev {
namespace {

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
  // Listed with getdents64 into a buffer on the stack: the sampler lists the devices at every
  // sample, and opendir's 32 KiB heap buffer made malloc consolidate its free lists each time.
  for (const char* dir : {"/devices/virtual/neuron_device", "/class/neuron_device"}) {
    const std::string path = root_ + dir;
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0 && (errno == ENOENT || errno == ENOTDIR)) continue;
    if (fd.get() < 0) return Status::IoError(path + ": cannot list: " + std::strerror(errno));
    std::vector<int> out;
    alignas(dirent64) char entries[4096];
    for (ssize_t n; (n = ::getdents64(fd.get(), entries, sizeof entries)) != 0;) {
      if (n < 0) return Status::IoError(path + ": cannot list: " + std::strerror(errno));
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const dirent64*>(entries + at);
        at += e->d_reclen;
        const std::string_view name = e->d_name;
        if (name.rfind("neuron", 0) != 0) continue;
        Result<std::uint64_t> k = ParseCounter(name.substr(6));
        if (k.ok() && *k < 4096) out.push_back(static_cast<int>(*k));
      }
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

std::string SysfsTree::DriverVersion() const {
  TreeReading reading;
  ReadVersion(root_, limits_, reading);
  return reading.driver_version.value_or("");
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
