#include "neurondev/pod_resources.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <utility>

#include "kubelet/podresources/v1/api.grpc.pb.h"
#include "proto/common/terminal_text.h"

namespace neuronmon::neurondev {
namespace {

// The names gRPC gives its codes (grpc::StatusCode has no to-string).
const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "ERROR";
  }
}

// `text` made display-safe and cut to `max_bytes` without splitting a character.
std::string Clip(const std::string& text, std::size_t max_bytes, std::size_t* clipped) {
  std::string out = SanitizeForTerminal(text);
  if (out.size() <= max_bytes) return out;
  ++*clipped;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out;
}

void AddEntry(const ::v1::PodResources& pod, const ::v1::ContainerResources& container,
              const ::v1::ContainerDevices& devices, const PodResourcesOptions& o,
              PodResourcesListing& out) {
  if (out.entries.size() >= o.max_entries) {
    ++out.dropped;
    return;
  }
  ContainerDeviceIds e;
  e.pod = Clip(pod.name(), o.max_name_bytes, &out.clipped);
  e.pod_namespace = Clip(pod.namespace_(), o.max_name_bytes, &out.clipped);
  e.container = Clip(container.name(), o.max_name_bytes, &out.clipped);
  e.resource_name = devices.resource_name();  // one of the few Neuron names
  for (const std::string& id : devices.device_ids()) {
    if (e.device_ids.size() >= o.max_ids_per_entry || out.device_ids >= o.max_device_ids ||
        id.size() > o.max_id_bytes) {
      ++out.dropped;
      continue;
    }
    e.device_ids.push_back(id);
    ++out.device_ids;
  }
  out.entries.push_back(std::move(e));
}

PodResourcesListing NeuronListing(const ::v1::ListPodResourcesResponse& response,
                                  const PodResourcesOptions& options) {
  PodResourcesListing out;
  for (const ::v1::PodResources& pod : response.pod_resources()) {
    for (const ::v1::ContainerResources& container : pod.containers()) {
      for (const ::v1::ContainerDevices& devices : container.devices()) {
        if (NeuronResourceOf(devices.resource_name()) == NeuronResourceKind::kNone) continue;
        AddEntry(pod, container, devices, options, out);
      }
    }
  }
  return out;
}

std::chrono::system_clock::time_point After(Nanos wait) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(wait);
}

}  // namespace

struct PodResourcesClient::Grpc {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<::v1::PodResourcesLister::Stub> stub;
  grpc::CompletionQueue queue;
};

struct PodResourcesClient::Call {
  grpc::ClientContext context;
  ::v1::ListPodResourcesResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<::v1::ListPodResourcesResponse>> reader;
};

PodResourcesClient::PodResourcesClient(PodResourcesOptions options)
    : options_(std::move(options)) {}

PodResourcesClient::~PodResourcesClient() {
  if (grpc_ == nullptr) return;
  void* tag = nullptr;
  bool ok = false;
  if (call_ != nullptr) {
    call_->context.TryCancel();
    grpc_->queue.Next(&tag, &ok);  // the call's completion, now immediate
    call_.reset();
  }
  grpc_->queue.Shutdown();
  while (grpc_->queue.Next(&tag, &ok)) {
  }
}

void PodResourcesClient::Poll(MonoTime now, Nanos wait) {
  Collect(wait);
  if (call_ != nullptr) return;
  if (started_any_ && now - last_start_ < options_.refresh) return;
  Start(now);
}

void PodResourcesClient::Collect(Nanos wait) {
  if (call_ == nullptr) return;
  void* tag = nullptr;
  bool ok = false;
  if (grpc_->queue.AsyncNext(&tag, &ok, After(wait)) != grpc::CompletionQueue::GOT_EVENT) return;
  std::unique_ptr<Call> call = std::move(call_);
  const std::string where = "kubelet PodResources at " + options_.socket_path + ": ";
  if (!ok) {
    state_ = PodResourcesState::kFailed;
    status_ = where + "the call did not complete";
  } else if (!call->status.ok()) {
    state_ = PodResourcesState::kFailed;
    status_ = where + CodeName(call->status.error_code()) + ": " +
              SanitizeForTerminal(call->status.error_message().substr(0, 256));
  } else {
    state_ = PodResourcesState::kKnown;
    status_.clear();
    listing_ = NeuronListing(call->response, options_);
    return;
  }
  listing_ = {};
}

void PodResourcesClient::Start(MonoTime now) {
  started_any_ = true;
  last_start_ = now;
  struct stat st {};
  if (::stat(options_.socket_path.c_str(), &st) != 0) {
    const int error = errno;
    listing_ = {};
    if (error == ENOENT || error == ENOTDIR) {
      state_ = PodResourcesState::kNotKubernetes;
      status_ = "not on Kubernetes (no kubelet socket at " + options_.socket_path + ")";
      return;
    }
    state_ = PodResourcesState::kFailed;
    status_ = "kubelet PodResources at " + options_.socket_path + ": " + std::strerror(error) +
              (error == EACCES ? " (the kubelet's socket is root's only)" : "");
    return;
  }
  if (!S_ISSOCK(st.st_mode)) {
    listing_ = {};
    state_ = PodResourcesState::kFailed;
    status_ = "kubelet PodResources at " + options_.socket_path + ": not a socket";
    return;
  }
  // gRPC (and its threads) starts with the first socket found: never on a host without one.
  if (grpc_ == nullptr) {
    grpc_ = std::make_unique<Grpc>();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(
        static_cast<int>(std::min<std::size_t>(options_.max_message_bytes, INT_MAX)));
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    // A kubelet that restarts is dialled again within a refresh, not after gRPC's 2 minutes.
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::max(options_.refresh, options_.deadline))
                                     .count()));
    grpc_->channel = grpc::CreateCustomChannel("unix:" + options_.socket_path,
                                               grpc::InsecureChannelCredentials(), args);
    grpc_->stub = ::v1::PodResourcesLister::NewStub(grpc_->channel);
  }
  call_ = std::make_unique<Call>();
  call_->context.set_deadline(After(options_.deadline));
  call_->reader =
      grpc_->stub->AsyncList(&call_->context, ::v1::ListPodResourcesRequest(), &grpc_->queue);
  call_->reader->Finish(&call_->response, &call_->status, call_.get());
}

}  // namespace neuronmon::neurondev
