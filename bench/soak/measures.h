// The measures: what soak samples while the abusers run (bench/README.md, "Soak"). Scraper fetches
// /metrics every 5 s as Prometheus would and keeps the daemon's own counters from the last scrape;
// TopClient is a well-behaved neuron-top-like subscriber measuring delivery lag (receipt minus the
// report's wall time) and checking that no seq is skipped without a gap notice; Watch samples the
// daemon's RSS and open fds once a second and notices when it dies. Scraper and TopClient each own
// their connection and are driven by one thread, in Run; their tally() may be called from any
// other thread (guarded by the object's mutex). Watch runs on soak's main thread.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/soak/daemon_process.h"
#include "bench/soak/options.h"
#include "proto/wire/frame_codec.h"

namespace neuronmon::soak {

// ---------------------------------------------------------------------------------------------
// The well-behaved scraper.

struct ScrapeTally {
  std::uint64_t ok = 0;
  std::map<std::string, std::uint64_t> failures;  // by what went wrong
  std::vector<double> ms;                         // successful scrapes' durations
  std::map<std::string, double> daemon_counters;  // the daemon's own series, last scrape
};

// Fetches /metrics every kScrapeInterval, as Prometheus would, on a new connection each time.
class Scraper {
 public:
  explicit Scraper(std::uint16_t port) : port_(port) {}

  // Runs until `phase` leaves kRunning.
  void Run(const std::atomic<Phase>& phase);
  // One scrape, counted like the others.
  void ScrapeOnce();
  ScrapeTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  const std::uint16_t port_;
  mutable std::mutex mu_;  // guards tally_
  ScrapeTally tally_;
};

// ---------------------------------------------------------------------------------------------
// The well-behaved neuron-top-like client.

struct TopTally {
  std::vector<double> lags_ms;         // receipt minus report wall time, each live report in order
  std::vector<std::int64_t> walls_ns;  // every live report's wall time, in order
  // The first live report of a connection is the newest sample when it subscribed, whatever its
  // age, so it is counted in `firsts` and not in the lag.
  std::uint64_t reports = 0, firsts = 0, replayed = 0, gaps = 0, missing = 0, out_of_order = 0;
  std::uint64_t connections = 0, errors = 0;
  bool shutdown_notice = false;
  std::string last_error;
};

// Subscribes to neuron-top's groups at the base period, so every seq carries a report, and reads
// promptly. Reconnects (resuming after the last seq) if it loses the daemon.
class TopClient {
 public:
  TopClient(std::string socket_path, Nanos period)
      : socket_path_(std::move(socket_path)), period_(period) {}

  // Runs until `phase` is kStopped.
  void Run(const std::atomic<Phase>& phase);
  TopTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void Converse(const std::atomic<Phase>& phase);
  bool ReadOnce(int fd, wire::FrameDecoder& decoder);
  void OnEnvelope(const v1::Envelope& e, std::int64_t received_ns);

  const std::string socket_path_;
  const Nanos period_;
  std::vector<char> buffer_ = std::vector<char>(1 << 20);
  std::uint64_t last_seq_ = 0;
  bool first_live_ = true;  // the next live report is the connection's first
  mutable std::mutex mu_;   // guards tally_
  TopTally tally_;
};

// ---------------------------------------------------------------------------------------------
// Watching the daemon.

struct ProcSample {
  double rss_mib = 0;
  double fds = 0;
  double soak_connections = 0;  // the connections soak held open at the time (for the fd figure)
};

struct Watched {
  ProcSample start, end, peak;      // start: after the warm-up; end: the last seconds
  std::optional<std::string> died;  // how, when the daemon died during the run
  bool interrupted = false;         // a signal stopped the run early
  double seconds = 0;               // how long the load ran
};

// What the watcher asks the load about: a progress line's tail, and how many connections soak
// holds open now.
struct LoadProbes {
  std::function<std::string()> progress;
  std::function<double()> open_connections;
};

// Once a second until --duration has passed: is the daemon alive, what are its RSS and fds, and
// (with --progress) a line every 30 s. A signal in `stop_signals` (blocked) ends it early. The
// start and end figures are medians over a window (a third of the measured time, at most a
// minute): slow clients' queues, which the daemon lets grow to limits.max_queued_bytes_total by
// design, swing RSS by megabytes from one second to the next.
Watched Watch(DaemonProcess& daemon, const SoakOptions& o, const sigset_t& stop_signals,
              LoadProbes probes);

}  // namespace neuronmon::soak
