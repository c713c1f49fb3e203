// The settings table's rows (setting_kinds.h's builder): every key of the config file in the
// order of the default file, with its member, bounds, comment and the rules that join it to other
// keys.
#include <filesystem>
#include <string>
#include <utility>

#include "daemon/core/config/setting_kinds.h"
#include "daemon/core/report/history.h"
#include "simdev/instance.h"
#include "simdev/preset.h"
#include "simdev/scenario.h"
#include "simdev/scenario_library.h"

namespace neuronmon::daemon::settings_internal {
namespace {

// ---- Value rules and syntaxes shared by several keys.

constexpr std::size_t kMaxSocketPathBytes = 107;  // sockaddr_un::sun_path less its NUL

ValueRule<std::string> AbsolutePath() {
  return [](const std::string& p) {
    return p.empty() || p.front() != '/' ? "must be an absolute path" : "";
  };
}

// "" stands for `empty_means` ("none", "the default").
ValueRule<std::string> AbsolutePathOr(std::string empty_means) {
  return [empty_means](const std::string& p) {
    return !p.empty() && p.front() != '/' ? "must be an absolute path, or \"\" for " + empty_means
                                          : std::string();
  };
}

Syntax<std::optional<ListenAddress>> AddressSyntax() {
  return {[](std::string_view text) -> Result<std::optional<ListenAddress>> {
            if (text.empty()) return std::optional<ListenAddress>();
            Result<ListenAddress> address = ParseListenAddress(text);
            if (!address.ok()) return address.status();
            return std::optional<ListenAddress>(std::move(address).value());
          },
          [](const std::optional<ListenAddress>& a) {
            return a ? FormatListenAddress(*a) : std::string();
          }};
}

Syntax<unsigned> FileModeSyntax() {
  return {[](std::string_view text) -> Result<unsigned> {
            Result<int> mode = ParseFileMode(text);
            if (!mode.ok()) return mode.status();
            return static_cast<unsigned>(*mode);
          },
          [](const unsigned& mode) { return FormatFileMode(static_cast<int>(mode & 0777)); }};
}

Syntax<LogLevel> LogLevelSyntax() { return {ParseLogLevel, LogLevelName}; }

// ---- Rules that join several keys, each checked at the place of the key it reports.

// When a sized snapshot is taken: past model loading, so the runtimes and their memory are there.
constexpr Nanos kSizingTime = std::chrono::minutes(2);
// The analyzer's verdicts kept beside each snapshot.
constexpr std::size_t kAnalysisBytesPerSnapshot = 512;

// The history's size for this instance, estimated from one snapshot of it, must fit the memory
// budget (the systemd unit's MemoryMax= is twice the default budget).
void CheckHistoryMemory(const DaemonConfig& c, const Snapshot& sample, Found& found) {
  const std::size_t capacity = HistoryCapacity(c.history_retention, c.period);
  const double bytes = static_cast<double>(capacity) *
                           static_cast<double>(OwnBytes(sample) + kAnalysisBytesPerSnapshot) +
                       static_cast<double>(SharedMemoryBytes(sample));
  if (bytes <= static_cast<double>(c.max_history_bytes)) return;
  found.push_back("history_retention: " + FormatDuration(c.history_retention) + " of " +
                  c.backend.device + " snapshots every " + FormatDuration(c.period) +
                  " needs about " + std::to_string(static_cast<std::int64_t>(bytes / (1 << 20))) +
                  " MiB, over limits.max_history_bytes (" +
                  std::to_string(c.max_history_bytes >> 20) +
                  " MiB); shorten history_retention, lengthen period, or raise the limit (and "
                  "the service's MemoryMax=)");
}

// Whether period and history_retention are within their bounds (below), so a history can be
// sized from them.
bool SizableHistory(const DaemonConfig& c) {
  return c.period >= kShortestPeriod && c.period <= kLongestPeriod &&
         c.history_retention >= c.period && c.history_retention <= std::chrono::hours(24);
}

// A simulated device: its preset, scenario and node must exist and fit, and its history the
// memory budget. The real device is checked when the daemon starts (it is there or it is not), as
// is a recording to replay; "auto" falls back to the simulator, whose settings must then be valid.
void CheckSimulator(const DaemonConfig& c, Found& found) {
  const BackendOptions& b = c.backend;
  if (b.device == "neuron" || !b.replay.empty()) return;
  Result<simdev::InstanceSpec> d =
      simdev::ParseDeviceSpec(b.device == "auto" ? std::string(kAutoSimDevice) : b.device);
  if (!d.ok()) found.push_back("device: " + d.status().message());
  Result<simdev::Scenario> s = simdev::LoadScenario(b.scenario);
  if (!s.ok()) found.push_back("scenario: " + s.status().message());
  const bool placed =
      b.node >= 0 && b.node < simdev::kMaxNodes && b.nodes >= 0 && b.nodes <= simdev::kMaxNodes;
  // The scenario must also fit the device (its runtimes' and faults' devices exist on it).
  if (!d.ok() || !s.ok() || !placed) return;
  PlaceNode(*s, b.node, b.nodes);
  auto built = simdev::Instance::Create(*d, std::move(*s), b.seed);
  if (!built.ok()) found.push_back("scenario: " + built.status().message());
  if (built.ok() && SizableHistory(c)) CheckHistoryMemory(c, (*built)->Read(kSizingTime), found);
}

void CheckRetentionCoversPeriod(const DaemonConfig& c, Found& found) {
  if (c.history_retention <= std::chrono::hours(24) && c.history_retention < c.period) {
    found.push_back("history_retention: must be at least period, " + Quoted(c.period) + " (got " +
                    Quoted(c.history_retention) + ")");
  }
}

// A listener others can reach hands out every metric, so it must ask for a token — or for a
// client certificate its TLS verifies.
void CheckExposure(const std::optional<ListenAddress>& address, const TlsServerOptions& tls,
                   std::string_view field, const DaemonConfig& c, Found& found) {
  if (address.has_value() && !IsLoopback(*address) && c.auth_token_file.empty() &&
      !ClientCertAuthenticates(tls)) {
    found.push_back(std::string(field) +
                    ": a listener off loopback requires auth_token_file, or TLS with "
                    "client_auth_type RequireAndVerifyClientCert");
  }
}

void CheckTcpExposure(const DaemonConfig& c, Found& found) {
  CheckExposure(c.listeners.tcp, c.listeners.tcp_tls, "listeners.tcp.address", c, found);
  if (c.listeners.tcp && !IsLoopback(*c.listeners.tcp) && !c.listeners.tcp_tls.enabled() &&
      !c.listeners.tcp_allow_plaintext) {
    found.push_back(
        "listeners.tcp.address: a stream listener off loopback without TLS sends the token and "
        "every figure in clear; set listeners.tcp.tls.cert_file and key_file, or "
        "listeners.tcp.allow_plaintext: true");
  }
  if (c.listeners.tcp && IsLoopback(*c.listeners.tcp) && TcpRequiresToken(c) &&
      c.auth_token_file.empty()) {
    found.push_back(
        "listeners.tcp.address: every local user can connect to loopback TCP, which would bypass "
        "the unix socket's mode " +
        FormatFileMode(static_cast<int>(c.listeners.unix_socket.options.mode & 0777)) +
        "; set auth_token_file (clients pass it with --token-file), or make listeners.unix.mode "
        "0666 if every user may read the metrics");
  }
}

void CheckRecorderRetention(const DaemonConfig& c, Found& found) {
  const RecorderOptions& r = c.recorder.options;
  if (r.retention != Nanos::zero() && r.retention < r.segment) {
    found.push_back(
        "recorder.retention: must be \"0s\" (size cap only) or at least "
        "recorder.segment, " +
        Quoted(r.segment) + " (got " + Quoted(r.retention) + ")");
  }
}

// `dir` as the file system resolves it (symbolic links followed as far as the path exists), with a
// trailing separator, so that one directory is inside another when its text starts with the
// other's.
std::string ResolvedDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(dir, ec);
  if (ec) p = std::filesystem::path(dir).lexically_normal();
  std::string text = p.string();
  if (text.empty() || text.back() != '/') text += '/';
  return text;
}

// The recorder prunes its directory and the incidents theirs: they must not be one directory, or
// one inside the other (both inside the state directory, as by default, is fine).
void CheckArchiveDirectories(const DaemonConfig& c, Found& found) {
  if (!c.recorder.enabled || !c.incidents.enabled) return;
  const std::string& r = c.recorder.options.directory;
  const std::string& i = c.incidents.directory;
  const std::string r_dir = r.empty() ? DefaultArchiveDirectory() : r;
  const std::string i_dir = i.empty() ? DefaultIncidentDirectory() : i;
  if (r_dir.empty() || i_dir.empty()) return;  // no default could be found: nothing is written
  const std::string recorder = ResolvedDirectory(r_dir);
  const std::string incidents = ResolvedDirectory(i_dir);
  const char* how = recorder == incidents             ? "is"
                    : incidents.starts_with(recorder) ? "contains"
                    : recorder.starts_with(incidents) ? "is inside"
                                                      : nullptr;
  if (how == nullptr) return;
  found.push_back(
      "incidents.directory: must not be the recorder's directory or inside it, nor "
      "contain it: the recorder's " +
      recorder + " " + how + " the incidents' " + incidents);
}

// ---- The rows.

// The member `path` of DaemonConfig, as a function pointer.
#define MEMBER(path)               \
  +[](DaemonConfig & c) -> auto& { \
    return c.path;                 \
  }

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr Nanos kMinTimeout = milliseconds(100);
constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kGiB = 1 << 30;

void AddDevice(Table& t) {
  t.Doc({"Device to sample. \"auto\": the real Neuron devices when the driver shows some, else the",
         "simulator (sim:trn2.48xlarge); one log line says which. \"neuron\": the real devices (an "
         "error",
         "on a machine without them). \"sim:<preset>[:lnc=N]\" simulates an instance type: "
         "trn1.2xlarge,",
         "trn1.32xlarge, trn1n.32xlarge, trn2.48xlarge (lnc=1 or 2), inf2.48xlarge, "
         "trn2-ultraserver."})
      .Text("device", MEMBER(backend.device));
}

void AddRealHost(Table& t) {
  t.Doc({"Real devices: where the Neuron driver's sysfs tree and the process table are mounted, "
         "and",
         "AWS's neuron-monitor (package aws-neuronx-tools), run as a child for per-application "
         "figures;",
         "\"\" runs none (utilization and memory still come from the driver)."})
      .Text("sysfs_root", MEMBER(backend.host.sysfs_root), AbsolutePath())
      .Text("proc_root", MEMBER(backend.host.proc_root), AbsolutePath())
      .Text("neuron_monitor", MEMBER(backend.host.neuron_monitor), AbsolutePathOr("none"));
  t.Doc(
       {"Real devices: read each runtime's datastore, the counters the Neuron runtime keeps for "
        "itself",
        "(its own cores, busy and collective time, executions, memory and runtime version, devices",
        "shared by several processes included). With \"runtime_datastores\" true they are read "
        "from the",
        "driver (/dev/neuron<N> opened read-only, NEURON_IOCTL_ACQUIRE_NEURON_DS, a read-only "
        "mapping);",
        "a non-empty \"datastore_root\" reads image files <datastore_root>/neuron<N>/<pid> instead "
        "(for",
        "tests and containers handed the images). docs/real-hosts.md says what opening a device "
        "does.",
        "At most \"datastore_max_reads\" datastores are read per sample; the rest keep the "
        "driver's",
        "figures."})
      .Bool("runtime_datastores", MEMBER(backend.host.driver_datastores))
      .Text("datastore_root", MEMBER(backend.host.datastore_root), AbsolutePathOr("none"))
      .Integer("datastore_max_reads", MEMBER(backend.host.datastore_max_reads), 1, 65536);
  t.Doc(
       {"Real devices on Kubernetes: the kubelet's PodResources API names the pod, namespace and",
        "container of each application and which pods were allocated which devices. Its socket "
        "is",
        "root's only (docs/attribution.md). With \"enabled\" true it is asked at most every 10 s "
        "when the",
        "socket exists; a host without it is not on Kubernetes and nothing is said. false: never."})
      .Section("kubernetes")
      .Bool("kubernetes.enabled", MEMBER(backend.host.kubernetes))
      .Text("kubernetes.pod_resources_socket", MEMBER(backend.host.pod_resources.socket_path),
            [](const std::string& p) {
              return p.empty() || p.front() != '/' || p.size() > kMaxSocketPathBytes
                         ? "must be an absolute path of at most 107 bytes"
                         : "";
            })
      .Doc({"Device ids kept from one answer of the kubelet, over all its pods (the rest are "
            "dropped",
            "and counted)."})
      .Integer("kubernetes.max_device_ids", MEMBER(backend.host.pod_resources.max_device_ids), 1,
               1 << 20);
  t.Doc({"A real host's processes: which hold Neuron devices is read from /proc, one descriptor "
         "at a",
         "time. A scan goes on over samples within \"max_fds_per_sample\" descriptors and "
         "\"max_scan_time\"",
         "per sample (the sampler never misses a tick for it) and \"max_fds_per_uid\" "
         "descriptors per user",
         "per scan (past it, that user's other processes keep what the last scan found). At most",
         "\"max_tracked\" processes holding devices, and \"max_runtimes\" of neuron-monitor's "
         "runtimes, are",
         "tracked at once (the rest are counted, not read)."})
      .Section("processes")
      .Integer("processes.max_fds_per_sample",
               MEMBER(backend.host.process_limits.max_fds_per_sample), 100, 100000000)
      .Duration("processes.max_scan_time", MEMBER(backend.host.process_limits.max_time_per_sample),
                milliseconds(1), seconds(10))
      .Integer("processes.max_fds_per_uid", MEMBER(backend.host.process_limits.max_fds_per_uid),
               100, 1000000000)
      .Integer("processes.max_tracked", MEMBER(backend.host.process_limits.max_results), 1, 65536)
      .Integer("processes.max_runtimes", MEMBER(backend.host.max_runtimes), 1, 1024);
  t.Doc({"A real host: count the Neuron driver's NEURON_HW_ERR events (uncorrectable SRAM, "
         "NeuronCore",
         "and HBM errors, DMA errors) in the kernel log, per device, for the devices' health",
         "(docs/health.md). Reading /dev/kmsg needs CAP_SYSLOG and, under systemd, "
         "ProtectKernelLogs=no",
         "(the real-host drop-in's item 4); without them the events are reported unavailable. At "
         "most",
         "\"max_records_per_read\" records are read per sample (the rest wait for the next). "
         "false: never."})
      .Section("kernel_log")
      .Bool("kernel_log.enabled", MEMBER(backend.host.kernel_log))
      .Text("kernel_log.path", MEMBER(backend.host.kernel_log_options.path), AbsolutePath())
      .Integer("kernel_log.max_records_per_read",
               MEMBER(backend.host.kernel_log_options.max_records_per_poll), 1, 1000000);
}

void AddSimulation(Table& t) {
  t.Doc({"Workload of a simulated device: a built-in scenario name (healthy-training, "
         "input-bound,",
         "collective-bound, hbm-bound, straggler, ...) or the path of a scenario .json file."})
      .Text("scenario", MEMBER(backend.scenario))
      .Rule(CheckSimulator);
  t.Doc({"Random seed of the simulation (an integer >= 0); the same seed gives the same readings."})
      .Simulated()
      .Integer("seed", MEMBER(backend.seed), 0, kAnyInt);
  t.Doc({"A cluster simulation: this daemon is node \"node\" (from 0) of \"nodes\" (0: as many as "
         "the",
         "scenario says). Start every node's daemon with the same scenario and seed, at the same "
         "time."})
      .Simulated()
      .Integer("node", MEMBER(backend.node), 0, simdev::kMaxNodes - 1)
      .Simulated()
      .Integer("nodes", MEMBER(backend.nodes), 0, simdev::kMaxNodes);
  t.Doc({"Base sampling period, 10ms to 1h. Clients' periods are rounded to multiples of it."})
      .Duration("period", MEMBER(period), kShortestPeriod, kLongestPeriod);
  t.Doc({"Simulated clock speed: 1 is real time, 60 runs a simulated minute per second (above 0, "
         "at",
         "most 10000; sim: devices only)."})
      .Simulated()
      .Number("speed", MEMBER(backend.speed), [](const double& speed) {
        return speed > 0 && speed <= 10000
                   ? std::string()
                   : "must be above 0 and at most 10000 (got " + FormatNumber(speed) + ")";
      });
  t.Doc({"How much sampled history to keep for resuming clients and graphs: at least period, at "
         "most 24h."})
      .Duration("history_retention", MEMBER(history_retention), Nanos::zero(), hours(24))
      .Rule(CheckRetentionCoversPeriod);
}

// A listener's TLS, as Prometheus' tls_server_config spells it (tls_options.h).
#define TLS_MEMBER(field)            \
  +[](DaemonConfig & c) -> auto& {   \
    return (c.listeners.*Tls).field; \
  }

template <TlsServerOptions ListenersConfig::*Tls>
void AddTls(Table& t, const std::string& prefix, std::vector<std::string> doc) {
  t.Doc(std::move(doc))
      .Section(prefix)
      .Doc({"PEM certificate (chain) and private key, absolute paths; both set turn TLS on. Read "
            "again",
            "on SIGHUP (connected clients keep their session). The key must not be readable by "
            "others."})
      .Text(prefix + ".cert_file", TLS_MEMBER(cert_file))
      .Text(prefix + ".key_file", TLS_MEMBER(key_file))
      .Doc({"NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or",
            "RequireAndVerifyClientCert. A certificate client_ca_file signed authenticates as "
            "the token does."})
      .Text(prefix + ".client_auth_type", TLS_MEMBER(client_auth_type))
      .Doc({"The CA (PEM) that signs client certificates, for the Verify* client_auth_types."})
      .Text(prefix + ".client_ca_file", TLS_MEMBER(client_ca_file))
      .Doc({"Subject alternative names (DNS, email, IP, URI) a client certificate must carry one "
            "of;",
            "[] accepts any the CA signed."})
      .Strings(prefix + ".client_allowed_sans", TLS_MEMBER(client_allowed_sans))
      .Doc({"Oldest and newest protocol: TLS12 or TLS13 (TLS10 and TLS11 are refused)."})
      .Text(prefix + ".min_version", TLS_MEMBER(min_version))
      .Text(prefix + ".max_version", TLS_MEMBER(max_version))
      .Doc({"TLS 1.2 suites by Go's names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...); [] keeps",
            "OpenSSL's. TLS 1.3's are not configurable."})
      .Strings(prefix + ".cipher_suites", TLS_MEMBER(cipher_suites))
      .Doc({"Choose the suite by the server's order rather than the client's."})
      .Bool(prefix + ".prefer_server_cipher_suites", TLS_MEMBER(prefer_server_cipher_suites))
      .Doc({"Key-exchange groups: CurveP256, CurveP384, CurveP521, X25519; [] keeps OpenSSL's."})
      .Strings(prefix + ".curve_preferences", TLS_MEMBER(curve_preferences))
      .Rule([prefix](const DaemonConfig& c, Found& found) {
        CheckTlsServerOptions(c.listeners.*Tls, prefix, found);
      });
}
#undef TLS_MEMBER

void AddListeners(Table& t) {
  t.Section("listeners");
  t.Doc({"The local stream socket that neuron-top, neuron-monitor and neuron-ls connect to."})
      .Section("listeners.unix")
      .Doc({"false: no unix socket (then only TCP, if configured, serves streams)."})
      .Bool("listeners.unix.enabled", MEMBER(listeners.unix_socket.enabled))
      .Doc({"Socket path; \"\" picks /run/neuron-monitor/neuron-monitord.sock when run as root or "
            "by",
            "systemd, else $XDG_RUNTIME_DIR/neuron-monitor/neuron-monitord.sock."})
      .Text("listeners.unix.path", MEMBER(listeners.unix_socket.options.path),
            [](const std::string& p) {
              if (!p.empty() && p.front() != '/') {
                return "must be an absolute path (got \"" + p + "\")";
              }
              return p.size() > kMaxSocketPathBytes
                         ? "longer than " + std::to_string(kMaxSocketPathBytes) +
                               " bytes, the limit for a unix socket path"
                         : std::string();
            })
      .Doc({"Permission bits of the socket file, an octal string from \"0000\" to \"0777\"."})
      .Parsed<unsigned>(
          "listeners.unix.mode", MEMBER(listeners.unix_socket.options.mode), FileModeSyntax(),
          [](const unsigned& mode) { return mode > 0777 ? "must be 0000 to 0777" : ""; })
      .Doc({"Group owning the socket file; \"\" keeps the daemon's own group."})
      .Text("listeners.unix.group", MEMBER(listeners.unix_socket.options.group));
  t.Doc({"Stream over TCP: \"HOST:PORT\" (IPv4, [IPv6] or a host name); \"\" turns it off. Clients "
         "must",
         "present the auth token unless it is on loopback and the unix socket is open to all "
         "users."})
      .Section("listeners.tcp")
      .Parsed("listeners.tcp.address", MEMBER(listeners.tcp), AddressSyntax())
      .Rule(CheckTcpExposure)
      .Doc({"true: a stream listener off loopback may run without TLS (a warning at start-up); "
            "false:",
            "it must have tls.cert_file and tls.key_file."})
      .Bool("listeners.tcp.allow_plaintext", MEMBER(listeners.tcp_allow_plaintext));
  AddTls<&ListenersConfig::tcp_tls>(
      t, "listeners.tcp.tls",
      {"TLS for the stream, with the keys and meanings of Prometheus' tls_server_config",
       "(web-config.yml), so one set-up serves both; docs/security.md shows one."});
  t.Doc({"Prometheus /metrics over HTTP: \"HOST:PORT\"; \"\" turns it off. Off loopback without "
         "tls,",
         "the daemon warns at start-up."})
      .Section("listeners.metrics")
      .Parsed("listeners.metrics.address", MEMBER(listeners.metrics), AddressSyntax())
      .Rule([](const DaemonConfig& c, Found& found) {
        CheckExposure(c.listeners.metrics, c.listeners.metrics_tls, "listeners.metrics.address", c,
                      found);
      });
  AddTls<&ListenersConfig::metrics_tls>(
      t, "listeners.metrics.tls",
      {"TLS for /metrics, with the same keys as listeners.tcp.tls (Prometheus scrapes it with",
       "scheme: https and a tls_config)."});
  t.Doc(
       {"File holding the token clients must present (its first line). Required when a listener",
        "(tcp or metrics) binds anything but loopback (127.0.0.0/8, [::1], localhost) unless its",
        "TLS verifies client certificates (RequireAndVerifyClientCert), and for loopback tcp",
        "unless listeners.unix.mode lets every user connect. It must not be readable by others.",
        "\"\" means no token, or, under systemd, the credential \"token\" when the unit passes one",
        "(LoadCredential=token:/etc/neuron-monitor/token in the shipped unit)."})
      .Text("auth_token_file", MEMBER(auth_token_file));
}

void AddStreamLimits(Table& t) {
  t.Doc({"Stream clients connected at once, 1 to 100000."})
      .Integer("limits.max_clients", MEMBER(stream.max_clients), 1, 100000)
      .Doc({"Stream clients of one local user (by uid) or one TCP address, 1 to 100000."})
      .Integer("limits.max_clients_per_uid", MEMBER(stream.max_clients_per_uid), 1, 100000)
      .Doc({"Connections still in the handshake, 1 to 100000; when full, the oldest is closed."})
      .Integer("limits.max_handshaking", MEMBER(stream.max_handshaking), 1, 100000)
      .Doc({"Time a new client has to send its Hello, 100ms to 1h."})
      .Duration("limits.handshake_timeout", MEMBER(stream.handshake_timeout), kMinTimeout, hours(1))
      .Doc({"Time a welcomed client has to subscribe, up to 24h; \"0s\" means no limit."})
      .Duration("limits.subscribe_timeout", MEMBER(stream.subscribe_timeout), Nanos::zero(),
                hours(24))
      .Doc({"Time a client may leave one write unfinished before it is disconnected, 100ms to 1h."})
      .Duration("limits.write_timeout", MEMBER(stream.write_timeout), kMinTimeout, hours(1))
      .Doc({"Disconnect a client that sends nothing for this long, up to 24h; \"0s\" means never.",
            "neuronmon's clients send a heartbeat every 5s, so use more than that."})
      .Duration("limits.idle_timeout", MEMBER(stream.idle_timeout), Nanos::zero(), hours(24))
      // Clients take 20 s without a byte for a lost connection: heartbeats must come well before.
      .Doc({"Heartbeat sent to an otherwise idle stream, 100ms to 10s (clients take 20s of silence "
            "for a",
            "lost connection)."})
      .Duration("limits.heartbeat_interval", MEMBER(stream.heartbeat_interval), kMinTimeout,
                seconds(10))
      .Doc({"Reports queued per client, 1 to 65536; a client further behind loses its oldest "
            "reports."})
      .Integer("limits.queue_depth", MEMBER(stream.queue_depth), 1, 65536)
      // A queue must hold at least one report of the largest instance.
      .Doc({"Bytes queued per client (reports and notices), at least 1 MiB (1048576); a client "
            "over it",
            "loses its oldest reports."})
      .Integer("limits.max_queue_bytes", MEMBER(stream.max_queue_bytes), kMiB, 4 * kGiB)
      .Doc({"Notices and errors queued for a client that does not read them, 4 to 65536; beyond "
            "it the",
            "client is disconnected."})
      .Integer("limits.max_control_frames", MEMBER(stream.max_control_frames), 4, 65536)
      .Doc({"Bytes queued for all clients together, at least 1 MiB; over it, clients with a "
            "backlog lose",
            "their oldest reports."})
      .Integer("limits.max_queued_bytes_total", MEMBER(stream.max_queued_bytes_total), kMiB,
               64 * kGiB)
      .Doc({"A client's Subscribes are applied at most once per interval (the last one wins), up "
            "to 1h."})
      .Duration("limits.subscribe_interval", MEMBER(stream.subscribe_interval), Nanos::zero(),
                hours(1))
      .Doc({"Longest tag_filter pattern accepted, 1 to 65536 bytes."})
      .Integer("limits.max_tag_filter_bytes", MEMBER(stream.max_tag_filter_bytes), 1, 65536)
      .Doc({"New tag filters compiled per second for one uid or address, 1 to 100000 (one already",
            "compiled costs nothing); a Subscribe beyond it waits its turn."})
      .Integer("limits.filter_compiles_per_second", MEMBER(stream.filter_compiles_per_second), 1,
               100000);
}

void AddMetricsLimits(Table& t) {
  t.Doc({"/metrics scrapes served at once, 1 to 1024."})
      .Integer("limits.max_scrapes", MEMBER(metrics.handler.max_scrapes), 1, 1024)
      .Doc({"/healthz and /readyz replies being written at once, 1 to 1024 (their own cap: a",
            "scrape flood does not fail a liveness probe)."})
      .Integer("limits.max_probes", MEMBER(metrics.handler.max_probes), 1, 1024)
      .Doc({"/metrics connections open at once, 1 to 100000."})
      .Integer("limits.metrics_max_connections", MEMBER(metrics.max_connections), 1, 100000)
      .Doc({"Of those, connections that have not yet completed one authorized request, 1 to "
            "100000;",
            "when full, the oldest of them is closed, so a flood cannot lock Prometheus out."})
      .Integer("limits.metrics_max_pending", MEMBER(metrics.max_pending), 1, 100000)
      .Doc({"Time a /metrics request has to arrive in full, 100ms to 1h."})
      .Duration("limits.metrics_request_timeout", MEMBER(metrics.request_timeout), kMinTimeout,
                hours(1))
      .Doc({"Time a kept-alive /metrics connection may wait for its next request, 100ms to 1h."})
      .Duration("limits.metrics_idle_timeout", MEMBER(metrics.idle_timeout), kMinTimeout, hours(1))
      .Doc({"Age at which a /metrics connection is closed after its current request, 100ms to "
            "24h."})
      .Duration("limits.metrics_connection_lifetime", MEMBER(metrics.connection_lifetime),
                kMinTimeout, hours(24))
      .Doc({"Requests served on one /metrics connection before it is closed, 1 to 1000000."})
      .Integer("limits.metrics_max_requests", MEMBER(metrics.max_requests), 1, 1000000)
      .Doc({"Long-lived /events replies (Server-Sent Events, ?follow) open at once, 0 to 100000;",
            "not counted in limits.metrics_max_connections. Each has the stream clients'",
            "limits.max_queue_bytes unread at most, all together limits.max_queued_bytes_total."})
      .Integer("limits.max_event_streams", MEMBER(metrics.handler.max_event_streams), 0, 100000)
      .Doc({"Age at which a long-lived /events reply ends (its client resumes after the last",
            "event it got), 1s to 24h."})
      .Duration("limits.event_stream_lifetime", MEMBER(metrics.event_stream_lifetime), seconds(1),
                hours(24));
}

void AddLimits(Table& t) {
  t.Doc({"What any one client, scraper or the history may cost. docs/security.md explains each "
         "limit",
         "and what happens to a client that reaches it."})
      .Section("limits");
  AddStreamLimits(t);
  AddMetricsLimits(t);
  t.Doc({"Memory the retained history may take (estimated for the device at start and at "
         "reload), at",
         "least 1 MiB (1048576). The service's MemoryMax= is 256M: keep this well below it."})
      .Integer("limits.max_history_bytes", MEMBER(max_history_bytes), kMiB, 1024 * kGiB)
      .Doc({"Real hosts: files of the Neuron driver's tree kept open between samples, 0 to 1048576",
            "(beyond it, files are opened at each read; a 16-device trn2 has about 7,200), and the",
            "longest line (one JSON document) read from AWS's neuron-monitor, 64 KiB to 64 MiB."})
      .Integer("limits.sysfs_max_open_files", MEMBER(backend.host.tree_limits.max_open_files), 0,
               1 << 20)
      .Integer("limits.neuron_monitor_max_line_bytes",
               MEMBER(backend.host.child_limits.max_line_bytes), 64 << 10, 64 * kMiB);
}

void AddRecorder(Table& t) {
  t.Doc({"The archive: every snapshot kept on disk, for neuron-top/neuron-monitor --replay and",
         "neuron-monitord --replay (docs/recorder.md). About 14 MiB an hour for a trn2.48xlarge."})
      .Section("recorder")
      .Doc({"false: nothing is written."})
      .Bool("recorder.enabled", MEMBER(recorder.enabled))
      .Doc({"Where; \"\" picks /var/lib/neuron-monitor/archive under systemd or as root, else",
            "$XDG_STATE_HOME/neuron-monitor/archive (~/.local/state/...)."})
      .Text("recorder.directory", MEMBER(recorder.options.directory), AbsolutePathOr("the default"))
      .Doc({"Size of the archive's files together, at least 16 MiB (16777216); the oldest go "
            "first."})
      .Integer("recorder.max_bytes", MEMBER(recorder.options.max_bytes), 16 * kMiB,
               std::int64_t{1} << 50)
      .Doc({"Files older than this are deleted, at least \"segment\"; \"0s\": only max_bytes "
            "applies."})
      .Duration("recorder.retention", MEMBER(recorder.options.retention), Nanos::zero(),
                Nanos::max())
      .Doc({"A new file this often, 1m to 24h (what one file holds; seeking reads at most a "
            "minute)."})
      .Duration("recorder.segment", MEMBER(recorder.options.segment), minutes(1), hours(24))
      .Rule(CheckRecorderRetention);
}

void AddIncidents(Table& t) {
  t.Doc({"Incident bundles (docs/recorder.md, \"Incidents\"): when an application's verdict other "
         "than",
         "healthy holds, the minutes around it are saved as one file to replay and send on; one "
         "per",
         "verdict episode, announced to clients and counted on /metrics."})
      .Section("incidents")
      .Doc({"false: none are written."})
      .Bool("incidents.enabled", MEMBER(incidents.enabled))
      .Doc({"Where; \"\" picks /var/lib/neuron-monitor/incidents under systemd or as root, else",
            "$XDG_STATE_HOME/neuron-monitor/incidents (~/.local/state/...). Not the recorder's",
            "directory, nor inside it or around it: each prunes its own."})
      .Text("incidents.directory", MEMBER(incidents.directory), AbsolutePathOr("the default"))
      .Rule(CheckArchiveDirectories)
      .Doc({"How long a verdict (input_bound, collective_bound, hbm_bound, straggler, "
            "idle_allocated)",
            "holds before it is an incident, 0s to 24h; errors and hang: hold_errors."})
      .Duration("incidents.hold", MEMBER(incidents.tracker.hold), Nanos::zero(), hours(24))
      .Duration("incidents.hold_errors", MEMBER(incidents.tracker.hold_errors), Nanos::zero(),
                hours(24))
      .Doc({"The history saved: this long before the incident is declared, and after it, each at "
            "most",
            "1h; the bundle is taken from the daemon's history, so it reaches back "
            "history_retention."})
      .Duration("incidents.before", MEMBER(incidents.tracker.before), Nanos::zero(), hours(1))
      .Duration("incidents.after", MEMBER(incidents.tracker.after), Nanos::zero(), hours(1))
      .Doc({"Bundles kept (1 to 100000), and their size together (at least 16 MiB); the oldest go "
            "first."})
      .Integer("incidents.max_count", MEMBER(incidents.limits.max_count), 1, 100000)
      .Integer("incidents.max_bytes", MEMBER(incidents.limits.max_bytes), 16 * kMiB,
               std::int64_t{1} << 50);
}

void AddEvents(Table& t) {
  t.Doc({"Events (docs/events.md): what changed, kept so a client can resume after the last one it",
         "saw (/events?after=SEQ, Last-Event-ID)."})
      .Section("events")
      .Doc({"Events kept at most, 1 to 1000000; the oldest go first."})
      .Integer("events.max_retained", MEMBER(events.max_events), 1, 1000000)
      .Doc({"How long an event is kept, 1m to 7d."})
      .Duration("events.retention", MEMBER(events.retention), minutes(1), hours(24 * 7));
}

void AddJobs(Table& t) {
  t.Doc({"Job accounting (docs/jobs.md): how each job used the hardware, as neuron-report shows "
         "it."})
      .Section("jobs")
      .Doc(
          {"A job ends when its last process has been gone this long (or at neuron-report --stop),",
           "1s to 1h."})
      .Duration("jobs.grace", MEMBER(jobs.options.grace), seconds(1), hours(1))
      .Doc({"Finished jobs kept, 1 to 100000, and for how long, 1m to 365d; the oldest go first."})
      .Integer("jobs.max_finished", MEMBER(jobs.options.max_finished), 1, 100000)
      .Duration("jobs.max_age", MEMBER(jobs.options.max_age), minutes(1), hours(24 * 365))
      .Doc({"Jobs accounted at once, 1 to 10000; processes of further jobs are not accounted",
            "(neuron_monitord_job_samples_untracked_total counts them)."})
      .Integer("jobs.max_live", MEMBER(jobs.options.max_live), 1, 10000)
      .Doc({"Where the jobs are saved; \"\": jobs.pb in the archive directory",
            "(/var/lib/neuron-monitor/archive/jobs.pb by default), and nowhere when the recorder",
            "is off."})
      .Text("jobs.file", MEMBER(jobs.file), AbsolutePathOr("the default"))
      .Doc({"Live jobs are saved at most this often, 1s to 1h (and at every end and at shutdown)."})
      .Duration("jobs.save_interval", MEMBER(jobs.save_interval), seconds(1), hours(1));
}

Table MakeTable() {
  Table t;
  AddDevice(t);
  AddRealHost(t);
  AddSimulation(t);
  AddListeners(t);
  AddLimits(t);
  AddRecorder(t);
  AddIncidents(t);
  AddEvents(t);
  AddJobs(t);
  t.Doc({"Messages to log: \"error\", \"warn\", \"info\" or \"debug\"."})
      .Parsed("log_level", MEMBER(log_level), LogLevelSyntax());
  return t;
}

#undef MEMBER

}  // namespace

const Table& SettingsTable() {
  static const Table table = MakeTable();
  return table;
}

}  // namespace neuronmon::daemon::settings_internal

namespace neuronmon::daemon {

const std::vector<std::unique_ptr<Setting>>& ConfigSettings() {
  return settings_internal::SettingsTable().settings;
}
const std::vector<Section>& ConfigSections() {
  return settings_internal::SettingsTable().sections_;
}

}  // namespace neuronmon::daemon
