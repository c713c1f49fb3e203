// Daemon: neuron-monitord as a process — configuration (file plus command-line overrides), the
// sampling timer, the stream server, the /metrics HTTP server, signals (SIGTERM/SIGINT stop,
// SIGHUP reloads atomically) and systemd notifications (READY, STATUS, RELOADING, STOPPING,
// WATCHDOG driven by sampler progress). The device is read on a thread of its own (ReadThread), so
// a read that hangs leaves clients served from the history while the watchdog starves. The same
// class runs in-process for clients' --standalone
// mode with listeners, signals and notifications off. Runs on one io_context thread; not
// thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/core/config/config.h"
#include "daemon/core/daemon_core.h"
#include "daemon/core/report/schedule.h"
#include "daemon/core/stats.h"
#include "daemon/server/asio.h"
#include "daemon/server/command_line.h"
#include "daemon/server/incident_saver.h"
#include "daemon/server/log.h"
#include "daemon/server/read_thread.h"
#include "daemon/server/recorder_thread.h"
#include "daemon/server/systemd.h"

namespace neuronmon::daemon {

class HttpServer;
class StreamServer;
class TlsServerContext;

// Runs neuron-monitord with `config` until it is stopped (SIGTERM, SIGINT), logging to stderr:
// SIGPIPE ignored, protobuf's parse complaints silenced, the daemon started and its io_context
// run. Returns the process's exit status (1 when it cannot start).
int RunDaemon(const CommandLine& cli, DaemonConfig config);

// Builds the backend a configuration names (MakeDaemonBackend; tests substitute their own).
using BackendFactory =
    std::function<Result<std::unique_ptr<Backend>>(const BackendOptions&, MonoTime)>;

// The daemon's backend: the recording `options.replay` names (ReplayBackend), else the device
// (MakeBackend).
Result<std::unique_ptr<Backend>> MakeDaemonBackend(const BackendOptions& options, MonoTime start);

struct DaemonMode {
  bool listen = true;   // bind the configured listeners
  bool signals = true;  // handle SIGTERM, SIGINT, SIGHUP
  bool notify = true;   // talk to systemd
  bool record = true;   // keep the archive when the config says so
  BackendFactory make_backend = MakeDaemonBackend;
};

class Daemon {
 public:
  Daemon(asio::io_context& io, CommandLine cli, DaemonConfig config, Logger& log, DaemonMode mode);
  ~Daemon();

  // Builds the backend, binds listeners, takes the first sample and starts the timers. Errors
  // (device, socket already served by another daemon, ...) are fatal at startup.
  Status Start();
  // Serves an already-connected socket end (embedding).
  void ServeConnected(int fd);
  // Graceful stop: shutdown Notice to clients, flush (bounded), remove the socket; `done` runs on
  // the io_context when finished.
  void Stop(std::function<void()> done);
  // SIGHUP: reload the configuration; an invalid one is reported and the old one kept.
  void Reload();
  // One of the daemon's own events (started, stale, current, reloaded, stopping) or an incident,
  // into the core's event log, and to the clients subscribed to events.
  void AddEvent(v1::Event event);

  const DaemonConfig& config() const { return config_; }
  const DaemonStats& stats() const { return stats_; }
  DaemonCore& core() { return *core_; }
  std::vector<std::string> listening_on() const;
  // The bound /metrics port (an ephemeral one when the config says port 0); nullopt when the
  // metrics listener is off or not started.
  std::optional<std::uint16_t> metrics_port() const;

 private:
  Status Listen();
  Status ServeMetrics(const std::string& token);
  void ArmSampler();
  void OnSampleTimer();
  // The first sample, taken on this thread so that clients always find one.
  Status SampleNow();
  void OnReading(Reading& reading, std::uint64_t generation, MonoTime now, WallTime wall,
                 std::exception_ptr error);
  void RecordSample(MonoTime started, WallTime wall);
  // Counts the snapshots the history dropped to keep within its byte budget; warns once.
  void NoteHistoryBudget();
  // The first busy-time reading clamped to 100 % (a foreign or torn nc_time_in_use): said once.
  void NoteClampedBusyReadings();
  // Starts (or stops) the archive writer as config_.recorder says.
  void StartRecorder();
  void ArchiveNewest();
  // The archive's header for this daemon (recorder and incident bundles).
  v1::ArchiveHeader MakeArchiveHeader() const;
  // Starts (or stops) watching for incidents as config_.incidents says.
  void StartIncidents();
  // The job accounting's options, and its file: read at start, written when due (SaveJobs).
  void StartJobs();
  void SaveJobs(MonoTime now, bool force);
  void ArmWatchdog(std::chrono::microseconds interval);
  void WaitForSignal();
  void UpdateStatus();

  asio::io_context& io_;
  CommandLine cli_;
  DaemonConfig config_;
  Logger& log_;
  DaemonMode mode_;
  Notifier notifier_;
  DaemonStats stats_;
  std::unique_ptr<DaemonCore> core_;
  std::unique_ptr<StreamServer> server_;
  std::unique_ptr<HttpServer> http_;  // /metrics; null when off
  // The listeners' TLS at start-up (tls_context.h); SIGHUP builds new ones for new connections.
  std::shared_ptr<const TlsServerContext> tcp_tls_;
  std::shared_ptr<const TlsServerContext> metrics_tls_;
  std::unique_ptr<SampleSchedule> schedule_;
  asio::steady_timer sample_timer_;
  asio::steady_timer watchdog_timer_;
  asio::signal_set signals_;
  MonoTime read_started_;
  MonoTime started_;                    // sampling began (the probes' start-up grace)
  bool read_stalled_ = false;           // clients were told the read in flight is overdue
  bool history_budget_logged_ = false;  // the history outgrew max_history_bytes: said once
  bool clamp_logged_ = false;           // a busy-time reading was clamped: said once
  std::unique_ptr<ReadThread> reader_;
  std::unique_ptr<RecorderThread> recorder_;  // null: not recording
  std::uint64_t recorded_event_seq_ = 0;      // the newest event given to the recorder
  std::unique_ptr<IncidentSaver> incidents_;
  std::string jobs_file_;  // "": jobs are not saved (an embedded daemon, a replay)
  MonoTime jobs_saved_{};
  std::uint64_t jobs_ended_ = 0;  // jobs ended at the last sample
  bool stopping_ = false;
  LogRateLimiter log_limiter_{std::chrono::seconds(10)};
  std::string last_status_;
};

LogSeverity SeverityOf(LogLevel level);

}  // namespace neuronmon::daemon
