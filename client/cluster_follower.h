// ClusterFollower: follows many daemons at once over TCP with the light subscription (the host
// summary and the host's verdict: a few hundred bytes per report), for neuron-top's cluster view.
// A few connector threads make the first connection to each host, so an unreachable host never
// holds up the others; a host that cannot be reached is retried with capped, jittered backoff, and
// once connected its Client reconnects by itself. Each host has its own endpoint (TLS settings)
// and token (ClusterTarget). One pump thread drains every client's events
// into the host table. Rows() copies the table. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/cluster.h"

namespace neuronmon::client {

// One host to follow: where (a kTcp endpoint, with its TLS settings) and the token it is sent.
struct ClusterTarget {
  std::string address;  // "host:port" as the user gave it: the row's name until the daemon's
  Endpoint endpoint;
  std::string token;
};

struct ClusterFollowerOptions {
  std::vector<ClusterTarget> hosts;
  std::string client_name = "neuronmon-cluster";
  double period_seconds = 1;    // the subscription's period
  std::size_t connectors = 16;  // concurrent first connections
  Nanos connect_timeout = std::chrono::seconds(3);
  Nanos initial_backoff = std::chrono::milliseconds(500);
  Nanos max_backoff = std::chrono::seconds(30);
  // The pump takes the clients' events at most this often (a host's row is at most this late).
  Nanos pump_interval = std::chrono::milliseconds(100);
};

// The light subscription: host summary and verdict every `period_seconds`.
v1::Subscribe ClusterSubscription(double period_seconds);

class ClusterFollower {
 public:
  // Errors: a host whose endpoint is not kTcp.
  static Result<std::unique_ptr<ClusterFollower>> Start(ClusterFollowerOptions options);
  ~ClusterFollower();

  std::vector<ClusterHost> Rows() const;
  // Host `index` as given (for opening its full view).
  const ClusterTarget& TargetOf(std::size_t index) const { return options_.hosts.at(index); }

 private:
  struct Host;
  explicit ClusterFollower(ClusterFollowerOptions options);
  void Connector();
  void Pump();

  ClusterFollowerOptions options_;
  std::vector<std::unique_ptr<Host>> hosts_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::thread> connectors_;
  std::thread pump_;
  int wake_pipe_[2] = {-1, -1};  // tells the pump that it must stop
  int epoll_fd_ = -1;            // the wake pipe and every connected client's notify_fd
};

}  // namespace neuronmon::client
