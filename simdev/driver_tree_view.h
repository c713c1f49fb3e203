// DriverTreeView: the inventory and snapshot of one DriverTreeWriter::Write, indexed for writing
// the tree: where each logical core is (device, place, physical cores), each device's
// architecture, and the runtimes' memory and executions summed where the driver shows them. It
// borrows both (they outlive it) and lives for one Write. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"
#include "simdev/driver_formats.h"

namespace neuronmon::simdev {

struct DriverTreeView {
  struct Core {
    std::uint32_t device = 0;
    std::uint32_t position = 0;  // i: the logical core's place among its device's
    std::uint32_t lnc = 1;
  };

  DriverTreeView(const v1::Inventory& inv, const Snapshot& snap) : inventory(inv), snapshot(snap) {}
  // Index the inventory's cores and tally the runtimes; errors when the two do not fit together.
  Status IndexDevices();
  Status TallyRuntimes();

  const v1::Inventory& inventory;
  const Snapshot& snapshot;
  std::unordered_map<std::uint32_t, Core> cores;              // by global logical core
  std::map<std::uint32_t, const Arch*> arch;                  // by device
  std::map<std::uint32_t, HostMemory> host;                   // by the runtimes' lowest device
  std::unordered_map<std::uint32_t, CoreMemory> memory;       // by logical core
  std::unordered_map<std::uint32_t, ExecutionCounters> live;  // by runtimes' lowest core
  std::map<std::uint32_t, const v1::Process*> processes;      // by pid
};

}  // namespace neuronmon::simdev
