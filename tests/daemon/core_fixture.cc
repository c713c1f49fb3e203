#include "tests/daemon/core_fixture.h"

#include <chrono>
#include <memory>

namespace neuronmon::daemon::testing {

using std::chrono::seconds;

v1::Subscribe Request(std::initializer_list<std::pair<v1::Group, int>> groups, std::string tags) {
  v1::Subscribe req;
  for (auto [g, ms] : groups) {
    v1::GroupSubscription* s = req.add_groups();
    s->set_group(g);
    s->set_period_ns(static_cast<std::uint64_t>(ms) * 1'000'000);
  }
  req.set_tag_filter(tags);
  return req;
}

v1::Inventory Inventory() {
  v1::Inventory inv;
  inv.mutable_hardware_info()->set_logical_neuroncore_config(2);
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(4);
  inv.mutable_hardware_info()->set_neuron_device_memory_size(103079215104ULL);
  inv.set_host_vcpu_count(192);
  for (int d = 0; d < 2; ++d) inv.add_devices()->set_hbm_peak_bytes_per_second(2.9e12);
  return inv;
}

Snapshot Base(std::uint64_t seq, int seconds_at) {
  Snapshot s;
  s.seq = seq;
  s.device_time = seconds(seconds_at);
  s.wall = WallTime(seconds(1767225600 + seconds_at));
  s.cores.resize(8);
  for (CoreCounters& c : s.cores) c.physical_busy_ns = {0, 0};
  s.devices.resize(2);
  RuntimeSample r;
  r.pid = 4242;
  r.tag = "llama-rank0";
  r.cores = {0, 1, 2, 3};
  r.memory = std::make_shared<RuntimeMemory>();
  s.runtimes.push_back(r);
  return s;
}

}  // namespace neuronmon::daemon::testing
