#include "tests/neurondev/fake_kubelet.h"

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>

#include "kubelet/podresources/v1/api.grpc.pb.h"

namespace neuronmon::neurondev::testing {
namespace {

::v1::ListPodResourcesResponse Grouped(const std::vector<FakeDevices>& entries) {
  ::v1::ListPodResourcesResponse response;
  for (const FakeDevices& e : entries) {
    ::v1::PodResources* pod = nullptr;
    for (auto& p : *response.mutable_pod_resources()) {
      if (p.name() == e.pod && p.namespace_() == e.pod_namespace) pod = &p;
    }
    if (pod == nullptr) {
      pod = response.add_pod_resources();
      pod->set_name(e.pod);
      pod->set_namespace_(e.pod_namespace);
    }
    ::v1::ContainerResources* container = nullptr;
    for (auto& c : *pod->mutable_containers()) {
      if (c.name() == e.container) container = &c;
    }
    if (container == nullptr) {
      container = pod->add_containers();
      container->set_name(e.container);
      container->add_cpu_ids(2);  // present on real kubelets; the client ignores it
    }
    ::v1::ContainerDevices* devices = container->add_devices();
    devices->set_resource_name(e.resource_name);
    for (const std::string& id : e.device_ids) devices->add_device_ids(id);
    devices->mutable_topology()->add_nodes()->set_id(0);
  }
  return response;
}

}  // namespace

struct FakeKubelet::Impl final : ::v1::PodResourcesLister::Service {
  grpc::Status List(grpc::ServerContext* /*context*/, const ::v1::ListPodResourcesRequest*,
                    ::v1::ListPodResourcesResponse* response) override {
    std::unique_lock lock(mutex);
    ++calls;
    // The one place a test waits on purpose: a kubelet that answers late.
    woken.wait_for(lock, delay, [this] { return stopping; });
    if (!failure.empty()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, failure);
    *response = answer;
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*,
                                       const ::v1::AllocatableResourcesRequest*,
                                       ::v1::AllocatableResourcesResponse*) override {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "not in the fake");
  }

  std::mutex mutex;
  std::condition_variable woken;
  bool stopping = false;
  std::chrono::milliseconds delay{0};
  std::string failure;
  ::v1::ListPodResourcesResponse answer;
  int calls = 0;
  std::unique_ptr<grpc::Server> server;
};

FakeKubelet::FakeKubelet(std::string socket_path)
    : socket_path_(std::move(socket_path)), impl_(std::make_unique<Impl>()) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(impl_.get());
  impl_->server = builder.BuildAndStart();
}

FakeKubelet::~FakeKubelet() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->woken.notify_all();
  if (impl_->server != nullptr) {
    impl_->server->Shutdown(std::chrono::system_clock::now());
    impl_->server->Wait();
  }
}

void FakeKubelet::Serve(const std::vector<FakeDevices>& entries) {
  std::lock_guard lock(impl_->mutex);
  impl_->answer = Grouped(entries);
}

void FakeKubelet::AnswerAfter(std::chrono::milliseconds delay) {
  std::lock_guard lock(impl_->mutex);
  impl_->delay = delay;
}

void FakeKubelet::FailWith(const std::string& message) {
  std::lock_guard lock(impl_->mutex);
  impl_->failure = message;
}

int FakeKubelet::calls() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->calls;
}

}  // namespace neuronmon::neurondev::testing
