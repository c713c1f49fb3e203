#include "daemon/server/daemon.h"

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "daemon/core/archive/replay.h"
#include "daemon/core/jobs/job_store.h"
#include "daemon/core/probes.h"
#include "daemon/server/http_server.h"
#include "daemon/server/stream_server.h"
#include "daemon/server/tls_context.h"
#include "proto/common/duration.h"
#include "proto/common/file_reader.h"
#include "proto/common/socket_path.h"
#include "proto/common/terminal_text.h"
#include "proto/wire/protobuf_logs.h"

namespace neuronmon::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// The metrics endpoint's options: the config's, with what only the running daemon knows.
HttpServerOptions MetricsServerOptions(const DaemonConfig& c, const std::string& token) {
  HttpServerOptions o = c.metrics;
  o.handler.token = token;
  o.handler.version = NEURONMON_VERSION;
  o.write_timeout = c.stream.write_timeout;  // limits.write_timeout bounds every write
  // An /events stream is a stream client like any other: the same budgets and heartbeat.
  o.event_stream_max_bytes = c.stream.max_queue_bytes;
  o.event_streams_max_bytes_total = c.stream.max_queued_bytes_total;
  o.event_stream_heartbeat = c.stream.heartbeat_interval;
  return o;
}

}  // namespace

LogSeverity SeverityOf(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return LogSeverity::kError;
    case LogLevel::kWarn:
      return LogSeverity::kWarn;
    case LogLevel::kInfo:
      return LogSeverity::kInfo;
    case LogLevel::kDebug:
      return LogSeverity::kDebug;
  }
  return LogSeverity::kInfo;
}

Result<std::unique_ptr<Backend>> MakeDaemonBackend(const BackendOptions& options, MonoTime start) {
  if (options.replay.empty()) return MakeBackend(options, start);
  Result<std::unique_ptr<ReplayBackend>> replay =
      ReplayBackend::Open({options.replay, options.replay_from, options.speed}, start);
  if (!replay.ok()) return replay.status();
  return std::unique_ptr<Backend>(std::move(*replay));
}

int RunDaemon(const CommandLine& cli, DaemonConfig config) {
  std::signal(SIGPIPE, SIG_IGN);
  wire::SilenceProtobufParseLogs();
  Logger log;
  asio::io_context io;
  Daemon daemon(io, cli, std::move(config), log, DaemonMode{});
  if (Status started = daemon.Start(); !started.ok()) {
    log.Error(started.message());
    return 1;
  }
  // The last resort: every handler catches what it can throw; should one not, log it and go on
  // serving rather than std::terminate.
  for (;;) {
    try {
      io.run();
      return 0;
    } catch (const std::exception& e) {
      log.Error(std::string("internal error: ") + e.what());
    }
  }
}

Daemon::Daemon(asio::io_context& io, CommandLine cli, DaemonConfig config, Logger& log,
               DaemonMode mode)
    : io_(io),
      cli_(std::move(cli)),
      config_(std::move(config)),
      log_(log),
      mode_(mode),
      sample_timer_(io),
      watchdog_timer_(io),
      signals_(io) {}

Daemon::~Daemon() = default;

namespace {

// After this many periods without a reading, clients are told the figures are stale.
constexpr int kStallNotice = 3;

// Clients need a descriptor each, and a real host's driver tree is sampled through ~450 kept
// descriptors per device: take the whole hard limit (the unit sets it) rather than the soft 1024.
void RaiseFileLimit(Logger& log) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) log.Warn("cannot raise the open-file limit");
}

}  // namespace

Status Daemon::Start() {
  if (mode_.listen) RaiseFileLimit(log_);
  log_.SetThreshold(SeverityOf(config_.log_level));
  const MonoTime now = Clock::now();
  Result<std::unique_ptr<Backend>> backend = mode_.make_backend(config_.backend, now);
  if (!backend.ok()) return backend.status();
  std::random_device random;
  const std::uint64_t instance_id = (static_cast<std::uint64_t>(random()) << 32) | random();
  // A replay brings its own host sample; a live device gets this host's.
  HostReader host;
  // vcpu_usage and memory_info from the same process table as the rest (proc_root: a host's /proc
  // mounted elsewhere, as in a container).
  if (config_.backend.replay.empty()) {
    host = [root = config_.backend.host.proc_root] { return ReadHost(root); };
  }
  core_ = std::make_unique<DaemonCore>(
      CoreOptions{config_.period, config_.history_retention, NEURONMON_VERSION, instance_id,
                  config_.max_history_bytes},
      std::move(*backend), std::move(host));
  core_->SetEventOptions(config_.events);
  StartJobs();
  std::string token;
  if (!config_.auth_token_file.empty()) {
    Result<std::string> t = ReadSecretFile(config_.auth_token_file);
    if (!t.ok()) return t.status();
    token = *t;
    log_.Info("auth token read from " + config_.auth_token_file);
  }
  server_ = std::make_unique<StreamServer>(io_, *core_, log_, stats_, config_.stream, token);
  if (mode_.listen) {
    Result<ListenerTls> tls = MakeListenerTls(config_);
    if (!tls.ok()) return tls.status();
    tcp_tls_ = tls->tcp;
    metrics_tls_ = tls->metrics;
    for (const std::string& w : PlaintextWarnings(config_)) log_.Warn(w);
    Status s = Listen();
    if (!s.ok()) return s;
  }
  if (mode_.listen && config_.listeners.metrics) {
    Status s = ServeMetrics(token);
    if (!s.ok()) return s;
  }
  StartRecorder();
  StartIncidents();
  Status sampled = SampleNow();
  if (!sampled.ok()) return sampled;
  reader_ = std::make_unique<ReadThread>(
      [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); });
  schedule_ = std::make_unique<SampleSchedule>(now, config_.period);
  started_ = now;
  (void)schedule_->OnWake(now);
  ArmSampler();
  if (mode_.signals) WaitForSignal();
  if (mode_.notify) {
    (void)notifier_.Ready();
    if (auto interval = notifier_.WatchdogInterval()) ArmWatchdog(*interval);
  }
  const std::string sampling =
      "sampling " + core_->Describe() + " every " + FormatDuration(config_.period);
  log_.Info(sampling);
  AddEvent(DaemonEvent("started", sampling));
  for (const std::string& l : server_->listening_on()) log_.Info("listening on " + l);
  UpdateStatus();
  return Status::Ok();
}

Status Daemon::Listen() {
  bool have_unix = false;
  Result<std::vector<ListenSocket>> passed = ListenFds();
  if (!passed.ok()) return passed.status();
  for (const ListenSocket& s : *passed) {
    if (s.kind == ListenSocketKind::kOther) {
      log_.Warn("ignoring socket-activation fd " + std::to_string(s.fd) + " (" + s.name +
                "): not a listening stream socket");
      continue;
    }
    Status st = server_->AdoptListener(s.fd, LoopbackTcpRequiresToken(config_), tcp_tls_,
                                       config_.listeners.tcp_allow_plaintext);
    if (!st.ok()) return st;
    have_unix = have_unix || s.kind == ListenSocketKind::kUnixStream;
  }
  const UnixListenerConfig& u = config_.listeners.unix_socket;
  if (u.enabled && !have_unix) {
    UnixListenOptions options = u.options;
    if (options.path.empty()) options.path = DaemonSocketPath(CurrentSocketEnvironment());
    Status st = server_->ListenUnix(options);
    if (!st.ok()) return st;
  }
  if (config_.listeners.tcp) {
    const ListenAddress& a = *config_.listeners.tcp;
    Status st = server_->ListenTcp(a.host, a.port, TcpRequiresToken(config_), tcp_tls_);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status Daemon::ServeMetrics(const std::string& token) {
  const ListenAddress& a = *config_.listeners.metrics;
  http_ =
      std::make_unique<HttpServer>(io_, *core_, stats_, log_, MetricsServerOptions(config_, token));
  Status st = http_->Listen(a.host, a.port, !IsLoopback(a), metrics_tls_);
  if (!st.ok()) return st;
  log_.Info("serving /metrics on " + http_->url());
  return Status::Ok();
}

void Daemon::ServeConnected(int fd) { server_->ServeConnected(fd, Transport::kEmbedded); }

void Daemon::ArmSampler() {
  sample_timer_.expires_at(Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(schedule_->next_deadline().time_since_epoch())));
  sample_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_) OnSampleTimer();
  });
}

void Daemon::OnSampleTimer() {
  const MonoTime now = Clock::now();
  const SampleSchedule::Tick tick = schedule_->OnWake(now);
  if (tick.missed > 0) {
    stats_.missed_ticks += tick.missed;
    if (auto d = log_limiter_.Admit("missed_ticks", now); d.allowed) {
      log_.Warn(WithSuppressedCount(
          "sampler fell behind: skipped " + std::to_string(tick.missed) + " tick(s)",
          d.suppressed));
    }
  }
  server_->Heartbeat(now);
  if (http_) http_->PumpEvents();  // heartbeats, timeouts and lifetimes of /events streams
  ArmSampler();
  if (reader_->busy()) {
    // The previous read has not returned (a hung sysfs file, say): skip this tick and keep
    // serving the history; clients hear of it once per episode.
    ++stats_.missed_ticks;
    const Nanos pending = now - read_started_;
    stats_.read_pending_seconds = std::chrono::duration<double>(pending).count();
    if (!read_stalled_ && pending >= kStallNotice * config_.period) {
      read_stalled_ = true;
      const std::string text = "reading " + core_->Describe() + " has not returned for " +
                               FormatElapsed(pending) + "; figures are stale";
      log_.Error(text);
      v1::Notice notice;
      notice.set_kind(v1::NOTICE_KIND_HEALTH);
      notice.set_text(text);
      server_->NoticeAll(notice);
      AddEvent(DaemonEvent("stale", text));
    }
    return;
  }
  read_started_ = now;
  auto reading = std::make_shared<Reading>();
  ReadJob job = core_->NextRead();
  const std::uint64_t generation = job.generation;
  const WallTime wall = std::chrono::system_clock::now();
  // The process scan's step (a real host's) follows the read, so its budget delays no report.
  std::function<void()> after = [job] { job.AfterRead(); };
  reader_->Submit([reading, job = std::move(job), now] { *reading = job.Run(now); },
                  [this, reading, generation, now, wall](std::exception_ptr error) {
                    OnReading(*reading, generation, now, wall, error);
                  },
                  std::move(after));
}

void Daemon::OnReading(Reading& reading, std::uint64_t generation, MonoTime now, WallTime wall,
                       std::exception_ptr error) {
  if (stopping_) return;
  const MonoTime done = Clock::now();
  stats_.read_pending_seconds = 0;
  if (read_stalled_) {
    read_stalled_ = false;
    v1::Notice notice;
    notice.set_kind(v1::NOTICE_KIND_HEALTH);
    notice.set_text("reading the device resumed after " + FormatElapsed(done - now));
    server_->NoticeAll(notice);
    AddEvent(DaemonEvent("current", notice.text()));
    log_.Info(notice.text());
  }
  try {
    if (error) std::rethrow_exception(error);
    if (core_->Append(std::move(reading), generation, now, wall) == 0) return;  // replaced
  } catch (const std::exception& e) {
    // A sample that could not be taken (std::bad_alloc, say) is skipped, not fatal.
    if (auto d = log_limiter_.Admit("sample_error", done); d.allowed) {
      log_.Error(WithSuppressedCount(std::string("sample failed: ") + e.what(), d.suppressed));
    }
    ++stats_.missed_ticks;
    return;
  }
  NoteHistoryBudget();
  stats_.sources = core_->sources();
  NoteClampedBusyReadings();
  RecordSample(now, wall);
  server_->Broadcast();
  if (http_) http_->PumpEvents();
  UpdateStatus();
}

void Daemon::NoteClampedBusyReadings() {
  const std::optional<SourceStats>& s = stats_.sources;
  if (clamp_logged_ || !s || s->busy_readings_clamped.value_or(0) == 0) return;
  clamp_logged_ = true;
  log_.Warn(
      "a NeuronCore's nc_time_in_use grew by more than the time between two reads; it is "
      "read as 100 % busy (counted in neuron_monitord_busy_readings_clamped_total; said "
      "once)");
}

void Daemon::NoteHistoryBudget() {
  stats_.history_evicted = core_->history_evicted();
  if (stats_.history_evicted == 0 || history_budget_logged_) return;
  history_budget_logged_ = true;
  log_.Warn("the history outgrew limits.max_history_bytes (" +
            std::to_string(config_.max_history_bytes >> 20) +
            " MiB): dropping its oldest snapshots, so it now spans less than history_retention "
            "(counted in neuron_monitord_history_evicted_total; logged once)");
}

void Daemon::StartRecorder() {
  recorder_.reset();  // writes what is queued, closes the file
  stats_.recorder_enabled = false;
  recorded_event_seq_ = core_->events().newest_seq();  // a new recording starts with new events
  if (!mode_.record || !config_.recorder.enabled || !config_.backend.replay.empty()) return;
  RecorderOptions options = config_.recorder.options;
  if (options.directory.empty()) options.directory = DefaultArchiveDirectory();
  if (options.directory.empty()) {
    log_.Warn(
        "not recording: no recorder.directory, and neither STATE_DIRECTORY, XDG_STATE_HOME "
        "nor HOME says where");
    return;
  }
  recorder_ = std::make_unique<RecorderThread>(
      options, MakeArchiveHeader(),
      [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); },
      [this](bool ok, const std::string& text) { ok ? log_.Info(text) : log_.Error(text); });
  stats_.recorder_enabled = true;
  log_.Info("recording to " + options.directory + " (at most " +
            std::to_string(options.max_bytes >> 20) + " MiB)");
}

v1::ArchiveHeader Daemon::MakeArchiveHeader() const {
  v1::ArchiveHeader header;
  header.set_daemon_version(NEURONMON_VERSION);
  header.set_description(core_->Describe());
  header.set_base_period_ns(static_cast<std::uint64_t>(config_.period.count()));
  header.set_instance_id(core_->MakeWelcome(Clock::now()).instance_id());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) header.set_hostname(host);
  header.set_recorder("neuron-monitord");
  return header;
}

void Daemon::StartIncidents() {
  if (incidents_ == nullptr) {
    incidents_ = std::make_unique<IncidentSaver>(
        [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); }, log_, stats_,
        [this](const v1::Notice& notice, const v1::Event& event) {
          AddEvent(event);
          if (!stopping_) server_->NoticeAll(notice);
        });
  }
  IncidentsConfig c = config_.incidents;
  c.enabled = c.enabled && mode_.record && config_.backend.replay.empty();
  incidents_->Configure(c);
}

void Daemon::StartJobs() {
  core_->jobs().set_options(config_.jobs.options);
  jobs_file_.clear();
  if (!mode_.record || !config_.backend.replay.empty()) return;
  if (!config_.jobs.file.empty()) {
    jobs_file_ = config_.jobs.file;
  } else if (config_.recorder.enabled) {
    // In the archive's directory (archive readers take only *.nmrec): what the daemon keeps on
    // disk goes where its recorder keeps it, in a directory it owns, and a daemon told to keep
    // nothing (--record off) saves no jobs either unless jobs.file says so.
    const std::string archive = config_.recorder.options.directory.empty()
                                    ? DefaultArchiveDirectory()
                                    : config_.recorder.options.directory;
    if (!archive.empty()) jobs_file_ = archive + "/jobs.pb";
  }
  if (jobs_file_.empty()) {
    log_.Info("jobs are not saved: no jobs.file, and no archive to keep them beside");
    return;
  }
  Status st = LoadJobFile(core_->jobs(), jobs_file_, std::chrono::system_clock::now());
  if (st.ok()) {
    log_.Info("jobs restored from " + jobs_file_ + " (" +
              std::to_string(core_->jobs().live_count()) + " live, " +
              std::to_string(core_->jobs().finished_count()) + " finished)");
  } else if (st.code() != StatusCode::kNotFound) {
    // Kept aside rather than overwritten: what it held may still be read by hand.
    const std::string aside = jobs_file_ + ".unreadable";
    const bool moved = ::rename(jobs_file_.c_str(), aside.c_str()) == 0;
    log_.Error("jobs not restored: " + st.message() + (moved ? "; moved to " + aside : "") +
               "; starting with none");
  }
}

void Daemon::SaveJobs(MonoTime now, bool force) {
  if (jobs_file_.empty() || !core_->jobs().dirty()) return;
  if (!force && now - jobs_saved_ < config_.jobs.save_interval) return;
  jobs_saved_ = now;
  if (Status st = SaveJobFile(core_->jobs(), jobs_file_); !st.ok()) {
    if (auto d = log_limiter_.Admit("jobs_save", now); d.allowed) {
      log_.Error(WithSuppressedCount("jobs not saved: " + st.message(), d.suppressed));
    }
  }
}

void Daemon::ArchiveNewest() {
  if (recorder_ == nullptr) return;
  const Snapshot* newest = core_->history().Find(core_->history().newest_seq());
  if (newest == nullptr) return;
  // The events since the last snapshot recorded: this one's, and the daemon's own before it.
  std::vector<v1::Event> events;
  for (const v1::Event* e : core_->events().After(recorded_event_seq_, archive::kMaxEntryEvents)) {
    events.push_back(*e);
  }
  recorded_event_seq_ = core_->events().newest_seq();
  recorder_->Submit(*newest, core_->inventory(), core_->Describe(), std::move(events));
  const RecorderThreadStats s = recorder_->stats();
  stats_.recorder_active = s.recorder.active;
  stats_.recorder_snapshots = s.recorder.snapshots;
  stats_.recorder_bytes_written = s.recorder.bytes_written;
  stats_.recorder_archive_bytes = s.recorder.archive_bytes;
  stats_.recorder_failures = s.recorder.failures;
  stats_.recorder_dropped = s.dropped;
}

void Daemon::RecordSample(MonoTime started, WallTime wall) {
  ArchiveNewest();
  // A job that ended is saved at once; live ones every jobs.save_interval.
  const std::uint64_t ended = core_->jobs().ended();
  SaveJobs(started, ended != jobs_ended_);
  jobs_ended_ = ended;
  incidents_->Check(*core_, wall, config_, [this] { return MakeArchiveHeader(); });
  const double took = std::chrono::duration<double>(Clock::now() - started).count();
  ++stats_.samples;
  stats_.last_sample_seconds = took;
  stats_.sample_seconds_total += took;
  stats_.last_sample_unix = std::chrono::duration<double>(wall.time_since_epoch()).count();
}

Status Daemon::SampleNow() {
  const MonoTime now = Clock::now();
  const WallTime wall = std::chrono::system_clock::now();
  try {
    core_->Sample(now, wall);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("first sample failed: ") + e.what());
  }
  RecordSample(now, wall);
  return Status::Ok();
}

void Daemon::ArmWatchdog(std::chrono::microseconds interval) {
  watchdog_timer_.expires_after(interval / 2);
  watchdog_timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    // Keep systemd's watchdog fed only while /healthz would say the daemon is alive: sampling on
    // schedule (daemon/core/probes.h), so systemd restarts it WatchdogSec after it stops.
    const ProbeInput in{.history = &core_->history(),
                        .period = core_->period(),
                        .now = Clock::now(),
                        .started = started_};
    if (Liveness(in).ok) (void)notifier_.Watchdog();
    ArmWatchdog(interval);
  });
}

void Daemon::WaitForSignal() {
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.add(SIGHUP);
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    if (signal == SIGHUP) {
      try {
        Reload();
      } catch (const std::exception& e) {
        // Whatever a reload meets, the daemon keeps its configuration and its signal handling.
        log_.Error(std::string("configuration not reloaded: ") + e.what());
        ++stats_.reload_failures;
        if (mode_.notify) (void)notifier_.Ready();
      }
      WaitForSignal();
      return;
    }
    log_.Info(std::string("received ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") + ", stopping");
    Stop([this] { io_.stop(); });
  });
}

void Daemon::AddEvent(v1::Event event) {
  core_->AddEvent(std::move(event), Clock::now(), std::chrono::system_clock::now());
  if (server_) server_->PumpEvents();
  if (http_) http_->PumpEvents();
}

void Daemon::Stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  AddEvent(DaemonEvent("stopping", "the daemon is stopping"));
  if (mode_.notify) (void)notifier_.Stopping();
  sample_timer_.cancel();
  watchdog_timer_.cancel();
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  if (http_) http_->Shutdown();
  recorder_.reset();  // the archive's last file is closed and synced
  SaveJobs(Clock::now(), /*force=*/true);
  server_->Shutdown(std::chrono::milliseconds(1500), std::move(done));
}

void Daemon::Reload() {
  if (mode_.notify) (void)notifier_.Reloading();
  log_.Info("reloading " + cli_.config_path);
  std::vector<std::string> problems;
  Result<DaemonConfig> next = ResolveConfig(cli_, &problems);
  if (!next.ok()) {
    for (const std::string& p : problems) log_.Error(p);
    log_.Error("configuration not reloaded; keeping the previous one");
    ++stats_.reload_failures;
    if (mode_.notify) (void)notifier_.Ready();
    return;
  }
  // Certificates and keys are read again (renewed files), for new connections.
  Result<ListenerTls> tls = MakeListenerTls(*next);
  if (!tls.ok()) {
    log_.Error("configuration not reloaded: " + tls.status().message());
    ++stats_.reload_failures;
    if (mode_.notify) (void)notifier_.Ready();
    return;
  }
  if (next->backend != config_.backend) {
    Result<std::unique_ptr<Backend>> backend = mode_.make_backend(next->backend, Clock::now());
    if (!backend.ok()) {
      log_.Error("configuration not reloaded: " + backend.status().message());
      ++stats_.reload_failures;
      if (mode_.notify) (void)notifier_.Ready();
      return;
    }
    core_->ReplaceBackend(std::move(*backend), Clock::now());
    if (incidents_->Reset()) {
      log_.Warn("the incident being gathered is dropped: the device changed");
    }
  }
  // A listener's TLS files and settings apply now (above); turning TLS on or off, addresses and
  // the rest at the next restart.
  ListenersConfig next_listeners = next->listeners;
  const ListenersConfig& now_listeners = config_.listeners;
  if (next_listeners.tcp_tls.enabled() == now_listeners.tcp_tls.enabled()) {
    next_listeners.tcp_tls = now_listeners.tcp_tls;
  }
  if (next_listeners.metrics_tls.enabled() == now_listeners.metrics_tls.enabled()) {
    next_listeners.metrics_tls = now_listeners.metrics_tls;
  }
  if (next_listeners != now_listeners || next->auth_token_file != config_.auth_token_file) {
    log_.Warn("listener and auth token changes take effect at the next restart");
  }
  log_.SetThreshold(SeverityOf(next->log_level));
  if (next->period != config_.period || next->history_retention != config_.history_retention ||
      next->max_history_bytes != config_.max_history_bytes) {
    core_->Reconfigure(next->period, next->history_retention, next->max_history_bytes);
    schedule_->SetPeriod(Clock::now(), next->period);
    ArmSampler();
  }
  core_->SetEventOptions(next->events);
  core_->jobs().set_options(next->jobs.options);
  server_->SetLimits(next->stream);
  if (http_) http_->SetLimits(MetricsServerOptions(*next, ""));
  if (tls->tcp) server_->SetTcpTls(tls->tcp);
  if (http_ && tls->metrics) http_->SetTls(tls->metrics);
  if (tls->tcp || tls->metrics) log_.Info("TLS certificates and keys read again");
  const bool recorder_changed = next->recorder != config_.recorder;
  const bool incidents_changed = next->incidents != config_.incidents;
  config_ = std::move(*next);
  if (recorder_changed) StartRecorder();
  if (incidents_changed) StartIncidents();
  ++stats_.reloads;
  v1::Notice notice;
  notice.set_kind(v1::NOTICE_KIND_RELOADED);
  notice.set_text("configuration reloaded: sampling " + core_->Describe() + " every " +
                  FormatDuration(config_.period));
  server_->NoticeAll(notice);
  AddEvent(DaemonEvent("reloaded", notice.text()));
  log_.Info(notice.text());
  if (mode_.notify) (void)notifier_.Ready();
  UpdateStatus();
}

void Daemon::UpdateStatus() {
  if (!mode_.notify) return;
  const std::size_t clients = server_->session_count();
  std::string status = "sampling " + core_->Describe() + " every " +
                       FormatDuration(config_.period) + "; " + std::to_string(clients) +
                       (clients == 1 ? " client" : " clients");
  if (status == last_status_) return;
  last_status_ = status;
  (void)notifier_.Status(status);
}

std::vector<std::string> Daemon::listening_on() const { return server_->listening_on(); }

std::optional<std::uint16_t> Daemon::metrics_port() const {
  return http_ ? http_->port() : std::nullopt;
}

}  // namespace neuronmon::daemon
