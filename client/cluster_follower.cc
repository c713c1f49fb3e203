#include "client/cluster_follower.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <random>

#include "proto/common/terminal_text.h"

namespace neuronmon::client {
namespace {

using Steady = std::chrono::steady_clock;

constexpr std::size_t kMaxText = 200;  // host-controlled strings kept for display

std::string Clean(std::string_view text) { return SanitizeForTerminal(text.substr(0, kMaxText)); }

// A host's row after its welcome: up, named by the instance.
void RowConnected(const v1::Inventory& inv, ClusterHost& row) {
  row.state = HostState::kUp;
  row.error.clear();
  const std::string& name = !inv.instance_info().instance_name().empty()
                                ? inv.instance_info().instance_name()
                                : inv.instance_info().instance_id();
  row.name = name.empty() ? row.address : Clean(name);
  row.instance_type = Clean(inv.instance_info().instance_type());
  row.devices = inv.hardware_info().neuron_device_count();
}

// A host's row after a report: its summary and the instance's verdict, when it has them.
void RowReport(const v1::Report& r, ClusterHost& row) {
  ++row.reports;
  row.bytes += r.ByteSizeLong();
  if (!r.has_host_summary()) return;
  row.has_summary = true;
  row.summary = r.host_summary();
  row.summary.set_job(Clean(row.summary.job()));
  row.summary.set_unavailable(Clean(row.summary.unavailable()));
  row.verdict = v1::Finding{};
  for (const v1::Finding& f : r.findings()) {
    if (f.subject() != "instance") continue;
    row.verdict = f;
    row.verdict.set_summary(Clean(f.summary()));
    row.verdict.set_straggler(Clean(f.straggler()));
    if (f.has_hang()) row.verdict.mutable_hang()->set_stuck_rank(Clean(f.hang().stuck_rank()));
    row.verdict.clear_advice();
    break;
  }
}

// What one event from a host's client changes in its row.
void UpdateRow(const Event& e, ClusterHost& row) {
  switch (e.kind) {
    case Event::Kind::kConnected:
      RowConnected(e.welcome.inventory(), row);
      break;
    case Event::Kind::kReport:
      RowReport(e.report, row);
      break;
    case Event::Kind::kDisconnected:
      row.state = HostState::kDown;
      row.error = Clean(e.text);
      break;
    case Event::Kind::kError:
      row.error = Clean(e.error.message());
      break;
    default:
      break;
  }
}

}  // namespace

v1::Subscribe ClusterSubscription(double period_seconds) {
  v1::Subscribe s;
  v1::GroupSubscription* g = s.add_groups();
  g->set_group(v1::GROUP_HOST_SUMMARY);
  g->set_period_ns(static_cast<std::uint64_t>(std::max(0.0, period_seconds) * 1e9));
  return s;
}

struct ClusterFollower::Host {
  const ClusterTarget* target;  // in options_.hosts, which outlives it
  ClusterHost row;
  std::unique_ptr<Client> client;  // set once the first connection succeeded; never reset
  bool connecting = false;
  Steady::time_point next_attempt{};
  Nanos backoff{0};
  std::minstd_rand random;
};

ClusterFollower::ClusterFollower(ClusterFollowerOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<ClusterFollower>> ClusterFollower::Start(ClusterFollowerOptions options) {
  std::unique_ptr<ClusterFollower> f(new ClusterFollower(std::move(options)));
  for (const ClusterTarget& target : f->options_.hosts) {
    const std::string& address = target.address;
    if (target.endpoint.kind != Endpoint::Kind::kTcp) {
      return Status::InvalidArgument(address + ": a cluster view follows TCP daemons only");
    }
    auto h = std::make_unique<Host>();
    h->target = &target;
    h->row.address = address;
    h->row.name = address;
    h->backoff = f->options_.initial_backoff;
    h->random.seed(static_cast<std::uint32_t>(std::hash<std::string>{}(address)));
    f->hosts_.push_back(std::move(h));
  }
  if (::pipe2(f->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::Internal("pipe: cannot create the follower's wake-up pipe");
  }
  // The pump waits on every connected client at once: an epoll set, so a report costs the pump
  // one ready descriptor, not a scan of every host's.
  f->epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.ptr = nullptr;
  if (f->epoll_fd_ < 0 || ::epoll_ctl(f->epoll_fd_, EPOLL_CTL_ADD, f->wake_pipe_[0], &wake) != 0) {
    return Status::Internal("epoll: cannot create the follower's event set");
  }
  const std::size_t n = std::clamp<std::size_t>(f->options_.connectors, 1, 64);
  for (std::size_t i = 0; i < std::min(n, f->hosts_.size()); ++i) {
    f->connectors_.emplace_back([p = f.get()] { p->Connector(); });
  }
  f->pump_ = std::thread([p = f.get()] { p->Pump(); });
  return f;
}

ClusterFollower::~ClusterFollower() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (wake_pipe_[1] >= 0) (void)!::write(wake_pipe_[1], "x", 1);
  for (std::thread& t : connectors_) t.join();
  if (pump_.joinable()) pump_.join();
  hosts_.clear();  // stops every client
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void ClusterFollower::Connector() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    Host* due = nullptr;
    Steady::time_point earliest = Steady::time_point::max();
    const Steady::time_point now = Steady::now();
    for (const auto& h : hosts_) {
      if (h->client || h->connecting) continue;
      if (h->next_attempt <= now) {
        due = h.get();
        break;
      }
      earliest = std::min(earliest, h->next_attempt);
    }
    if (due == nullptr) {
      if (earliest == Steady::time_point::max()) {
        wake_.wait(lock);  // nothing left to connect (a failure wakes us)
      } else {
        wake_.wait_until(lock, earliest);
      }
      continue;
    }
    due->connecting = true;
    ClientOptions co;
    co.client_name = options_.client_name;
    co.endpoint = due->target->endpoint;
    co.token = due->target->token;
    co.subscribe = ClusterSubscription(options_.period_seconds);
    co.connect_timeout = options_.connect_timeout;
    co.handshake_timeout = options_.connect_timeout;
    co.initial_backoff = options_.initial_backoff;
    co.max_backoff = options_.max_backoff;
    co.max_queued_events = 64;
    co.max_queued_bytes = 1 << 20;
    lock.unlock();
    Result<std::unique_ptr<Client>> c = Client::Connect(std::move(co));
    lock.lock();
    due->connecting = false;
    if (c.ok()) {
      due->client = std::move(*c);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = due;
      (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, due->client->notify_fd(), &ev);
    } else {
      due->row.state = HostState::kDown;
      due->row.error = Clean(c.status().message());
      const double unit = std::uniform_real_distribution<double>(0, 1)(due->random);
      const Nanos wait = JitteredBackoff(due->backoff, unit);
      due->next_attempt = Steady::now() + wait;
      due->backoff = std::min(options_.max_backoff, due->backoff * 2);
      wake_.notify_all();
    }
  }
}

void ClusterFollower::Pump() {
  std::vector<epoll_event> ready(256);
  Steady::time_point next_pass{};
  while (true) {
    {
      // Reports of hundreds of hosts arrive spread over each period: taking them in batches
      // (at most one pass per pump_interval) saves a wake-up per report.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_until(lock, next_pass, [this] { return stopping_; });
      if (stopping_) return;
    }
    const int n = ::epoll_wait(epoll_fd_, ready.data(), static_cast<int>(ready.size()), 1000);
    if (n < 0 && errno != EINTR) return;
    for (int i = 0; i < n; ++i) {
      if (ready[static_cast<std::size_t>(i)].data.ptr == nullptr) {  // stop, or a new client
        char buf[64];
        while (::read(wake_pipe_[0], buf, sizeof buf) > 0) {
        }
        continue;
      }
      next_pass = Steady::now() + options_.pump_interval;
      Host& h = *static_cast<Host*>(ready[static_cast<std::size_t>(i)].data.ptr);
      while (std::optional<Event> e = h.client->Next(Nanos(0))) {
        std::lock_guard<std::mutex> lock(mutex_);
        UpdateRow(*e, h.row);
      }
    }
  }
}

std::vector<ClusterHost> ClusterFollower::Rows() const {
  std::vector<ClusterHost> rows;
  std::lock_guard<std::mutex> lock(mutex_);
  const Steady::time_point now = Steady::now();
  rows.reserve(hosts_.size());
  for (const auto& h : hosts_) {
    rows.push_back(h->row);
    if (h->row.state != HostState::kDown) continue;
    std::optional<Steady::time_point> retry;
    if (h->client) {
      retry = h->client->next_retry();
    } else if (!h->connecting) {
      retry = h->next_attempt;
    }
    if (retry) {
      rows.back().retry_in_seconds =
          std::max(0.0, std::chrono::duration<double>(*retry - now).count());
    }
  }
  return rows;
}

}  // namespace neuronmon::client
