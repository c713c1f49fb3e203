#include "tests/integration/hostile_daemon.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "proto/wire/frame_codec.h"

namespace neuronmon::testing {
namespace {

void SendAll(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace

HostileDaemon::HostileDaemon(Script script) : script_(std::move(script)) {
  static std::atomic<int> counter{0};
  dir_ = std::filesystem::temp_directory_path() /
         ("neuronmon-hostile-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir_);
  socket_ = (dir_ / "d.sock").string();
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof addr.sun_path - 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 16) != 0 || ::pipe(wake_) != 0) {
    throw std::runtime_error("hostile daemon: cannot listen on " + socket_);
  }
  thread_ = std::thread([this] { Serve(); });
}

HostileDaemon::~HostileDaemon() {
  stop_ = true;
  (void)!::write(wake_[1], "x", 1);
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<v1::Subscribe> HostileDaemon::subscribes() const {
  std::lock_guard lock(mu_);
  return subscribes_;
}

void HostileDaemon::Serve() {
  for (int connection = 0; !stop_; ++connection) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(p, 2, -1) <= 0 || (p[1].revents & POLLIN)) return;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) Converse(fd, connection);
  }
}

// Reads frames until the Hello has come (recording Subscribes), then runs the script; afterwards
// drains what the client sends (more Subscribes) until it closes or the daemon is stopped.
void HostileDaemon::Converse(int fd, int connection) {
  wire::FrameDecoder decoder(wire::kDefaultInboundMaxFrame);
  bool hello = false, scripted = false;
  Conversation talk;
  talk.connection = connection;
  talk.send = [fd](const std::string& bytes) { SendAll(fd, bytes); };
  char buf[65536];
  while (!stop_) {
    if (hello && !scripted) {
      scripted = true;
      script_(talk);
      if (talk.hang_up) break;
    }
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(p, 2, hello ? 100 : 5000) < 0 || (p[1].revents & POLLIN)) break;
    if (!(p[0].revents & (POLLIN | POLLHUP))) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    std::string_view in(buf, static_cast<std::size_t>(n));
    v1::Envelope e;
    while (!in.empty() && decoder.Decode(in, e) == wire::FrameDecoder::Outcome::kFrame) {
      hello = hello || e.has_hello();
      if (e.has_subscribe()) {
        std::lock_guard lock(mu_);
        subscribes_.push_back(e.subscribe());
      }
    }
  }
  ::close(fd);
}

std::string HostileDaemon::Frame(const v1::Envelope& envelope) {
  return *wire::EncodeFrame(envelope);
}

std::string HostileDaemon::WelcomeFrame(const v1::Inventory& inventory, std::uint64_t instance_id) {
  v1::Envelope e;
  v1::Welcome* w = e.mutable_welcome();
  w->set_protocol_version(1);
  w->set_daemon_version("hostile");
  *w->mutable_inventory() = inventory;
  w->set_base_period_ns(1'000'000'000);
  w->set_instance_id(instance_id);
  return Frame(e);
}

std::string HostileDaemon::ReportFrame(const v1::Report& report) {
  v1::Envelope e;
  *e.mutable_report() = report;
  return Frame(e);
}

v1::Inventory HostileDaemon::SmallInventory() {
  v1::Inventory inv;
  inv.mutable_instance_info()->set_instance_type("trn1.2xlarge");
  inv.mutable_instance_info()->set_instance_id("i-hostile");
  inv.mutable_hardware_info()->set_neuron_device_count(1);
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(2);
  v1::Device* d = inv.add_devices();
  d->set_index(0);
  d->add_core_ids(0);
  d->add_core_ids(1);
  return inv;
}

}  // namespace neuronmon::testing
