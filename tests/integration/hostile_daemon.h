// Test helper: a fake neuron-monitord that misbehaves on purpose, for testing what clients do with
// a daemon they cannot trust. It serves a temp unix socket from its own thread, one connection at
// a time: reads the client's Hello (and records its Subscribes), then follows its script — a
// Welcome of its choosing, then reports, garbage, a flood or silence. Stopped (thread joined,
// socket removed) in the destructor.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "neuronmon/v1/envelope.pb.h"

namespace neuronmon::testing {

class HostileDaemon {
 public:
  // What the daemon does after the client's Hello, on connection number `connection` (0, 1, ...).
  // It writes with `send(bytes)`; afterwards the connection stays open (and silent) until the
  // client closes it or the test ends, unless the script sets `hang_up`.
  struct Conversation {
    int connection = 0;
    std::function<void(const std::string& bytes)> send;
    bool hang_up = false;
  };
  using Script = std::function<void(Conversation&)>;

  explicit HostileDaemon(Script script);
  ~HostileDaemon();

  const std::string& socket_path() const { return socket_; }
  // The Subscribe messages received so far, over every connection.
  std::vector<v1::Subscribe> subscribes() const;

  // Frames for scripts.
  static std::string Frame(const v1::Envelope& envelope);
  static std::string WelcomeFrame(const v1::Inventory& inventory, std::uint64_t instance_id = 7);
  static std::string ReportFrame(const v1::Report& report);
  // A small, valid inventory (one trn1 device, two cores) to build on.
  static v1::Inventory SmallInventory();

 private:
  void Serve();
  void Converse(int fd, int connection);

  Script script_;
  std::filesystem::path dir_;
  std::string socket_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<v1::Subscribe> subscribes_;
  std::thread thread_;
};

}  // namespace neuronmon::testing
