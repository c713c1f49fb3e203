// FakeKubelet: a gRPC server on a unix socket in a temporary directory that serves the kubelet's
// PodResources API (PodResourcesLister.List) with canned pods, as a real kubelet would on
// /var/lib/kubelet/pod-resources/kubelet.sock. It can answer late (to test the client's deadline):
// the delay is spent waiting inside the server's handler, and the destructor ends it at once.
// Thread-safe as gRPC servers are: tests set the answer before the client asks.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace neuronmon::neurondev::testing {

// One container's devices of one resource, as the fake lists them.
struct FakeDevices {
  std::string pod;
  std::string pod_namespace;
  std::string container;
  std::string resource_name;
  std::vector<std::string> device_ids;
};

class FakeKubelet {
 public:
  // Listens on `socket_path` (which must not exist). REQUIRES: the path fits a unix socket.
  explicit FakeKubelet(std::string socket_path);
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  // What List answers: the entries grouped into pods and containers in order of first mention.
  void Serve(const std::vector<FakeDevices>& entries);
  // List waits this long before answering (zero: answers at once).
  void AnswerAfter(std::chrono::milliseconds delay);
  // List fails with UNAVAILABLE and this message (empty: succeeds).
  void FailWith(const std::string& message);
  int calls() const;
  const std::string& socket_path() const { return socket_path_; }

 private:
  struct Impl;
  std::string socket_path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuronmon::neurondev::testing
