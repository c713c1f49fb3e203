// Which Neuron devices and cores Kubernetes allocated to which pod's container, and which pod a
// process belongs to given those allocations (docs/attribution.md). The input is what the
// kubelet's PodResources API lists (pod_resources.h fetches it): per container, the ids under
// which a device plugin advertised the devices of one extended resource. AWS's Neuron device
// plugin advertises `aws.amazon.com/neuron` (and, on older plugins, `aws.amazon.com/neurondevice`)
// as whole devices with the device index as id ("0", "1", ...), and `aws.amazon.com/neuroncore`
// as cores with the global logical core index as id (core c lives on device c / cores per
// device) — the numbering AWS's own CloudWatch agent uses to join neuron-monitor's metrics with
// PodResources. Pure functions; nothing is guessed: an id in any other form is counted, not
// mapped, and a process whose devices are not all allocated to one container gets no pod.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace neuronmon::neurondev {

// One container's devices of one resource, as the kubelet lists them.
struct ContainerDeviceIds {
  std::string pod;
  std::string pod_namespace;
  std::string container;
  std::string resource_name;  // "aws.amazon.com/neuron"
  std::vector<std::string> device_ids;
  bool operator==(const ContainerDeviceIds&) const = default;
};

enum class NeuronResourceKind { kNone, kDevice, kCore };

// kDevice for "aws.amazon.com/neuron" and "aws.amazon.com/neurondevice", kCore for
// "aws.amazon.com/neuroncore", kNone for every other resource.
NeuronResourceKind NeuronResourceOf(std::string_view resource_name);

// The index a Neuron device plugin's id names: decimal digits without a leading zero ("7"), or
// for devices also the device node's name ("neuron7"). Nothing for any other form or beyond
// 1,000,000.
std::optional<std::uint32_t> NeuronIdIndex(std::string_view id, NeuronResourceKind kind);

// One container's Neuron allocation of one resource, in device indices and global logical core
// ids (as Device.core_ids and Process.core_ids number them).
struct PodAllocation {
  std::string pod;
  std::string pod_namespace;
  std::string container;
  std::string resource_name;
  std::vector<std::uint32_t> device_indices;  // ascending, unique
  // Ascending, unique: the listed cores, or every core of the listed devices.
  std::vector<std::uint32_t> core_ids;
  std::size_t unrecognized_ids = 0;  // ids NeuronIdIndex does not read
  bool operator==(const PodAllocation&) const = default;
};

// The Neuron entries of `entries` mapped, in order; other resources are skipped. With
// `cores_per_device` 0 (unknown), a device allocation has no core ids and a core allocation no
// device indices.
std::vector<PodAllocation> MapAllocations(std::span<const ContainerDeviceIds> entries,
                                          std::uint32_t cores_per_device);

// A pod's container.
struct PodContainer {
  std::string pod;
  std::string pod_namespace;
  std::string container;
  bool operator==(const PodContainer&) const = default;
};

// The one container to which `allocations` give every device in `devices` (the /dev/neuron<N> a
// process holds) — the whole device or some of its cores. Nothing when `devices` is empty, when
// a device is allocated to no container, or when any device is allocated (in whole or in part) to
// more than one container: then which one the process belongs to is not known.
std::optional<PodContainer> ContainerOfDevices(std::span<const std::uint32_t> devices,
                                               std::span<const PodAllocation> allocations);

}  // namespace neuronmon::neurondev
