// PodResourcesClient asks the kubelet which devices it allocated to which pod's container,
// through the kubelet's PodResources API — gRPC on a unix socket, by default
// /var/lib/kubelet/pod-resources/kubelet.sock (root-only), as NVIDIA's dcgm-exporter does — and
// keeps the Neuron resources of the answer (pod_allocations.h). A missing socket means "not on
// Kubernetes": nothing is dialled and nothing is an error. Calls are asynchronous: Poll() collects
// the answer of the call in flight and starts the next when one is due, without blocking (unless
// told to wait), and every call ends by its deadline, so a slow or hung kubelet never stalls the
// sampler. Answers are bounded (message size, entries, ids, string lengths); what exceeds the
// bounds is dropped or cut and counted. gRPC stays inside pod_resources.cc, and starts (with its
// own threads) only once a socket is found. Not thread-safe: one owner (Host, on the daemon's
// read thread) calls every method.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "neurondev/pod_allocations.h"
#include "proto/common/clock.h"

namespace neuronmon::neurondev {

struct PodResourcesOptions {
  std::string socket_path = "/var/lib/kubelet/pod-resources/kubelet.sock";
  Nanos deadline = std::chrono::seconds(1);  // per call
  Nanos refresh = std::chrono::seconds(10);  // between the starts of two calls
  std::size_t max_message_bytes = 4 << 20;   // the largest answer received
  std::size_t max_entries = 4096;            // Neuron (container, resource) entries kept
  std::size_t max_ids_per_entry = 1024;      // device ids kept per entry
  // Device ids kept over all entries: a hostile answer of ~800,000 short ids fits in 4 MiB and
  // would carry the inventory past a frame's 16 MiB (config kubernetes.max_device_ids).
  std::size_t max_device_ids = 16384;
  std::size_t max_name_bytes = 253;  // pod, namespace, container, resource name
  std::size_t max_id_bytes = 64;     // a longer device id is dropped
  bool operator==(const PodResourcesOptions&) const = default;
};

// The Neuron part of one answer of the kubelet.
struct PodResourcesListing {
  std::vector<ContainerDeviceIds> entries;  // in the kubelet's order
  std::size_t dropped = 0;                  // entries and ids beyond the bounds, not kept
  std::size_t device_ids = 0;               // ids kept, over all entries
  std::size_t clipped = 0;                  // names cut to max_name_bytes
};

enum class PodResourcesState {
  kPending,        // no answer yet
  kNotKubernetes,  // no socket at the configured path
  kKnown,          // listing() is the kubelet's last answer
  kFailed,         // the last call failed: status() says why
};

class PodResourcesClient {
 public:
  explicit PodResourcesClient(PodResourcesOptions options);
  // Cancels a call in flight and waits for gRPC to release it (cancelling is immediate).
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  // Collects the answer of the call in flight, waiting at most `wait` for it (zero: not at all),
  // then starts a call when none is in flight and none started within `refresh` before `now`.
  // Whether the socket exists is checked before each call.
  void Poll(MonoTime now, Nanos wait = Nanos::zero());

  PodResourcesState state() const { return state_; }
  // Empty unless state() is kKnown.
  const PodResourcesListing& listing() const { return listing_; }
  // Empty when kKnown; else why the allocations are not known, e.g. "not on Kubernetes (no
  // kubelet socket at PATH)", "kubelet PodResources at PATH: DEADLINE_EXCEEDED: ...".
  const std::string& status() const { return status_; }
  const PodResourcesOptions& options() const { return options_; }

 private:
  struct Call;  // a call in flight, with its gRPC state
  void Collect(Nanos wait);
  void Start(MonoTime now);

  PodResourcesOptions options_;
  struct Grpc;  // channel, stub and completion queue; made when a socket is first found
  std::unique_ptr<Grpc> grpc_;
  std::unique_ptr<Call> call_;
  bool started_any_ = false;
  MonoTime last_start_{};
  PodResourcesState state_ = PodResourcesState::kPending;
  PodResourcesListing listing_;
  std::string status_ = "waiting for the kubelet's first answer";
};

}  // namespace neuronmon::neurondev
