// The abusers: soak's hostile load against one daemon (bench/README.md, "Soak"). StreamAbuser
// keeps --clients stream connections cycling through hostile behaviours on one epoll thread;
// MetricsAbuser holds --metrics-connections /metrics connections that are idle, trickle a header,
// send oversized headers or never read. Each owns its sockets and closes them when Run returns.
// Each is driven by one thread, in Run; tally() may be called from any other thread (the tally is
// guarded by the abuser's mutex).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bench/soak/options.h"
#include "proto/common/unique_fd.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::soak {

// ---------------------------------------------------------------------------------------------
// The abusive stream population.

enum class Behaviour { kSlowReader, kSilent, kGarbage, kSubscribeFlood, kResume, kNoSubscribe };
inline constexpr std::size_t kBehaviours = 6;
inline constexpr std::array<const char*, kBehaviours> kBehaviourNames = {
    "slow-reader", "silent", "garbage", "subscribe-flood", "resume", "no-subscribe"};

struct StreamTally {
  using PerBehaviour = std::array<std::uint64_t, kBehaviours>;
  PerBehaviour started{}, closed_by_daemon{}, ended_by_soak{};
  PerBehaviour overran{};  // the daemon left it open past its deadline plus kSlack
  std::map<std::string, std::uint64_t> errors;   // Error frames received, by code
  std::map<std::string, std::uint64_t> notices;  // Notices received, by kind (gaps by reason)
  std::map<std::string, std::uint64_t> connect_failures;  // by errno text
  std::uint64_t welcomes = 0, reports = 0, bytes_read = 0, sends_blocked = 0, bad_frames = 0;
  std::uint64_t connected = 0;  // now
};

struct AbusiveClient {
  UniqueFd fd;
  Behaviour behaviour = Behaviour::kSlowReader;
  bool reads_fast = false;      // reads whatever arrives; otherwise a few KB every few seconds
  bool must_be_closed = false;  // the daemon must close it before close_at
  std::string unsent;           // the rest of a frame the socket did not take
  wire::FrameDecoder decoder{wire::kDefaultOutboundMaxFrame};
  Steady::time_point next_action{};
  Steady::time_point close_at{};
};

// One epoll thread drives every abusive client. Not thread-safe except tally().
class StreamAbuser {
 public:
  StreamAbuser(std::string socket_path, int clients, std::uint64_t seed);

  // Runs until `phase` is kStopped; while kDraining it opens and sends nothing, only reads.
  void Run(const std::atomic<Phase>& phase);
  StreamTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void Act(AbusiveClient& c, Steady::time_point now);
  void Open(AbusiveClient& c, Steady::time_point now);
  void Begin(AbusiveClient& c, Steady::time_point now);
  void OnEvent(AbusiveClient& c, std::uint32_t events);
  bool Read(AbusiveClient& c, std::size_t max_bytes);
  void Decode(AbusiveClient& c, std::string_view input);
  void Count(const v1::Envelope& e);
  void Send(AbusiveClient& c, std::string bytes);
  void End(AbusiveClient& c, bool by_daemon);

  const std::string socket_path_;
  Rng rng_;
  UniqueFd epoll_;
  std::vector<AbusiveClient> clients_;  // never resized: epoll events carry indexes
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  mutable std::mutex mu_;  // guards tally_ (the loop holds it while it works)
  StreamTally tally_;
};

// ---------------------------------------------------------------------------------------------
// The abusive /metrics client.

enum class MetricsAbuse { kIdle, kSlowloris, kHugeHeaders, kNeverReads };

struct MetricsTally {
  std::uint64_t connections = 0, closed_by_daemon = 0, ended_by_soak = 0, overran = 0;
  std::uint64_t open = 0;                                 // now
  std::map<std::string, std::uint64_t> connect_failures;  // by errno text
  std::map<int, std::uint64_t> statuses;                  // HTTP status of replies it read
};

struct MetricsConnection {
  UniqueFd fd;
  MetricsAbuse abuse = MetricsAbuse::kIdle;
  bool must_be_closed = false;  // by the request timeout
  bool status_seen = false;
  std::string unsent;
  Steady::time_point next_action{};
  Steady::time_point close_at{};
};

// Holds --metrics-connections connections open, each idle, trickling a header (slowloris),
// sending oversized headers, or pipelining requests it never reads; reopens what is closed.
class MetricsAbuser {
 public:
  MetricsAbuser(std::uint16_t port, int connections, std::uint64_t seed)
      : port_(port), rng_(seed), connections_(static_cast<std::size_t>(connections)) {}

  // Runs until `phase` leaves kRunning.
  void Run(const std::atomic<Phase>& phase);
  MetricsTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void Act(MetricsConnection& c, Steady::time_point now);
  void Open(MetricsConnection& c, Steady::time_point now);
  void OnEvents(MetricsConnection& c, short revents);
  void End(MetricsConnection& c, bool by_daemon);

  const std::uint16_t port_;
  Rng rng_;
  std::vector<MetricsConnection> connections_;
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  mutable std::mutex mu_;  // guards tally_
  MetricsTally tally_;
};

}  // namespace neuronmon::soak
