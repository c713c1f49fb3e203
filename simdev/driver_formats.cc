#include "simdev/driver_formats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace neuronmon::simdev {
namespace {

constexpr double kCyclesPerNs = 1.4;

}  // namespace

std::string PowerLine(const DevicePower& power, std::uint64_t wall_seconds) {
  if (!power.unavailable.empty())
    return "POWER_STATUS_NO_DATA," + std::to_string(wall_seconds) + ",0.00,0.00,0.00\n";
  char buf[96];
  std::snprintf(buf, sizeof buf, "POWER_STATUS_VALID,%llu,%.2f,%.2f,%.2f\n",
                static_cast<unsigned long long>(wall_seconds), power.min_percent, power.max_percent,
                power.average_percent);
  return buf;
}

std::string Line(std::uint64_t value) { return std::to_string(value) + "\n"; }

std::uint64_t RoundToCount(double value) {
  return value > 0 ? static_cast<std::uint64_t>(std::llround(value)) : 0;
}

const Arch* ArchOf(const v1::Device& device, const v1::HardwareInfo& hardware) {
  static constexpr Arch kTrn1{"NDv2", "Trn1", "Trainium1"};
  static constexpr Arch kInf2{"NDv3", "Inf2", "Inferentia2"};
  static constexpr Arch kTrn2{"NDv3", "Trn2", "Trainium2"};
  const std::string& name =
      device.device_name().empty() ? hardware.neuron_device_type() : device.device_name();
  if (name == "Trainium1" || name == "Trainium" || name == "trainium") return &kTrn1;
  if (name == "Inferentia2" || name == "inferentia2") return &kInf2;
  if (name == "Trainium2" || name == "trainium2") return &kTrn2;
  return nullptr;
}

std::uint64_t PhysicalBusyNs(const CoreCounters& core, std::uint32_t lnc, std::uint32_t j) {
  if (lnc > 1 && j < core.physical_busy_ns.size()) return core.physical_busy_ns[j];
  return core.busy_ns;
}

std::uint64_t Share(std::uint64_t bytes, std::uint32_t lnc, std::uint32_t j) {
  return bytes / lnc + (j == 0 ? bytes % lnc : 0);
}

std::string PeCounters(std::uint64_t busy_ns, Nanos device_time) {
  const std::uint64_t busy = RoundToCount(static_cast<double>(busy_ns) * kCyclesPerNs);
  const std::uint64_t mm = busy * 3 / 4;
  const double idle_ns = static_cast<double>(device_time.count()) - static_cast<double>(busy_ns);
  const std::string row = "," + std::to_string(mm) + "," + std::to_string(busy - mm) + "," +
                          std::to_string(RoundToCount(idle_ns * kCyclesPerNs)) + "\n";
  std::string out = "xrow_grp,mm_active,wl_active,idle\n";
  for (int r = 0; r < 4; ++r) out += std::to_string(r) + row;
  return out;
}

std::string KernelLogRecord(std::uint64_t seq, std::int64_t us, std::size_t n,
                            const std::string& serial, const std::string& type) {
  return "3," + std::to_string(seq) + "," + std::to_string(us) + ",-;NEURON_HW_ERR=" + type +
         " instance-id=i-0000000000000000 hostname=simulated nd-id=" + std::to_string(n) +
         " nc-id=0 serial-num=" + serial + " action=TERMINATE_INSTANCE\n";
}

std::vector<std::string> SplitArgs(const std::string& command) {
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start < command.size()) {
    const std::size_t space = std::min(command.find(' ', start), command.size());
    if (space > start) args.push_back(command.substr(start, space - start));
    start = space + 1;
  }
  return args;
}

}  // namespace neuronmon::simdev
