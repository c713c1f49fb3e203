#include "neurondev/pod_allocations.h"

#include <algorithm>

namespace neuronmon::neurondev {
namespace {

constexpr std::uint32_t kMaxIndex = 1'000'000;

void SortUnique(std::vector<std::uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::optional<std::uint32_t> Decimal(std::string_view text) {
  if (text.empty() || text.size() > 7 || (text[0] == '0' && text.size() > 1)) return std::nullopt;
  std::uint32_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (n > kMaxIndex) return std::nullopt;
  return n;
}

bool SameContainer(const PodAllocation& a, const PodContainer& c) {
  return a.pod == c.pod && a.pod_namespace == c.pod_namespace && a.container == c.container;
}

bool TouchesDevice(const PodAllocation& a, std::uint32_t device) {
  return std::binary_search(a.device_indices.begin(), a.device_indices.end(), device);
}

}  // namespace

NeuronResourceKind NeuronResourceOf(std::string_view resource_name) {
  if (resource_name == "aws.amazon.com/neuron" || resource_name == "aws.amazon.com/neurondevice") {
    return NeuronResourceKind::kDevice;
  }
  if (resource_name == "aws.amazon.com/neuroncore") return NeuronResourceKind::kCore;
  return NeuronResourceKind::kNone;
}

std::optional<std::uint32_t> NeuronIdIndex(std::string_view id, NeuronResourceKind kind) {
  if (kind == NeuronResourceKind::kNone) return std::nullopt;
  constexpr std::string_view kNode = "neuron";
  if (kind == NeuronResourceKind::kDevice && id.substr(0, kNode.size()) == kNode) {
    id.remove_prefix(kNode.size());
  }
  return Decimal(id);
}

std::vector<PodAllocation> MapAllocations(std::span<const ContainerDeviceIds> entries,
                                          std::uint32_t cores_per_device) {
  std::vector<PodAllocation> out;
  for (const ContainerDeviceIds& e : entries) {
    const NeuronResourceKind kind = NeuronResourceOf(e.resource_name);
    if (kind == NeuronResourceKind::kNone) continue;
    PodAllocation a{e.pod, e.pod_namespace, e.container, e.resource_name, {}, {}, 0};
    for (const std::string& id : e.device_ids) {
      const std::optional<std::uint32_t> index = NeuronIdIndex(id, kind);
      if (!index) {
        ++a.unrecognized_ids;
      } else if (kind == NeuronResourceKind::kDevice) {
        a.device_indices.push_back(*index);
        for (std::uint32_t c = 0; c < cores_per_device; ++c) {
          a.core_ids.push_back(*index * cores_per_device + c);
        }
      } else {
        a.core_ids.push_back(*index);
        if (cores_per_device > 0) a.device_indices.push_back(*index / cores_per_device);
      }
    }
    SortUnique(a.device_indices);
    SortUnique(a.core_ids);
    out.push_back(std::move(a));
  }
  return out;
}

std::optional<PodContainer> ContainerOfDevices(std::span<const std::uint32_t> devices,
                                               std::span<const PodAllocation> allocations) {
  std::optional<PodContainer> found;
  for (std::uint32_t device : devices) {
    bool allocated = false;
    for (const PodAllocation& a : allocations) {
      if (!TouchesDevice(a, device)) continue;
      allocated = true;
      if (!found) {
        found = PodContainer{a.pod, a.pod_namespace, a.container};
      } else if (!SameContainer(a, *found)) {
        return std::nullopt;  // two containers share a device the process holds
      }
    }
    if (!allocated) return std::nullopt;
  }
  return found;
}

}  // namespace neuronmon::neurondev
