#include "neurondev/pci.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "proto/common/file_reader.h"
#include "proto/common/unique_fd.h"

namespace neuronmon::neurondev {
namespace {

// The driver's struct neuron_ioctl_device_bdf_ext (neuron_ioctl.h), and its request number, which
// the driver encodes with the size of a pointer to it.
struct DeviceBdfExt {
  std::uint32_t nd_index;    // in: relative to the device the node belongs to
  std::uint32_t domain;      // out
  std::uint32_t bus_number;  // out
  std::uint8_t slot;         // out
  std::uint8_t func;         // out
};
constexpr char kNeuronIoctlBase = 'N';
const unsigned long kDeviceBdfExt = _IOR(kNeuronIoctlBase, 106, DeviceBdfExt*);

constexpr std::size_t kMaxCpuList = 4096;

std::string Line(const std::string& path, std::string* error) {
  Result<std::string> text = ReadRegularFile(path, kMaxCpuList + 1);
  if (!text.ok()) {
    *error = text.status().message();
    return "";
  }
  std::string line = text->substr(0, text->find('\n'));
  return line;
}

}  // namespace

std::string PciAddress::ToString() const {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, slot & 0x1fu,
                function & 0x7u);
  return text;
}

std::optional<PciAddress> QueryPciAddress(const std::string& dev_root, int index,
                                          std::string* error) {
  const std::string path = dev_root + "/neuron" + std::to_string(index);
  // Exactly O_WRONLY: the driver's free-access mode (no attach, no reset wait).
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISCHR(st.st_mode)) {
    *error = path + ": not a character device";
    return std::nullopt;
  }
  DeviceBdfExt arg{};
  arg.nd_index = 0;
  if (::ioctl(fd.get(), kDeviceBdfExt, &arg) != 0) {
    *error = path + ": the driver did not give the PCI address: " + std::strerror(errno);
    return std::nullopt;
  }
  return PciAddress{arg.domain, arg.bus_number, arg.slot, arg.func};
}

PciPlacement ReadPciPlacement(const std::string& sysfs_root, const PciAddress& address) {
  PciPlacement out;
  out.bdf = address.ToString();
  const std::string dir = sysfs_root + "/bus/pci/devices/" + out.bdf + "/";
  std::string error;
  const std::string numa = Line(dir + "numa_node", &error);
  int node = -1;
  const auto [end, ec] = std::from_chars(numa.data(), numa.data() + numa.size(), node);
  if (error.empty() &&
      (ec != std::errc() || end != numa.data() + numa.size() || node < -1 || node >= 4096)) {
    error = dir + "numa_node: \"" + numa.substr(0, 32) + "\" is not a NUMA node";
  }
  if (error.empty()) out.numa_node = node;
  std::string cpu_error;
  const std::string cpus = Line(dir + "local_cpulist", &cpu_error);
  const bool well_formed = !cpus.empty() && cpus.size() <= kMaxCpuList &&
                           cpus.find_first_not_of("0123456789,-") == std::string::npos;
  if (cpu_error.empty() && !well_formed) {
    cpu_error = dir + "local_cpulist: not a CPU list";
  }
  if (cpu_error.empty()) out.cpu_affinity = cpus;
  out.error = error.empty() ? cpu_error : (cpu_error.empty() ? error : error + "; " + cpu_error);
  return out;
}

PciPlacement LocateDevice(const std::string& dev_root, const std::string& sysfs_root, int index) {
  std::string error;
  std::optional<PciAddress> address = QueryPciAddress(dev_root, index, &error);
  if (!address) {
    PciPlacement unknown;
    unknown.error = error;
    return unknown;
  }
  return ReadPciPlacement(sysfs_root, *address);
}

}  // namespace neuronmon::neurondev
