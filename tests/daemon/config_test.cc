#include "daemon/core/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "daemon/core/config/config_file.h"
#include "proto/common/json_reader.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every problem ParseConfig reports for `text`, checking the returned Status carries the first.
std::vector<std::string> Problems(std::string_view text) {
  std::vector<std::string> problems;
  Result<DaemonConfig> config = ParseConfig(text, "test.json", &problems);
  EXPECT_FALSE(config.ok()) << text;
  if (!config.ok() && !problems.empty()) {
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(config.status().message(), problems.front());
  }
  return problems;
}

DaemonConfig Parse(std::string_view text) {
  std::vector<std::string> problems;
  Result<DaemonConfig> config = ParseConfig(text, "test.json", &problems);
  EXPECT_TRUE(config.ok()) << ::testing::PrintToString(problems);
  EXPECT_TRUE(problems.empty());
  return config.ok() ? *config : DefaultConfig();
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("config_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ConfigTest, DefaultsAreTheDocumentedOnes) {
  const DaemonConfig c = DefaultConfig();
  EXPECT_EQ(c.backend.device, "auto");
  EXPECT_EQ(c.backend.host.sysfs_root, "/sys");
  EXPECT_EQ(c.backend.host.proc_root, "/proc");
  EXPECT_EQ(c.backend.host.neuron_monitor, "/opt/aws/neuron/bin/neuron-monitor");
  EXPECT_EQ(c.backend.scenario, "healthy-training");
  EXPECT_EQ(c.backend.seed, 1u);
  EXPECT_EQ(c.period, seconds(1));
  EXPECT_EQ(c.backend.speed, 1.0);
  EXPECT_EQ(c.history_retention, minutes(10));
  EXPECT_TRUE(c.listeners.unix_socket.enabled);
  EXPECT_EQ(c.listeners.unix_socket.options.path, "");
  EXPECT_EQ(c.listeners.unix_socket.options.mode, 0660u);
  EXPECT_EQ(c.listeners.unix_socket.options.group, "");
  EXPECT_EQ(c.listeners.tcp, std::nullopt);
  EXPECT_EQ(c.listeners.metrics, (ListenAddress{"127.0.0.1", 9413}));
  EXPECT_EQ(c.auth_token_file, "");
  EXPECT_EQ(c.stream.max_clients, 2048u);
  EXPECT_EQ(c.stream.queue_depth, 64u);
  EXPECT_EQ(c.stream.handshake_timeout, seconds(5));
  EXPECT_EQ(c.stream.write_timeout, seconds(10));
  EXPECT_EQ(c.stream.idle_timeout, seconds(0));
  EXPECT_EQ(c.stream.heartbeat_interval, seconds(5));
  EXPECT_EQ(c.metrics.handler.max_scrapes, 16u);
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
  std::vector<std::string> problems;
  EXPECT_TRUE(ValidateConfig(c, &problems, "defaults").ok());
  EXPECT_TRUE(problems.empty());
}

TEST(ConfigTest, DefaultFileParsesToDefaults) {
  EXPECT_EQ(Parse(DefaultConfigText()), DefaultConfig());
  EXPECT_EQ(Parse("{}"), DefaultConfig());
}

TEST(ConfigTest, PackagedFileIsDefaultConfigText) {
  const std::string path = std::string(NEURONMON_SOURCE_DIR) + "/packaging/neuron-monitord.json";
  EXPECT_EQ(ReadFile(path), DefaultConfigText()) << "the embedded default config is stale";
  Result<DaemonConfig> loaded = LoadConfigFile(path, nullptr);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*loaded, DefaultConfig());
}

// A file giving every field a value other than its default.
constexpr std::string_view kEveryField = R"({
    "device": "sim:trn2.48xlarge:lnc=2", "scenario": "straggler", "seed": 42,
    "kubernetes": {"enabled": false, "pod_resources_socket": "/run/kubelet/pr.sock",
                   "max_device_ids": 99},
    "processes": {"max_fds_per_sample": 1000, "max_scan_time": "30ms", "max_fds_per_uid": 5000,
                  "max_tracked": 12, "max_runtimes": 13},
    "kernel_log": {"enabled": false, "path": "/var/log/kern.log", "max_records_per_read": 50},
    "period": "250ms", "speed": 60.5, "history_retention": "5m",
    "listeners": {
      "unix": {"enabled": false, "path": "/tmp/x.sock", "mode": "0600", "group": "neuron"},
      "tcp": {"address": "[::1]:7000", "allow_plaintext": true,
              "tls": {"cert_file": "/etc/t/c.pem", "key_file": "/etc/t/c.key",
                      "client_auth_type": "VerifyClientCertIfGiven", "client_ca_file": "/etc/t/ca.pem",
                      "client_allowed_sans": ["a.example", "10.0.0.1"], "min_version": "TLS13",
                      "max_version": "TLS13", "cipher_suites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
                      "prefer_server_cipher_suites": false, "curve_preferences": ["X25519"]}},
      "metrics": {"address": "", "tls": {"cert_file": "/etc/m/c.pem", "key_file": "/etc/m/c.key"}}},
    "auth_token_file": "/etc/neuron-monitor/token",
    "limits": {"max_clients": 10, "max_clients_per_uid": 9, "max_handshaking": 7,
               "handshake_timeout": "1s", "subscribe_timeout": "4s", "write_timeout": "2s",
               "idle_timeout": "5m", "heartbeat_interval": "3s", "queue_depth": 8,
               "max_queue_bytes": 2097152, "max_control_frames": 6,
               "max_queued_bytes_total": 8388608, "subscribe_interval": "250ms",
               "max_tag_filter_bytes": 100, "filter_compiles_per_second": 3, "max_scrapes": 2, "metrics_max_connections": 5,
               "metrics_max_pending": 4, "metrics_request_timeout": "6s",
               "metrics_idle_timeout": "7s", "metrics_connection_lifetime": "8m",
               "metrics_max_requests": 11, "max_history_bytes": 209715200,
               "sysfs_max_open_files": 100, "neuron_monitor_max_line_bytes": 1048576},
    "recorder": {"enabled": false, "directory": "/srv/archive", "max_bytes": 33554432,
                 "retention": "48h", "segment": "5m"},
    "incidents": {"enabled": false, "directory": "/srv/incidents", "hold": "30s",
                  "hold_errors": "0s", "before": "2m", "after": "30s", "max_count": 7,
                  "max_bytes": 67108864},
    "log_level": "debug"})";

TEST(ConfigTest, EveryFieldIsRead) {
  const DaemonConfig c = Parse(kEveryField);
  EXPECT_EQ(c.backend.device, "sim:trn2.48xlarge:lnc=2");
  EXPECT_EQ(c.backend.scenario, "straggler");
  EXPECT_EQ(c.backend.seed, 42u);
  EXPECT_FALSE(c.backend.host.kubernetes);
  EXPECT_EQ(c.backend.host.pod_resources.socket_path, "/run/kubelet/pr.sock");
  EXPECT_EQ(c.backend.host.pod_resources.max_device_ids, 99u);
  EXPECT_EQ(c.backend.host.process_limits.max_fds_per_sample, 1000u);
  EXPECT_EQ(c.backend.host.process_limits.max_time_per_sample, milliseconds(30));
  EXPECT_EQ(c.backend.host.process_limits.max_fds_per_uid, 5000u);
  EXPECT_EQ(c.backend.host.process_limits.max_results, 12u);
  EXPECT_EQ(c.backend.host.max_runtimes, 13u);
  EXPECT_FALSE(c.backend.host.kernel_log);
  EXPECT_EQ(c.backend.host.kernel_log_options.path, "/var/log/kern.log");
  EXPECT_EQ(c.backend.host.kernel_log_options.max_records_per_poll, 50u);
  EXPECT_EQ(c.period, milliseconds(250));
  EXPECT_EQ(c.backend.speed, 60.5);
  EXPECT_EQ(c.history_retention, minutes(5));
  EXPECT_EQ(c.listeners.unix_socket, (UnixListenerConfig{false, {"/tmp/x.sock", 0600, "neuron"}}));
  EXPECT_EQ(c.listeners.tcp, (ListenAddress{"::1", 7000}));
  EXPECT_EQ(c.listeners.metrics, std::nullopt);
  EXPECT_TRUE(c.listeners.tcp_allow_plaintext);
  TlsServerOptions tls;
  tls.cert_file = "/etc/t/c.pem";
  tls.key_file = "/etc/t/c.key";
  tls.client_auth_type = "VerifyClientCertIfGiven";
  tls.client_ca_file = "/etc/t/ca.pem";
  tls.client_allowed_sans = {"a.example", "10.0.0.1"};
  tls.min_version = "TLS13";
  tls.max_version = "TLS13";
  tls.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"};
  tls.prefer_server_cipher_suites = false;
  tls.curve_preferences = {"X25519"};
  EXPECT_EQ(c.listeners.tcp_tls, tls);
  EXPECT_EQ(c.listeners.metrics_tls.cert_file, "/etc/m/c.pem");
  EXPECT_EQ(c.listeners.metrics_tls.key_file, "/etc/m/c.key");
  EXPECT_EQ(c.auth_token_file, "/etc/neuron-monitor/token");
  ServerLimits limits;
  limits.max_clients = 10;
  limits.max_clients_per_uid = 9;
  limits.max_handshaking = 7;
  limits.handshake_timeout = seconds(1);
  limits.subscribe_timeout = seconds(4);
  limits.write_timeout = seconds(2);
  limits.idle_timeout = minutes(5);
  limits.heartbeat_interval = seconds(3);
  limits.queue_depth = 8;
  limits.max_queue_bytes = 2 << 20;
  limits.max_control_frames = 6;
  limits.max_queued_bytes_total = 8 << 20;
  limits.subscribe_interval = milliseconds(250);
  limits.max_tag_filter_bytes = 100;
  limits.filter_compiles_per_second = 3;
  EXPECT_EQ(c.stream, limits);
  HttpServerOptions metrics;
  metrics.handler.max_scrapes = 2;
  metrics.max_connections = 5;
  metrics.max_pending = 4;
  metrics.request_timeout = seconds(6);
  metrics.idle_timeout = seconds(7);
  metrics.connection_lifetime = minutes(8);
  metrics.max_requests = 11;
  EXPECT_EQ(c.metrics, metrics);
  EXPECT_EQ(c.max_history_bytes, 200u << 20);
  EXPECT_EQ(c.backend.host.tree_limits.max_open_files, 100u);
  EXPECT_EQ(c.backend.host.child_limits.max_line_bytes, 1u << 20);
  RecorderConfig recorder;
  recorder.enabled = false;
  recorder.options.directory = "/srv/archive";
  recorder.options.max_bytes = 32 << 20;
  recorder.options.retention = hours(48);
  recorder.options.segment = minutes(5);
  EXPECT_EQ(c.recorder, recorder);
  EXPECT_EQ(c.incidents, (IncidentsConfig{false,
                                          "/srv/incidents",
                                          {seconds(30), seconds(0), minutes(2), seconds(30)},
                                          {7, 64 << 20}}));
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
}

// The keys of a JSON object, as paths ("limits.max_clients").
void KeysOf(const nlohmann::json& json, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [key, value] : json.items()) {
    if (value.is_object()) {
      KeysOf(value, prefix + key + ".", out);
    } else {
      out.insert(prefix + key);
    }
  }
}

// An incident bundle keeps the effective configuration as JSON (ConfigToJson): it must read back
// to the same config and name every key the documented file has.
TEST(ConfigTest, ConfigToJsonReadsBackAndHasEveryKey) {
  const DaemonConfig every = Parse(kEveryField);
  EXPECT_EQ(Parse(ConfigToJson(every)), every);
  EXPECT_EQ(Parse(ConfigToJson(DefaultConfig())), DefaultConfig());
  Result<nlohmann::json> documented = ParseJsonWithComments(DefaultConfigText(), "default");
  ASSERT_TRUE(documented.ok());
  std::set<std::string> want, got;
  KeysOf(*documented, "", want);
  KeysOf(nlohmann::json::parse(ConfigToJson(DefaultConfig())), "", got);
  EXPECT_EQ(got, want);
}

TEST(ConfigTest, IncidentSettingsAreChecked) {
  EXPECT_THAT(Problems(R"({"incidents": {"directory": "rel", "max_count": 0, "before": "2h",
                                         "max_bytes": 1024}})"),
              ElementsAre(HasSubstr("incidents.directory: must be an absolute path"),
                          HasSubstr("incidents.before: must be between 0s and 1h"),
                          HasSubstr("incidents.max_count: must be between 1 and 100000"),
                          HasSubstr("incidents.max_bytes: must be between 16777216 and")));
}

// The recorder and the incidents each prune their own directory: not one directory, and neither
// inside the other; siblings (as the defaults, in the state directory) are fine.
TEST(ConfigTest, TheRecordersAndTheIncidentsDirectoriesAreApart) {
  const auto with = [](const std::string& recorder, const std::string& incidents) {
    return R"({"recorder": {"directory": ")" + recorder + R"("}, "incidents": {"directory": ")" +
           incidents + R"("}})";
  };
  EXPECT_THAT(Problems(with("/srv/nm/archive", "/srv/nm/archive/")),
              ElementsAre(HasSubstr("incidents.directory: must not be the recorder's directory")));
  EXPECT_THAT(Problems(with("/srv/nm", "/srv/nm/archive/../incidents")),
              ElementsAre(HasSubstr("the recorder's /srv/nm/ contains the incidents'")));
  EXPECT_THAT(Problems(with("/srv/nm/a/b", "/srv/nm/a")),
              ElementsAre(HasSubstr("the recorder's /srv/nm/a/b/ is inside the incidents'")));
  EXPECT_EQ(Parse(with("/srv/nm/archive", "/srv/nm/incidents")).incidents.directory,
            "/srv/nm/incidents");
  EXPECT_EQ(Parse(with("/srv/nm/arch", "/srv/nm/archive")).recorder.options.directory,
            "/srv/nm/arch");
  EXPECT_FALSE(Parse(R"({"recorder": {"directory": "/srv/nm", "enabled": false},
                         "incidents": {"directory": "/srv/nm"}})")
                   .recorder.enabled);
}

TEST(ConfigTest, TheKubeletSocketIsAnAbsolutePathThatFitsAUnixSocket) {
  const std::string want =
      "test.json: kubernetes.pod_resources_socket: must be an absolute path of at most 107 bytes";
  EXPECT_THAT(Problems(R"({"kubernetes": {"pod_resources_socket": "kubelet.sock"}})"),
              ElementsAre(want));
  EXPECT_THAT(Problems(R"({"kubernetes": {"pod_resources_socket": ""}})"), ElementsAre(want));
  EXPECT_THAT(
      Problems("{\"kubernetes\": {\"pod_resources_socket\": \"/" + std::string(107, 'k') + "\"}}"),
      ElementsAre(want));
  EXPECT_THAT(Problems(R"({"kubernetes": {"enabled": "auto"}})"),
              ElementsAre(HasSubstr("kubernetes.enabled")));
}

TEST(ConfigTest, TheKernelLogIsAnAbsolutePathReadInBoundedBatches) {
  EXPECT_THAT(Problems(R"({"kernel_log": {"path": "kmsg"}})"),
              ElementsAre("test.json: kernel_log.path: must be an absolute path"));
  EXPECT_THAT(Problems(R"({"kernel_log": {"max_records_per_read": 0}})"),
              ElementsAre(HasSubstr("kernel_log.max_records_per_read: must be between 1 and")));
  EXPECT_THAT(Problems(R"({"kernel_log": {"enabled": "yes"}})"),
              ElementsAre(HasSubstr("kernel_log.enabled")));
}

// Clients take 20 s of silence for a lost connection: a daemon must heartbeat well within it.
TEST(ConfigTest, HeartbeatsComeWithinTheClientsStallTimeout) {
  EXPECT_THAT(Problems(R"({"limits": {"heartbeat_interval": "20s"}})"),
              ElementsAre("test.json: limits.heartbeat_interval: must be between 100ms and 10s "
                          "(got \"20s\")"));
}

// nlohmann throws out_of_range, not parse_error, for a number no double holds: still one problem.
TEST(ConfigTest, NumbersOutOfRangeAreAProblemNotACrash) {
  EXPECT_THAT(Problems(R"({"period": 1e400})"),
              ElementsAre("test.json: number overflow parsing '1e400'"));
}

TEST(ConfigTest, CommentsAreAccepted) {
  EXPECT_EQ(Parse("// top\n{ /* inline */ \"seed\": 7 // trailing\n}\n").backend.seed, 7u);
}

TEST(ConfigTest, WrongTypesAreReported) {
  EXPECT_THAT(Problems(R"({"seed": "1"})"), ElementsAre("test.json: seed: expected an integer"));
  EXPECT_THAT(Problems(R"({"seed": 1.5})"), ElementsAre("test.json: seed: expected an integer"));
  EXPECT_THAT(Problems(R"({"device": 3})"), ElementsAre("test.json: device: expected a string"));
  EXPECT_THAT(Problems(R"({"listeners": []})"),
              ElementsAre("test.json: listeners: expected an object"));
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"enabled": "yes"}}})"),
              ElementsAre("test.json: listeners.unix.enabled: expected true or false"));
  EXPECT_THAT(Problems(R"({"period": 1})"),
              ElementsAre("test.json: period: expected a duration string such as \"5s\""));
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"mode": 660}}})"),
              ElementsAre("test.json: listeners.unix.mode: expected a string"));
}

TEST(ConfigTest, UnknownKeysAreReportedWithTheirPath) {
  EXPECT_THAT(Problems(R"({"perod": "1s"})"), ElementsAre("test.json: perod: unknown field"));
  EXPECT_THAT(Problems(R"({"limits": {"queue_dept": 1}})"),
              ElementsAre("test.json: limits.queue_dept: unknown field"));
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"owner": "root"}}})"),
              ElementsAre("test.json: listeners.unix.owner: unknown field"));
}

TEST(ConfigTest, DurationsNeedAUnitAndARange) {
  EXPECT_THAT(Problems(R"({"period": "5"})"),
              ElementsAre("test.json: period: \"5\": missing unit (use e.g. \"5s\")"));
  EXPECT_THAT(Problems(R"({"period": "1ms"})"),
              ElementsAre("test.json: period: must be between 10ms and 1h (got \"1ms\")"));
  EXPECT_THAT(Problems(R"({"period": "2h", "history_retention": "3h"})"),
              ElementsAre("test.json: period: must be between 10ms and 1h (got \"2h\")"));
  EXPECT_THAT(Problems(R"({"limits": {"handshake_timeout": "10ms"}})"),
              ElementsAre("test.json: limits.handshake_timeout: must be between 100ms and 1h "
                          "(got \"10ms\")"));
  EXPECT_EQ(Parse(R"({"period": "10ms", "history_retention": "10s"})").period, milliseconds(10));
}

TEST(ConfigTest, SpeedMustBePositiveAndBounded) {
  const char* kWhat = "test.json: speed: must be above 0 and at most 10000 (got ";
  EXPECT_THAT(Problems(R"({"speed": 0})"), ElementsAre(std::string(kWhat) + "0)"));
  EXPECT_THAT(Problems(R"({"speed": -1})"), ElementsAre(std::string(kWhat) + "-1)"));
  EXPECT_THAT(Problems(R"({"speed": 10000.5})"), ElementsAre(std::string(kWhat) + "10000.5)"));
  EXPECT_EQ(Parse(R"({"speed": 0.25})").backend.speed, 0.25);
}

TEST(ConfigTest, RetentionMustCoverThePeriodAndAtMostADay) {
  EXPECT_THAT(Problems(R"({"period": "2s", "history_retention": "1s"})"),
              ElementsAre("test.json: history_retention: must be at least period, \"2s\" "
                          "(got \"1s\")"));
  EXPECT_THAT(Problems(R"({"history_retention": "25h"})"),
              ElementsAre("test.json: history_retention: must be between 0s and 24h "
                          "(got \"25h\")"));
  EXPECT_EQ(Parse(R"({"period": "2s", "history_retention": "2s"})").history_retention, seconds(2));
}

TEST(ConfigTest, IntegersAreRangeChecked) {
  EXPECT_THAT(Problems(R"({"seed": -1})"),
              ElementsAre("test.json: seed: must be between 0 and 9223372036854775807 (got -1)"));
  EXPECT_THAT(Problems(R"({"seed": 18446744073709551615})"),
              ElementsAre("test.json: seed: too large (got 18446744073709551615)"));
  EXPECT_THAT(Problems(R"({"limits": {"queue_depth": 0}})"),
              ElementsAre("test.json: limits.queue_depth: must be between 1 and 65536 (got 0)"));
  EXPECT_THAT(Problems(R"({"limits": {"max_clients": 100001}})"),
              ElementsAre("test.json: limits.max_clients: must be between 1 and 100000 "
                          "(got 100001)"));
}

TEST(ConfigTest, FileModesAreOctalStrings) {
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"mode": "0999"}}})"),
              ElementsAre("test.json: listeners.unix.mode: \"0999\": not an octal mode "
                          "(use e.g. \"0660\")"));
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"mode": "rw"}}})"),
              ElementsAre("test.json: listeners.unix.mode: \"rw\": not an octal mode "
                          "(use e.g. \"0660\")"));
  EXPECT_EQ(ParseFileMode("1777").status().message(), "\"1777\": must be 0000 to 0777");
  EXPECT_EQ(*ParseFileMode("660"), 0660);
  EXPECT_EQ(*ParseFileMode("0"), 0);
  EXPECT_EQ(FormatFileMode(0660), "0660");
  EXPECT_EQ(FormatFileMode(07), "0007");
}

TEST(ConfigTest, UnixSocketPathMustBeAbsoluteAndFit) {
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"path": "run/x.sock"}}})"),
              ElementsAre("test.json: listeners.unix.path: must be an absolute path "
                          "(got \"run/x.sock\")"));
  const std::string long_path = "/" + std::string(107, 'x');
  EXPECT_THAT(Problems(R"({"listeners": {"unix": {"path": ")" + long_path + "\"}}}"),
              ElementsAre("test.json: listeners.unix.path: longer than 107 bytes, the limit for "
                          "a unix socket path"));
}

TEST(ListenAddressTest, ParsesHostsAndPorts) {
  EXPECT_EQ(*ParseListenAddress("127.0.0.1:9413"), (ListenAddress{"127.0.0.1", 9413}));
  EXPECT_EQ(*ParseListenAddress("[::1]:9413"), (ListenAddress{"::1", 9413}));
  EXPECT_EQ(*ParseListenAddress("monitor-01.example.com:1"),
            (ListenAddress{"monitor-01.example.com", 1}));
  EXPECT_EQ(*ParseListenAddress("0.0.0.0:65535"), (ListenAddress{"0.0.0.0", 65535}));
  EXPECT_EQ(FormatListenAddress({"::1", 9413}), "[::1]:9413");
  EXPECT_EQ(FormatListenAddress({"localhost", 80}), "localhost:80");
}

TEST(ListenAddressTest, BadAddressesSayWhatIsWrong) {
  const auto error = [](std::string_view text) {
    return ParseListenAddress(text).status().message();
  };
  EXPECT_EQ(error("localhost"),
            "\"localhost\": missing port (use HOST:PORT, e.g. \"127.0.0.1:9413\")");
  EXPECT_EQ(error("localhost:"),
            "\"localhost:\": missing port (use HOST:PORT, e.g. \"127.0.0.1:9413\")");
  EXPECT_EQ(error("1.2.3.4:99999"), "\"1.2.3.4:99999\": port must be a number from 1 to 65535");
  EXPECT_EQ(error("1.2.3.4:0"), "\"1.2.3.4:0\": port must be a number from 1 to 65535");
  EXPECT_EQ(error("1.2.3.4:http"), "\"1.2.3.4:http\": port must be a number from 1 to 65535");
  EXPECT_EQ(error("::1:9413"),
            "\"::1:9413\": put an IPv6 address in brackets, e.g. \"[::1]:9413\"");
  EXPECT_EQ(error("[::1:9413"), "\"[::1:9413\": missing \"]\"");
  EXPECT_EQ(error("[::1]9413"), "\"[::1]9413\": expected \":PORT\" after \"]\"");
  EXPECT_EQ(error("[::g]:80"), "\"[::g]:80\": not a valid IPv6 address");
  EXPECT_EQ(error("1.2.3.999:80"), "\"1.2.3.999:80\": not a valid IPv4 address");
  EXPECT_EQ(error("bad_host:80"), "\"bad_host:80\": not a valid host name");
  EXPECT_EQ(error(":9413"), "\":9413\": missing host (e.g. 0.0.0.0 for every interface)");
  EXPECT_EQ(error(""), "\"\": empty (use HOST:PORT, e.g. \"127.0.0.1:9413\")");
}

TEST(ListenAddressTest, LoopbackIsTheLocalHostOnly) {
  EXPECT_TRUE(IsLoopback({"127.0.0.1", 1}));
  EXPECT_TRUE(IsLoopback({"127.8.9.10", 1}));
  EXPECT_TRUE(IsLoopback({"::1", 1}));
  EXPECT_TRUE(IsLoopback({"::ffff:127.0.0.1", 1}));
  EXPECT_TRUE(IsLoopback({"localhost", 1}));
  EXPECT_TRUE(IsLoopback({"LocalHost", 1}));
  EXPECT_FALSE(IsLoopback({"0.0.0.0", 1}));
  EXPECT_FALSE(IsLoopback({"::", 1}));
  EXPECT_FALSE(IsLoopback({"128.0.0.1", 1}));
  EXPECT_FALSE(IsLoopback({"10.0.0.1", 1}));
  EXPECT_FALSE(IsLoopback({"localhost.example.com", 1}));
}

TEST(ConfigTest, AddressesInTheFile) {
  EXPECT_THAT(Problems(R"({"listeners": {"metrics": {"address": "localhost"}}})"),
              ElementsAre("test.json: listeners.metrics.address: \"localhost\": missing port "
                          "(use HOST:PORT, e.g. \"127.0.0.1:9413\")"));
  EXPECT_THAT(Problems(R"({"listeners": {"tcp": {"address": "1.2.3.4:99999"}}})"),
              ElementsAre("test.json: listeners.tcp.address: \"1.2.3.4:99999\": port must be a "
                          "number from 1 to 65535"));
  EXPECT_EQ(Parse(R"({"listeners": {"tcp": {"address": "[::1]:9413"}, "unix": {"mode": "0666"}}})")
                .listeners.tcp,
            (ListenAddress{"::1", 9413}));
}

// Loopback TCP lets every local user in: with the unix socket restricted to a group, it would be
// a way around that restriction, so it needs the token too.
TEST(ConfigTest, LoopbackTcpNeedsTheTokenWhenTheUnixSocketIsRestricted) {
  EXPECT_THAT(
      Problems(R"({"listeners": {"tcp": {"address": "127.0.0.1:9414"}}})"),
      ElementsAre("test.json: listeners.tcp.address: every local user can connect to loopback "
                  "TCP, which would bypass the unix socket's mode 0660; set auth_token_file "
                  "(clients pass it with --token-file), or make listeners.unix.mode 0666 if "
                  "every user may read the metrics"));
  DaemonConfig c = Parse(R"({"listeners": {"tcp": {"address": "127.0.0.1:9414"}},
                             "auth_token_file": "/etc/neuron-monitor/token"})");
  EXPECT_TRUE(TcpRequiresToken(c));
  c = Parse(R"({"listeners": {"tcp": {"address": "127.0.0.1:9414"}, "unix": {"mode": "0666"}}})");
  EXPECT_FALSE(TcpRequiresToken(c));
  c.listeners.unix_socket.enabled = false;  // no socket at all: TCP is the only way in
  EXPECT_TRUE(TcpRequiresToken(c));
  c.listeners.tcp = ListenAddress{"0.0.0.0", 9414};
  c.listeners.unix_socket.enabled = true;
  EXPECT_TRUE(TcpRequiresToken(c));
}

// The history's memory is estimated for the instance: a long retention at a short period on a big
// instance would outgrow the service's MemoryMax=.
TEST(ConfigTest, HistoryMustFitTheMemoryBudget) {
  const std::vector<std::string> p = Problems(
      R"({"device": "sim:trn2-ultraserver", "period": "100ms", "history_retention": "2h"})");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_THAT(p[0],
              ::testing::StartsWith("test.json: history_retention: 2h of sim:trn2-ultraserver "
                                    "snapshots every 100ms needs about "));
  EXPECT_THAT(p[0], ::testing::HasSubstr("MiB, over limits.max_history_bytes (128 MiB)"));
  // The default retention fits on every preset.
  for (const char* device : {"sim:trn1.2xlarge", "sim:trn2.48xlarge", "sim:trn2-ultraserver"}) {
    EXPECT_EQ(Parse(std::string(R"({"device": ")") + device + R"("})").backend.device, device);
  }
  EXPECT_EQ(Parse(R"({"device": "sim:trn2-ultraserver", "period": "100ms",
                      "history_retention": "2h", "limits": {"max_history_bytes": 68719476736}})")
                .history_retention,
            hours(2));
}

TEST(ConfigTest, ListenersOffLoopbackRequireAToken) {
  EXPECT_THAT(Problems(R"({"listeners": {"tcp": {"address": "0.0.0.0:7000"}}})"),
              ElementsAre("test.json: listeners.tcp.address: a listener off loopback requires "
                          "auth_token_file, or TLS with client_auth_type "
                          "RequireAndVerifyClientCert",
                          StartsWith("test.json: listeners.tcp.address: a stream listener off "
                                     "loopback without TLS sends the token and every figure in "
                                     "clear; set listeners.tcp.tls.cert_file and key_file, or "
                                     "listeners.tcp.allow_plaintext: true")));
  EXPECT_THAT(Problems(R"({"listeners": {"metrics": {"address": "node1:9413"}}})"),
              ElementsAre("test.json: listeners.metrics.address: a listener off loopback "
                          "requires auth_token_file, or TLS with client_auth_type "
                          "RequireAndVerifyClientCert"));
  const DaemonConfig c = Parse(R"({"auth_token_file": "/etc/t", "listeners": {"tcp": {
      "address": "0.0.0.0:7000", "allow_plaintext": true}}})");
  EXPECT_EQ(c.listeners.tcp, (ListenAddress{"0.0.0.0", 7000}));
  // TLS instead of plaintext; a verified client certificate instead of the token.
  Parse(R"({"auth_token_file": "/etc/t", "listeners": {"tcp": {"address": "0.0.0.0:7000",
      "tls": {"cert_file": "/etc/c.pem", "key_file": "/etc/c.key"}}}})");
  Parse(R"({"listeners": {"tcp": {"address": "0.0.0.0:7000",
      "tls": {"cert_file": "/etc/c.pem", "key_file": "/etc/c.key", "client_ca_file": "/etc/ca.pem",
              "client_auth_type": "RequireAndVerifyClientCert"}},
      "metrics": {"address": "0.0.0.0:9413",
      "tls": {"cert_file": "/etc/c.pem", "key_file": "/etc/c.key", "client_ca_file": "/etc/ca.pem",
              "client_auth_type": "RequireAndVerifyClientCert"}}}})");
  // A certificate given but not required leaves clients without one unauthenticated.
  EXPECT_THAT(Problems(R"({"listeners": {"metrics": {"address": "0.0.0.0:9413",
      "tls": {"cert_file": "/etc/c.pem", "key_file": "/etc/c.key", "client_ca_file": "/etc/ca.pem",
              "client_auth_type": "VerifyClientCertIfGiven"}}}})"),
              ElementsAre(HasSubstr("a listener off loopback requires auth_token_file")));
}

// The start-up warnings: a listener off loopback without TLS, never one on loopback or with TLS.
TEST(ConfigTest, PlaintextOffLoopbackIsWarnedOf) {
  DaemonConfig c = DefaultConfig();
  EXPECT_THAT(PlaintextWarnings(c), ::testing::IsEmpty()) << "loopback /metrics";
  c.listeners.tcp = ListenAddress{"10.0.0.5", 9414};
  c.listeners.metrics = ListenAddress{"0.0.0.0", 9413};
  EXPECT_THAT(PlaintextWarnings(c),
              ElementsAre(StartsWith("listeners.tcp.address 10.0.0.5:9414 is off loopback without "
                                     "TLS"),
                          StartsWith("listeners.metrics.address 0.0.0.0:9413 is off loopback "
                                     "without TLS")));
  c.listeners.tcp_tls.cert_file = "/c.pem";
  c.listeners.tcp_tls.key_file = "/k.pem";
  c.listeners.metrics = ListenAddress{"localhost", 9413};
  EXPECT_THAT(PlaintextWarnings(c), ::testing::IsEmpty());
}

TEST(ConfigTest, TlsKeysAreCheckedByName) {
  const auto tls = [](const std::string& keys) {
    return R"({"auth_token_file": "/t", "listeners": {"tcp": {"address": "127.0.0.1:7000",
        "tls": {"cert_file": "/c.pem",
        "key_file": "/c.key", )" +
           keys + "}}}}";
  };
  EXPECT_THAT(Problems(tls(R"("min_version": "TLS10")")),
              ElementsAre("test.json: listeners.tcp.tls.min_version: TLS10 is refused: TLS 1.0 "
                          "and 1.1 are deprecated (RFC 8996); use TLS12 or TLS13"));
  EXPECT_THAT(Problems(tls(R"("min_version": "TLS11")")),
              ElementsAre(HasSubstr("listeners.tcp.tls.min_version: TLS11 is refused")));
  EXPECT_THAT(Problems(tls(R"("min_version": "TLS13", "max_version": "TLS12")")),
              ElementsAre("test.json: listeners.tcp.tls.max_version: TLS12 is below "
                          "min_version TLS13"));
  EXPECT_THAT(Problems(tls(R"("max_version": "SSL3")")),
              ElementsAre(HasSubstr("listeners.tcp.tls.max_version: unknown version \"SSL3\"")));
  EXPECT_THAT(Problems(tls(R"("client_auth_type": "RequireAndVerifyClientCert")")),
              ElementsAre(HasSubstr("listeners.tcp.tls.client_ca_file: client_auth_type "
                                    "RequireAndVerifyClientCert verifies client certificates")));
  EXPECT_THAT(Problems(tls(R"("client_auth_type": "Always")")),
              ElementsAre(HasSubstr("client_auth_type: unknown value \"Always\" (NoClientCert, "
                                    "RequestClientCert, RequireAnyClientCert, "
                                    "VerifyClientCertIfGiven, RequireAndVerifyClientCert)")));
  EXPECT_THAT(Problems(tls(R"("client_allowed_sans": ["a.example"])")),
              ElementsAre(HasSubstr("client_allowed_sans: has effect only when")));
  EXPECT_THAT(Problems(tls(R"("cipher_suites": ["TLS_RSA_WITH_RC4_128_SHA"])")),
              ElementsAre(HasSubstr("cipher_suites: unknown name \"TLS_RSA_WITH_RC4_128_SHA\"")));
  EXPECT_THAT(Problems(tls(R"("cipher_suites": ["TLS_AES_128_GCM_SHA256"])")),
              ElementsAre(HasSubstr("TLS 1.3's suites are not configurable")));
  EXPECT_THAT(Problems(tls(R"("curve_preferences": ["CurveP256", "CurveP256"])")),
              ElementsAre(HasSubstr("curve_preferences: \"CurveP256\" is listed twice")));
  EXPECT_THAT(Problems(tls(R"("curve_preferences": "X25519")")),
              ElementsAre(HasSubstr("curve_preferences: expected an array")));
  EXPECT_THAT(Problems(tls(R"("curve_preferences": [1])")),
              ElementsAre(HasSubstr("curve_preferences: expected a list of non-empty strings")));
  EXPECT_THAT(Problems(R"({"auth_token_file": "/t", "listeners": {"tcp": {
                           "address": "127.0.0.1:7000", "tls": {"cert_file": "/c.pem"}}}})"),
              ElementsAre("test.json: listeners.tcp.tls.key_file: TLS needs both cert_file and "
                          "key_file"));
  EXPECT_THAT(Problems(R"({"listeners": {"metrics": {"tls": {"cert_file": "c.pem",
                           "key_file": "/c.key"}}}})"),
              ElementsAre("test.json: listeners.metrics.tls.cert_file: must be an absolute path "
                          "(got \"c.pem\")"));
  EXPECT_THAT(Problems(R"({"listeners": {"metrics": {"tls": {"client_ca_file": "/ca.pem"}}}})"),
              ElementsAre("test.json: listeners.metrics.tls.client_ca_file: set, but TLS is off "
                          "(cert_file is empty)"));
  const DaemonConfig ok = Parse(tls(
      R"("client_auth_type": "RequireAndVerifyClientCert", "client_ca_file": "/ca.pem",
         "client_allowed_sans": ["client.example"], "min_version": "TLS13",
         "cipher_suites": ["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"],
         "curve_preferences": ["CurveP384", "X25519"])"));
  EXPECT_TRUE(ClientCertAuthenticates(ok.listeners.tcp_tls));
  EXPECT_EQ(*OpenSslCipherName("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
            "ECDHE-ECDSA-AES256-GCM-SHA384");
  EXPECT_EQ(*OpenSslGroupName("CurveP384"), "P-384");
  EXPECT_EQ(*ParseTlsVersion("TLS13"), 0x0304);
}

TEST(ConfigTest, LogLevels) {
  EXPECT_THAT(Problems(R"({"log_level": "loud"})"),
              ElementsAre("test.json: log_level: \"loud\" is not one of error, warn, info, debug"));
  for (LogLevel level : {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug}) {
    EXPECT_EQ(*ParseLogLevel(LogLevelName(level)), level);
  }
  EXPECT_EQ(LogLevelName(LogLevel::kWarn), "warn");
  EXPECT_EQ(Parse(R"({"log_level": "error"})").log_level, LogLevel::kError);
}

TEST(ConfigTest, DeviceAndScenarioAreChecked) {
  EXPECT_THAT(Problems(R"({"device": "gpu:a100"})"),
              ElementsAre("test.json: device: device \"gpu:a100\": only simulated devices are "
                          "supported (use sim:<preset>, e.g. sim:trn2.48xlarge)"));
  EXPECT_THAT(Problems(R"({"device": "sim:trn2.48xlarge:lnc=3"})"),
              ElementsAre("test.json: device: device \"sim:trn2.48xlarge:lnc=3\": unknown option "
                          "\"lnc=3\" (use lnc=1 or lnc=2)"));
  const std::vector<std::string> unknown = Problems(R"({"scenario": "nope"})");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_THAT(unknown[0], StartsWith("test.json: scenario: unknown scenario \"nope\" (built-in: "));
  EXPECT_THAT(unknown[0], HasSubstr("healthy-training"));
  const std::string missing = TempPath("missing-scenario.json");
  EXPECT_THAT(
      Problems(R"({"scenario": ")" + missing + "\"}"),
      ElementsAre("test.json: scenario: " + missing + ": cannot open: No such file or directory"));
  // A scenario that names devices the instance does not have is refused here, not at start.
  EXPECT_THAT(Problems(R"({"device": "sim:trn1.2xlarge", "scenario": "straggler"})"),
              ElementsAre(StartsWith("test.json: scenario: straggler: ")));
  EXPECT_THAT(Problems(R"({"device": "sim:trn1.2xlarge", "scenario": "straggler"})")[0],
              HasSubstr("does not exist on trn1.2xlarge"));
}

TEST(ConfigTest, MalformedJsonNamesLineAndColumn) {
  const std::vector<std::string> problems = Problems("{\n  \"seed\": 1,\n}\n");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], StartsWith("test.json: parse error at line 3, column 1: "));
  EXPECT_THAT(Problems("[1]"), ElementsAre("test.json: (top level): expected an object"));
}

TEST(ConfigTest, EveryProblemIsReportedInOrder) {
  EXPECT_THAT(Problems(R"({"seed": "x", "period": "1ms", "bogus": 1, "log_level": "loud",
                          "limits": {"queue_depth": 0, "extra": true},
                          "listeners": {"unix": {"mode": "rw"}, "tcp": {"address": "h:1"}}})"),
              ElementsAre("test.json: seed: expected an integer",
                          "test.json: listeners.unix.mode: \"rw\": not an octal mode "
                          "(use e.g. \"0660\")",
                          "test.json: limits.extra: unknown field",
                          "test.json: log_level: \"loud\" is not one of error, warn, info, debug",
                          "test.json: bogus: unknown field",
                          "test.json: period: must be between 10ms and 1h (got \"1ms\")",
                          "test.json: listeners.tcp.address: a listener off loopback requires "
                          "auth_token_file, or TLS with client_auth_type "
                          "RequireAndVerifyClientCert",
                          StartsWith("test.json: listeners.tcp.address: a stream listener off "
                                     "loopback without TLS"),
                          "test.json: limits.queue_depth: must be between 1 and 65536 (got 0)"));
}

TEST(ConfigTest, ValidateConfigChecksCommandLineOverrides) {
  DaemonConfig c = DefaultConfig();
  c.period = milliseconds(5);
  c.listeners.tcp = ListenAddress{"0.0.0.0", 7000};
  std::vector<std::string> problems;
  const Status status = ValidateConfig(c, &problems, "command line");
  EXPECT_THAT(problems,
              ElementsAre("command line: period: must be between 10ms and 1h (got \"5ms\")",
                          "command line: listeners.tcp.address: a listener off loopback "
                          "requires auth_token_file, or TLS with client_auth_type "
                          "RequireAndVerifyClientCert",
                          StartsWith("command line: listeners.tcp.address: a stream listener off "
                                     "loopback without TLS")));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), problems.front());
  EXPECT_FALSE(ValidateConfig(c, nullptr, "command line").ok());
}

TEST(ConfigTest, MissingFileIsOneProblem) {
  const std::string path = TempPath("absent.json");
  std::vector<std::string> problems;
  Result<DaemonConfig> config = LoadConfigFile(path, &problems);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(problems, ElementsAre(path + ": cannot open: No such file or directory"));
}

TEST(ConfigTest, FilesAreReadAndBounded) {
  const std::string path = TempPath("neuron-monitord.json");
  std::ofstream(path) << "{\"seed\": 9}\n";
  EXPECT_EQ(LoadConfigFile(path, nullptr)->backend.seed, 9u);
  std::ofstream(path) << "{\"seed\": \"9\"}\n";
  std::vector<std::string> problems;
  EXPECT_FALSE(LoadConfigFile(path, &problems).ok());
  EXPECT_THAT(problems, ElementsAre(path + ": seed: expected an integer"));
  std::ofstream(path) << "{}" << std::string(1 << 20, ' ');
  EXPECT_EQ(LoadConfigFile(path, nullptr).status().message(), path + ": file larger than 1 MiB");
  std::filesystem::remove(path);
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(LoadConfigFile(dir, nullptr).status().message(), dir + ": cannot read: Is a directory");
}

}  // namespace
}  // namespace neuronmon::daemon
