#include "daemon/core/analysis/allocations.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/core/analysis/rules.h"

namespace neuronmon::daemon::analysis_internal {
namespace {

std::string DeviceList(const std::set<std::uint32_t>& devices) {
  std::string out;
  for (std::uint32_t d : devices) out += (out.empty() ? "nd" : ", nd") + std::to_string(d);
  return out;
}

// When `f` started: at `now_ns`, unless `before` held a finding of the same kind and subject.
std::int64_t SinceOf(const std::vector<v1::Finding>& before, const v1::Finding& f,
                     std::int64_t now_ns) {
  for (const v1::Finding& b : before) {
    if (b.kind() == f.kind() && b.subject() == f.subject()) return b.since_unix_ns();
  }
  return now_ns;
}

// The devices Kubernetes allocated to `a`, whole or by NeuronCore (`per` to a device).
std::set<std::uint32_t> DevicesOf(const v1::PodAllocation& a, std::uint32_t per) {
  std::set<std::uint32_t> devices(a.device_indices().begin(), a.device_indices().end());
  for (std::uint32_t c : a.core_ids()) devices.insert(c / per);
  return devices;
}

v1::Finding UnallocatedFinding(const RuntimeSample& r, const std::set<std::uint32_t>& outside,
                               std::int64_t now_ns) {
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_UNALLOCATED);
  f.set_severity(v1::SEVERITY_WARNING);
  f.set_subject(r.tag);
  f.set_pid(r.pid);
  f.set_summary("uses " + DeviceList(outside) + ", which Kubernetes allocated to no pod");
  f.set_advice(Advice(v1::FINDING_KIND_UNALLOCATED));
  f.set_confidence(1);
  f.set_since_unix_ns(now_ns);
  AddEvidence(f, "unallocated_devices_in_use", static_cast<double>(outside.size()), "count", 0,
              ">");
  return f;
}

v1::Finding IdlePodFinding(const v1::PodAllocation& a, const std::set<std::uint32_t>& devices,
                           std::int64_t now_ns) {
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_IDLE_ALLOCATED);
  f.set_severity(v1::SEVERITY_WARNING);
  f.set_subject(PodLabel(a));
  f.set_summary(PodLabelWithContainer(a) + " was allocated " + DeviceList(devices) +
                " but no Neuron application runs on them");
  f.set_advice("delete the pod, or lower its " + a.resource_name() +
               " request, so the scheduler can give the devices to a pod that uses them");
  f.set_confidence(1);
  f.set_since_unix_ns(now_ns);
  AddEvidence(f, "allocated_devices_in_use", 0, "count", 1, "<");
  return f;
}

// The runtimes' findings: each that uses devices outside `allocated`. Returns the devices in use.
std::set<std::uint32_t> AddUnallocated(const Snapshot& end, std::uint32_t per,
                                       const std::set<std::uint32_t>& allocated,
                                       std::int64_t now_ns, const Analysis& previous,
                                       Analysis& out) {
  std::set<std::uint32_t> used;
  for (const RuntimeSample& r : end.runtimes) {
    std::set<std::uint32_t> outside;
    for (std::uint32_t c : r.cores) {
      used.insert(c / per);
      if (!allocated.count(c / per)) outside.insert(c / per);
    }
    if (outside.empty()) continue;
    v1::Finding f = UnallocatedFinding(r, outside, now_ns);
    if (auto it = previous.runtimes.find(r.pid); it != previous.runtimes.end())
      f.set_since_unix_ns(SinceOf(it->second, f, now_ns));
    out.runtimes[r.pid].push_back(std::move(f));
  }
  return used;
}

}  // namespace

void AddAllocationFindings(const v1::Inventory& inv, const Snapshot& end, std::int64_t now_ns,
                           const Analysis& previous, Analysis& out) {
  if (inv.allocations().empty()) return;
  const std::uint32_t per = CoresPerDevice(inv);
  std::set<std::uint32_t> allocated;
  for (const v1::PodAllocation& a : inv.allocations()) allocated.merge(DevicesOf(a, per));
  const std::set<std::uint32_t> used = AddUnallocated(end, per, allocated, now_ns, previous, out);
  for (const v1::PodAllocation& a : inv.allocations()) {
    const std::set<std::uint32_t> devices = DevicesOf(a, per);
    if (devices.empty()) continue;
    std::size_t in_use = 0;
    for (std::uint32_t d : devices) in_use += used.count(d);
    if (in_use > 0) continue;
    v1::Finding f = IdlePodFinding(a, devices, now_ns);
    f.set_since_unix_ns(SinceOf(previous.allocations, f, now_ns));
    out.allocations.push_back(std::move(f));
  }
}

}  // namespace neuronmon::daemon::analysis_internal
