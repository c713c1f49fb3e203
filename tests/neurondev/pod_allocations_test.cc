// What the Neuron device plugin's ids mean (device indices, global core ids) and which pod a
// process belongs to given the kubelet's allocations: pure functions on literal inputs.
#include "neurondev/pod_allocations.h"

#include <gtest/gtest.h>

namespace neuronmon::neurondev {
namespace {

using Ids = std::vector<std::uint32_t>;

TEST(NeuronResource, OnlyTheNeuronPluginsNamesCount) {
  EXPECT_EQ(NeuronResourceOf("aws.amazon.com/neuron"), NeuronResourceKind::kDevice);
  EXPECT_EQ(NeuronResourceOf("aws.amazon.com/neurondevice"), NeuronResourceKind::kDevice);
  EXPECT_EQ(NeuronResourceOf("aws.amazon.com/neuroncore"), NeuronResourceKind::kCore);
  EXPECT_EQ(NeuronResourceOf("nvidia.com/gpu"), NeuronResourceKind::kNone);
  EXPECT_EQ(NeuronResourceOf("aws.amazon.com/neuron2"), NeuronResourceKind::kNone);
  EXPECT_EQ(NeuronResourceOf(""), NeuronResourceKind::kNone);
}

TEST(NeuronId, IndicesAreDecimalAndDevicesMayBeNamedAsTheirNode) {
  EXPECT_EQ(NeuronIdIndex("0", NeuronResourceKind::kDevice), 0u);
  EXPECT_EQ(NeuronIdIndex("15", NeuronResourceKind::kDevice), 15u);
  EXPECT_EQ(NeuronIdIndex("neuron7", NeuronResourceKind::kDevice), 7u);
  EXPECT_EQ(NeuronIdIndex("127", NeuronResourceKind::kCore), 127u);
  // A core is never named as a device node, and nothing else is read as a number.
  for (const char* bad : {"neuron7", "", "-1", "07", "1.5", " 3", "3 ", "0x3", "nc3", "9999999"}) {
    EXPECT_FALSE(NeuronIdIndex(bad, NeuronResourceKind::kCore)) << bad;
  }
  EXPECT_FALSE(NeuronIdIndex("neuron", NeuronResourceKind::kDevice));
  EXPECT_FALSE(NeuronIdIndex("GPU-1234", NeuronResourceKind::kDevice));
  EXPECT_FALSE(NeuronIdIndex("3", NeuronResourceKind::kNone));
}

TEST(MapAllocations, DevicesBringTheirCoresAndCoresTheirDevices) {
  const std::vector<ContainerDeviceIds> listed = {
      {"train-0", "ml", "worker", "aws.amazon.com/neuron", {"3", "2"}},
      {"infer-1", "serving", "model", "aws.amazon.com/neuroncore", {"9", "8", "17", "bogus"}},
      {"gpu-pod", "ml", "cuda", "nvidia.com/gpu", {"GPU-1"}},
  };
  const std::vector<PodAllocation> mapped = MapAllocations(listed, 4);
  ASSERT_EQ(mapped.size(), 2u);  // the GPU is not ours
  EXPECT_EQ(mapped[0].pod, "train-0");
  EXPECT_EQ(mapped[0].pod_namespace, "ml");
  EXPECT_EQ(mapped[0].container, "worker");
  EXPECT_EQ(mapped[0].device_indices, (Ids{2, 3}));
  EXPECT_EQ(mapped[0].core_ids, (Ids{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(mapped[0].unrecognized_ids, 0u);
  EXPECT_EQ(mapped[1].resource_name, "aws.amazon.com/neuroncore");
  EXPECT_EQ(mapped[1].core_ids, (Ids{8, 9, 17}));
  EXPECT_EQ(mapped[1].device_indices, (Ids{2, 4}));
  EXPECT_EQ(mapped[1].unrecognized_ids, 1u);
}

TEST(MapAllocations, UnknownCoresPerDeviceMapsOnlyWhatIsListed) {
  const std::vector<ContainerDeviceIds> listed = {
      {"a", "ns", "c", "aws.amazon.com/neurondevice", {"1"}},
      {"b", "ns", "c", "aws.amazon.com/neuroncore", {"5"}},
  };
  const std::vector<PodAllocation> mapped = MapAllocations(listed, 0);
  ASSERT_EQ(mapped.size(), 2u);
  EXPECT_EQ(mapped[0].device_indices, (Ids{1}));
  EXPECT_TRUE(mapped[0].core_ids.empty());
  EXPECT_EQ(mapped[1].core_ids, (Ids{5}));
  EXPECT_TRUE(mapped[1].device_indices.empty());
}

std::vector<PodAllocation> Cluster() {
  return MapAllocations(
      std::vector<ContainerDeviceIds>{
          {"train-0", "ml", "worker", "aws.amazon.com/neuron", {"0", "1"}},
          {"train-0", "ml", "worker", "aws.amazon.com/neuroncore", {"8"}},             // device 2
          {"infer-a", "serving", "model", "aws.amazon.com/neuroncore", {"12", "13"}},  // device 3
          {"infer-b", "serving", "model", "aws.amazon.com/neuroncore", {"14"}},        // device 3
      },
      4);
}

TEST(ContainerOfDevices, AllDevicesInOneContainerNameIt) {
  const std::vector<PodAllocation> allocations = Cluster();
  const PodContainer worker{"train-0", "ml", "worker"};
  EXPECT_EQ(ContainerOfDevices(Ids{0}, allocations), worker);
  EXPECT_EQ(ContainerOfDevices(Ids{0, 1}, allocations), worker);
  // One container's devices through two resources, one of them by cores.
  EXPECT_EQ(ContainerOfDevices(Ids{1, 2}, allocations), worker);
}

TEST(ContainerOfDevices, AmbiguityOrAnUnallocatedDeviceNamesNobody) {
  const std::vector<PodAllocation> allocations = Cluster();
  EXPECT_FALSE(ContainerOfDevices(Ids{}, allocations));
  EXPECT_FALSE(ContainerOfDevices(Ids{3}, allocations));     // two pods' cores share device 3
  EXPECT_FALSE(ContainerOfDevices(Ids{0, 5}, allocations));  // device 5 is nobody's
  EXPECT_FALSE(ContainerOfDevices(Ids{5}, allocations));
  EXPECT_FALSE(ContainerOfDevices(Ids{0, 3}, allocations));
  EXPECT_FALSE(ContainerOfDevices(Ids{0}, std::vector<PodAllocation>{}));
  // Same pod, another container: not the same.
  std::vector<PodAllocation> two = Cluster();
  two.push_back(two[0]);
  two.back().container = "sidecar";
  EXPECT_FALSE(ContainerOfDevices(Ids{0}, two));
}

}  // namespace
}  // namespace neuronmon::neurondev
