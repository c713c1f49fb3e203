#include "simdev/driver_tree_view.h"

#include <algorithm>

namespace neuronmon::simdev {

Status DriverTreeView::IndexDevices() {
  for (const v1::Device& d : inventory.devices()) {
    const std::string where = "inventory device " + std::to_string(d.index());
    const auto logical = static_cast<std::uint32_t>(d.core_ids_size());
    if (d.index() >= snapshot.devices.size()) {
      return Status::InvalidArgument(where + ": the snapshot has only " +
                                     std::to_string(snapshot.devices.size()) + " devices");
    }
    if (logical == 0 || logical != d.core_count() || d.physical_core_count() % logical != 0) {
      return Status::InvalidArgument(where + ": " + std::to_string(d.physical_core_count()) +
                                     " physical cores do not split into " +
                                     std::to_string(d.core_count()) + " logical cores");
    }
    arch[d.index()] = ArchOf(d, inventory.hardware_info());
    if (arch[d.index()] == nullptr) {
      return Status::InvalidArgument(where + ": unknown device name \"" + d.device_name() + "\"");
    }
    for (std::uint32_t i = 0; i < logical; ++i) {
      const std::uint32_t g = d.core_ids(static_cast<int>(i));
      if (g >= snapshot.cores.size()) {
        return Status::InvalidArgument(where + ": core " + std::to_string(g) +
                                       " is not in the snapshot");
      }
      cores[g] = {d.index(), i, d.physical_core_count() / logical};
    }
  }
  return Status::Ok();
}

Status DriverTreeView::TallyRuntimes() {
  for (const v1::Process& p : inventory.processes()) processes[p.pid()] = &p;
  for (const RuntimeSample& r : snapshot.runtimes) {
    if (processes.count(r.pid) == 0) {
      return Status::InvalidArgument("runtime " + std::to_string(r.pid) +
                                     " has no process in the inventory");
    }
    if (r.cores.empty()) continue;
    if (cores.count(r.cores.front()) == 0) {
      return Status::InvalidArgument("runtime " + std::to_string(r.pid) + ": core " +
                                     std::to_string(r.cores.front()) + " is on no device");
    }
    live[r.cores.front()] += r.executions;
    if (r.memory == nullptr) continue;
    std::uint32_t lowest = cores[r.cores.front()].device;
    for (std::uint32_t g : r.cores) {
      if (const auto it = cores.find(g); it != cores.end()) {
        lowest = std::min(lowest, it->second.device);
      }
    }
    HostMemory& h = host[lowest];
    h.application_memory += r.memory->host.application_memory;
    h.constants += r.memory->host.constants;
    h.dma_buffers += r.memory->host.dma_buffers;
    h.tensors += r.memory->host.tensors;
    for (const CoreMemory& c : r.memory->cores) {
      CoreMemory& m = memory[c.core];
      m.constants += c.constants;
      m.model_code += c.model_code;
      m.model_shared_scratchpad += c.model_shared_scratchpad;
      m.runtime_memory += c.runtime_memory;
      m.tensors += c.tensors;
    }
  }
  return Status::Ok();
}

}  // namespace neuronmon::simdev
