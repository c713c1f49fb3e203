// neuron-monitor and neuron-ls as users run them: against a daemon on a temp socket, in a pipe
// (`neuron-monitor | head -1` ends promptly and silently), across a daemon restart (a notice on
// stderr, then documents again), and with bad config files (one clear error, exit 1).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/integration/shell.h"
#include "tests/process_gone.h"
#include "tests/temp_dir.h"

namespace neuronmon::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kMonitor = NEURONMON_MONITOR_BINARY;
constexpr const char* kFastConfig = R"({"period": "50ms",
  "neuron_runtimes": [{"metrics": [{"type": "neuroncore_counters"}, {"type": "memory_used"}]}],
  "system_metrics": [{"type": "memory_info"}]})";

std::string FastConfig(const DaemonFixture& d) {
  const std::string path = (d.dir() / "fast.conf").string();
  std::ofstream(path) << kFastConfig;
  return path;
}
const std::string kLs = NEURONMON_LS_BINARY;
const std::string kTop = NEURONMON_TOP_BINARY;

TEST(NeuronMonitorProcess, DocumentsFromADaemonOnePerLine) {
  DaemonFixture d;
  const Output o =
      Shell(kMonitor + " --socket " + d.socket_path() + " -c " + FastConfig(d) + " --count 3");
  ASSERT_EQ(o.status, 0) << o.err;
  std::istringstream lines(o.out);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(line);
    EXPECT_EQ(doc.begin().key(), "neuron_runtime_data");
    EXPECT_EQ(doc["instance_info"]["instance_type"], "trn1.2xlarge");
    EXPECT_EQ(doc["neuron_runtime_data"].size(), 1u);
  }
  EXPECT_EQ(n, 3);
}

TEST(NeuronMonitorProcess, HeadOneExitsPromptlyAndSilently) {
  DaemonFixture d;
  const auto start = std::chrono::steady_clock::now();
  // pipefail: neuron-monitor's own status must be 0 when the reader goes away after one line.
  const Output o =
      Shell("set -o pipefail; " + kMonitor + " --socket " + d.socket_path() + " | head -1");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(o.status, 0);
  EXPECT_EQ(o.err, "");
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1);
  EXPECT_TRUE(nlohmann::json::accept(o.out)) << o.out;
}

TEST(NeuronMonitorProcess, BadConfigFilesGetOneClearErrorAndExitOne) {
  const fs::path dir = fs::temp_directory_path() / ("neuronmon-cfg-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path bad = dir / "monitor.conf";
  std::ofstream(bad)
      << R"({"period": "1s", "neuron_runtimes": [{"metrics": [{"type": "gpu_counters"}]}]})";
  const Output o = Shell(kMonitor + " --standalone -c " + bad.string());
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(o.err,
            "neuron-monitor: " + bad.string() +
                ": neuron_runtimes[0].metrics[0].type: unknown metric group \"gpu_counters\" (use "
                "neuroncore_counters, memory_used, neuron_runtime_vcpu_usage, execution_stats, "
                "collectives_stats, bottleneck_analysis)\n");
  std::ofstream(bad) << R"({"period": "fast"})";
  EXPECT_EQ(Shell(kMonitor + " --standalone -c " + bad.string()).status, 1);
  fs::remove_all(dir);
}

TEST(NeuronMonitorProcess, SurvivesADaemonRestartWithANotice) {
  auto d = std::make_unique<DaemonFixture>();
  const std::string socket = d->socket_path();
  const fs::path out = d->dir() / "monitor.out", err = d->dir() / "monitor.err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 1);
    ::dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
    // Every group each base period, so documents flow quickly.
    const std::string config = (d->dir() / "fast.conf").string();
    std::ofstream(config) << kFastConfig;
    ::execl(kMonitor.c_str(), kMonitor.c_str(), "--socket", socket.c_str(), "-c", config.c_str(),
            nullptr);
    ::_exit(127);
  }
  auto lines = [&] {
    std::ifstream in(out);
    return static_cast<int>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
  };
  auto wait_for = [&](auto predicate) {
    for (int i = 0; i < 200 && !predicate(); ++i) std::this_thread::sleep_for(milliseconds(50));
    return predicate();
  };
  EXPECT_TRUE(wait_for([&] { return lines() >= 3; }));
  d->Stop();
  auto stderr_text = [&] {
    std::stringstream s;
    s << std::ifstream(err).rdbuf();
    return s.str();
  };
  EXPECT_TRUE(wait_for([&] { return stderr_text().find("reconnecting") != std::string::npos; }))
      << stderr_text();
  const int before = lines();
  auto restarted = std::make_unique<DaemonFixture>(
      [&](daemon::DaemonConfig& c) { c.listeners.unix_socket.options.path = socket; });
  EXPECT_TRUE(wait_for([&] { return lines() >= before + 3; })) << stderr_text();
  EXPECT_NE(stderr_text().find("neuron-monitord restarted"), std::string::npos) << stderr_text();
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

TEST(NeuronMonitorProcess, EventsPrintsTheKeptEventsAndExits) {
  DaemonFixture d;
  const Output o = Shell(kMonitor + " --socket " + d.socket_path() + " --events");
  EXPECT_EQ(o.status, 0) << o.err;
  std::istringstream in(o.out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << o.err;
  const nlohmann::json first = nlohmann::json::parse(line);
  EXPECT_EQ(first["seq"], 1);
  EXPECT_EQ(first["kind"], "daemon");
  EXPECT_EQ(first["after"], "started");
  while (std::getline(in, line)) {
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
  }
  EXPECT_EQ(Shell(kMonitor + " --standalone --follow").status, 2);
}

TEST(NeuronMonitorProcess, EventsFollowAcrossADaemonRestart) {
  auto d = std::make_unique<DaemonFixture>();
  const std::string socket = d->socket_path();
  const fs::path out = d->dir() / "events.out", err = d->dir() / "events.err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 1);
    ::dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
    ::execl(kMonitor.c_str(), kMonitor.c_str(), "--socket", socket.c_str(), "--events", "--follow",
            nullptr);
    ::_exit(127);
  }
  // (seq, after) of each daemon event printed.
  auto printed = [&] {
    std::vector<std::pair<int, std::string>> got;
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
      if (e.is_object() && e["kind"] == "daemon") got.emplace_back(e["seq"], e["after"]);
    }
    return got;
  };
  auto wait_for = [&](auto predicate) {
    for (int i = 0; i < 200 && !predicate(); ++i) std::this_thread::sleep_for(milliseconds(50));
    return predicate();
  };
  EXPECT_TRUE(wait_for([&] { return printed().size() >= 1; }));
  d->Stop();
  EXPECT_TRUE(wait_for([&] { return printed().size() >= 2; }));
  auto restarted = std::make_unique<DaemonFixture>(
      [&](daemon::DaemonConfig& c) { c.listeners.unix_socket.options.path = socket; });
  EXPECT_TRUE(wait_for([&] { return printed().size() >= 3; }));
  const std::vector<std::pair<int, std::string>> expected = {
      {1, "started"}, {2, "stopping"}, {1, "started"}};
  EXPECT_EQ(printed(), expected) << "the new daemon's events from its first";
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

TEST(NeuronLsProcess, ListsTheDaemonsDevices) {
  DaemonFixture d({}, "sim:trn2.48xlarge");
  const Output table = Shell(kLs + " --socket " + d.socket_path());
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.rfind("instance-type: trn2.48xlarge\ninstance-id: i-sim", 0), 0u)
      << table.out;
  EXPECT_NE(
      table.out.find("| 0      | 4      | 0-3      | 96 GB  | 12, 3, 4, 1   | 0000:cc:00.0 |"),
      std::string::npos)
      << table.out;
  const Output json = Shell(kLs + " --socket " + d.socket_path() + " -j");
  ASSERT_EQ(json.status, 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc.size(), 16u);
  EXPECT_EQ(doc[0]["numa_node"], "1");
  EXPECT_EQ(doc[0]["connected_to"], nlohmann::json({12, 3, 4, 1}));
  // Neuron 2.34's spelling of -j prints the same document; a format it does not know is refused.
  const Output format = Shell(kLs + " --socket " + d.socket_path() + " --output-format json");
  ASSERT_EQ(format.status, 0) << format.err;
  const nlohmann::json formatted = nlohmann::json::parse(format.out);
  EXPECT_EQ(formatted.size(), 16u);
  EXPECT_EQ(formatted[0]["connected_to"], nlohmann::json({12, 3, 4, 1}));
  const Output yaml = Shell(kLs + " --socket " + d.socket_path() + " --output-format yaml");
  EXPECT_GE(yaml.status, 100) << yaml.err;
  EXPECT_NE(yaml.err.find("--output-format"), std::string::npos) << yaml.err;
  EXPECT_EQ(yaml.out, "");
  const Output topology = Shell(kLs + " --socket " + d.socket_path() + " -t");
  EXPECT_NE(topology.out.find("Neuron Device Topology"), std::string::npos);
  const Output missing = Shell(kLs + " --socket /nonexistent.sock");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot connect to /nonexistent.sock"), std::string::npos)
      << missing.err;
}

TEST(NeuronLsCheck, AgainstADaemonExitCodesSayTheNodesState) {
  DaemonFixture d({}, "sim:trn1.32xlarge");
  const std::string check = kLs + " --check --socket " + d.socket_path();
  const Output ok = Shell(check);
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out.rfind("healthy: 16 devices ok, ", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find("(neuron-monitord (unix:" + d.socket_path() + "))\n"), std::string::npos)
      << ok.out;
  const Output json = Shell(check + " -j");
  EXPECT_EQ(json.status, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["outcome"], "healthy");
  EXPECT_EQ(doc["devices"], 16);
  EXPECT_EQ(doc["expected_devices"], 16);
  const Output more = Shell(check + " --expect-devices 17");
  EXPECT_EQ(more.status, 1) << more.out;
  EXPECT_EQ(more.out.rfind("unhealthy: 16 of 17 devices (trn1.32xlarge)", 0), 0u) << more.out;
  const Output cores = Shell(check + " --min-free-cores 33");
  EXPECT_EQ(cores.status, 1) << cores.out;
  const Output gone = Shell(kLs + " --check --socket /nonexistent.sock");
  EXPECT_EQ(gone.status, 2) << gone.out;
  EXPECT_EQ(gone.out.rfind("unknown: cannot connect to /nonexistent.sock", 0), 0u) << gone.out;
  for (const char* bad : {" --fail-on sometimes", " --expect-devices many", " --max-age soon",
                          " --replay x", " --no-such-flag"}) {
    const Output usage = Shell(check + bad);
    EXPECT_EQ(usage.status, 3) << bad << ": " << usage.out << usage.err;
    EXPECT_EQ(usage.out, "") << bad;
    EXPECT_EQ(usage.err.rfind("neuron-ls: ", 0), 0u) << bad << ": " << usage.err;
  }
}

TEST(NeuronLsCheck, AFailingDeviceFailsTheCheck) {
  DaemonFixture d(
      [](daemon::DaemonConfig& c) {
        c.backend.scenario = "ecc-degradation";  // device 3: uncorrectable errors from 3 min
        c.backend.speed = 60;
        c.period = milliseconds(200);
      },
      "sim:trn1.32xlarge");
  const std::string check = kLs + " --check --socket " + d.socket_path();
  Output o;
  for (int i = 0; i < 100; ++i) {
    o = Shell(check);
    if (o.status == 1) break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  EXPECT_EQ(o.out.rfind("unhealthy: ND3 failed: ", 0), 0u) << o.out;
}

const std::string kNccomStandIn = NEURONMON_NCCOM_STAND_IN;

// An idle trn1.32xlarge whose device 5 logs `error` hardware errors from the start.
std::string FaultScenario(const test_util::TempDir& dir, const std::string& error) {
  const std::string path = dir.File(error + ".json");
  std::ofstream(path) << R"({"name": "link-)" << error
                      << R"(", "description": "idle, with hardware errors on ND5",
    "instance": "trn1.32xlarge", "runtimes": [],
    "faults": [{"type": "hardware_error", "device": 5, "start": "0s", "error": ")"
                      << error << R"(", "per_second": 5}]})";
  return path;
}

// The active check against daemon `d`, with the stand-in nccom-test asking `d` too and logging
// each run to `log`.
Output Active(const DaemonFixture& d, const std::string& flags, const std::string& log) {
  return Shell("NCCOM_STAND_IN_SOCKET=" + d.socket_path() + " NCCOM_STAND_IN_LOG=" + log + " " +
               kLs + " --check --active --socket " + d.socket_path() + " " + flags);
}

std::string ReadAll(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

TEST(NeuronLsCheck, ActiveRunsNccomTestOnFreeCoresAndJudgesItsBusBandwidth) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.backend.scenario = "idle"; },
                  "sim:trn1.32xlarge");
  const std::string log = (d.dir() / "nccom.log").string();
  const Output ok = Active(d, "--nccom-test " + kNccomStandIn, log);
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out.rfind("healthy: 16 devices ok, 32 free NeuronCores; all-reduce over 32 "
                         "NeuronCores ",
                         0),
            0u)
      << ok.out;
  EXPECT_NE(ok.out.find(" GB/s bus bandwidth, at least 19.20 (5% of trn1.32xlarge's NeuronLink "
                        "384 GB/s)"),
            std::string::npos)
      << ok.out;
  // nccom-test's own command line: the operation first, every core a rank, one large size.
  EXPECT_EQ(ReadAll(log), "allr -r 32 -b 268435456 -e 268435456 -n 20 -d fp32 --check \n");

  const Output json = Active(d, "--nccom-test " + kNccomStandIn + " -j", log);
  EXPECT_EQ(json.status, 0) << json.out << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["active"]["result"], "passed");
  EXPECT_EQ(doc["active"]["ranks"], 32);
  EXPECT_EQ(doc["active"]["reference"], 384);
  EXPECT_GT(doc["active"]["bus_bandwidth"].get<double>(), 19.2);
  EXPECT_EQ(doc["active"]["command"].get<std::string>().rfind(kNccomStandIn + " allr -r 32", 0),
            0u);

  // The operator's own floor, from a known-good node's figure.
  const Output floor = Active(d, "--nccom-test " + kNccomStandIn + " --min-busbw 100000", log);
  EXPECT_EQ(floor.status, 1) << floor.out << floor.err;
  EXPECT_EQ(floor.out.rfind("unhealthy: all-reduce over 32 NeuronCores ", 0), 0u) << floor.out;
  EXPECT_NE(floor.out.find("below --min-busbw 100000.00"), std::string::npos) << floor.out;

  // Found in $PATH under its own name; not installed at all: unknown, with where it looked.
  const fs::path bin = d.dir() / "bin";
  fs::create_directories(bin);
  fs::create_symlink(kNccomStandIn, bin / "nccom-test");
  if (!fs::exists("/opt/aws/neuron/bin/nccom-test")) {  // never the real one, on a Neuron host
    const Output in_path = Active(d, "", log);          // the test's PATH has no nccom-test
    EXPECT_EQ(in_path.status, 2) << in_path.out << in_path.err;
    EXPECT_EQ(in_path.out.rfind("unknown: active check not run: nccom-test is not installed "
                                "(looked in $PATH and /opt/aws/neuron/bin; ",
                                0),
              0u)
        << in_path.out;
  }
  const Output found =
      Shell("PATH=" + bin.string() + ":$PATH NCCOM_STAND_IN_SOCKET=" + d.socket_path() + " " + kLs +
            " --check --active --socket " + d.socket_path());
  EXPECT_EQ(found.status, 0) << found.out << found.err;
  const Output missing = Active(d, "--nccom-test " + (d.dir() / "none").string(), log);
  EXPECT_EQ(missing.status, 2) << missing.out;

  for (const char* bad : {" --active-timeout soon", " --min-busbw -1", " --connect 127.0.0.1:1"}) {
    const Output usage = Active(d, bad, log);
    EXPECT_EQ(usage.status, 3) << bad << ": " << usage.out << usage.err;
  }
  const Output without = Shell(kLs + " --check --min-busbw 5 --socket " + d.socket_path());
  EXPECT_EQ(without.status, 3) << without.out << without.err;
  EXPECT_NE(without.err.find("need --active"), std::string::npos) << without.err;
}

// A device whose link logs collectives errors is only degraded, so the passive check passes; the
// collective shows what that costs.
TEST(NeuronLsCheck, ActiveFindsWhatThePassiveCheckLetsThrough) {
  for (const std::string error : {"collectives", "dma"}) {
    SCOPED_TRACE(error);
    const test_util::TempDir dir;
    const std::string scenario = FaultScenario(dir, error);
    DaemonFixture faulty([&](daemon::DaemonConfig& c) { c.backend.scenario = scenario; },
                         "sim:trn1.32xlarge");
    const std::string log = (faulty.dir() / "nccom.log").string();
    const std::string passive = kLs + " --check --socket " + faulty.socket_path();
    Output o;
    for (int i = 0; i < 100; ++i) {
      o = Shell(passive);
      if (o.out.find("degraded") != std::string::npos) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    ASSERT_EQ(o.status, 0) << o.out << o.err;
    ASSERT_NE(o.out.find("ND5 degraded"), std::string::npos) << o.out;
    const Output active = Active(faulty, "--nccom-test " + kNccomStandIn, log);
    EXPECT_EQ(active.status, 1) << active.out << active.err;
    EXPECT_EQ(active.out.rfind("unhealthy: all-reduce over 32 NeuronCores ", 0), 0u) << active.out;
    EXPECT_NE(active.out.find(error == "dma" ? "failed: 268435456    Failure running neuron-bench"
                                             : " GB/s bus bandwidth, below 19.20"),
              std::string::npos)
        << active.out;
  }
}

// neuron-ls stopped while the collective runs (a person's Ctrl-C, Slurm's or timeout's SIGTERM)
// takes the collective and everything it started with it, and ends as the signal says.
TEST(NeuronLsCheck, ActiveStopsTheCollectiveWhenItIsStopped) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.backend.scenario = "idle"; },
                  "sim:trn1.32xlarge");
  const std::string script = (d.dir() / "nccom-test").string();
  const std::string pids = (d.dir() / "pids").string();
  // A collective that never ends, with a worker that ignores SIGTERM.
  std::ofstream(script) << "#!/bin/sh\n(trap '' TERM; exec sleep 300) &\necho $$ $! > " << pids
                        << "\nexec sleep 300\n";
  fs::permissions(script, fs::perms::owner_all);
  const Output o = Shell(kLs + " --check --active --nccom-test " + script + " --socket " +
                         d.socket_path() + " & ls=$!; for i in $(seq 100); do [ -s " + pids +
                         " ] && break; sleep 0.05; done; kill -TERM $ls; wait $ls; echo rc=$?");
  EXPECT_NE(o.out.find("rc=143"), std::string::npos) << o.out << o.err;  // 128 + SIGTERM
  std::istringstream in(ReadAll(pids));
  pid_t child = 0, worker = 0;
  in >> child >> worker;
  ASSERT_GT(child, 0);
  ASSERT_GT(worker, 0);
  EXPECT_TRUE(test_util::Gone(child)) << "nccom-test outlived neuron-ls";
  EXPECT_TRUE(test_util::Gone(worker)) << "its worker outlived neuron-ls";
}

TEST(NeuronLsCheck, ActiveNeverRunsOnCoresAJobHolds) {
  DaemonFixture d([](daemon::DaemonConfig& c) { c.backend.scenario = "healthy-training"; },
                  "sim:trn1.32xlarge");
  const std::string log = (d.dir() / "nccom.log").string();
  const Output busy = Active(d, "--nccom-test " + kNccomStandIn + " -j", log);
  EXPECT_EQ(busy.status, 2) << busy.out << busy.err;
  const nlohmann::json doc = nlohmann::json::parse(busy.out);
  EXPECT_EQ(doc["outcome"], "unknown");
  EXPECT_EQ(doc["active"]["result"], "device_busy");
  EXPECT_EQ(doc["active"]["reason"].get<std::string>().rfind(
                "device_busy: Neuron devices held by pid ", 0),
            0u)
      << doc["active"]["reason"];
  EXPECT_FALSE(fs::exists(log)) << "nccom-test ran on busy cores";
}

TEST(NeuronLsCheck, WithoutADaemonItReadsTheHostsDriverNeverTheSimulator) {
  if (fs::exists("/run/neuron-monitor/neuron-monitord.sock")) {
    GTEST_SKIP() << "a system daemon is running here";
  }
  const fs::path dir =
      fs::temp_directory_path() / ("neuronmon-check-" + std::to_string(::getpid()));
  fs::create_directories(dir / "runtime");
  auto instance = simdev::Instance::Named("sim:trn1.2xlarge", "healthy-training", 1);
  ASSERT_TRUE(instance.ok());
  simdev::DriverTreeWriter writer((dir / "host/sys").string(), (dir / "host/proc").string());
  const Nanos t = std::chrono::seconds(60);
  ASSERT_TRUE(writer.Write((*instance)->Inventory(t), (*instance)->Read(t)).ok());
  // No socket where clients look: XDG_RUNTIME_DIR is empty and the system's is absent.
  const std::string env = "XDG_RUNTIME_DIR=" + (dir / "runtime").string() + " ";
  const auto check = [&](const std::string& root) {
    return Shell(env + kLs + " --check --sysfs-root " + (dir / root / "sys").string() +
                 " --proc-root " + (dir / root / "proc").string());
  };
  const Output ok = check("host");
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out.rfind("healthy: 1 device ok", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find("this host's driver (" + (dir / "host/sys").string()), std::string::npos)
      << ok.out;
  // No driver devices: unknown, unless the instance type says there should be some.
  fs::create_directories(dir / "bare/sys");
  fs::create_directories(dir / "bare/proc");
  const Output none = check("bare");
  EXPECT_EQ(none.status, 2) << none.out << none.err;
  EXPECT_EQ(none.out.rfind("unknown: ", 0), 0u) << none.out;
  EXPECT_EQ(none.out.find("simulat"), std::string::npos) << "never the simulator: " << none.out;
  const fs::path dmi = dir / "bare/sys/devices/virtual/dmi/id";
  fs::create_directories(dmi);
  std::ofstream(dmi / "sys_vendor") << "Amazon EC2\n";
  std::ofstream(dmi / "product_name") << "trn1.32xlarge\n";
  const Output missing = check("bare");
  EXPECT_EQ(missing.status, 1) << missing.out << missing.err;
  EXPECT_EQ(missing.out.rfind("unhealthy: 0 of 16 devices (trn1.32xlarge): ", 0), 0u)
      << missing.out;
  fs::remove_all(dir);
}

// A bad flag for the in-process simulator is named as a flag's problem, not a config file's.
TEST(NeuronLsProcess, StandaloneFlagErrorsNameTheFieldAndNoFile) {
  const Output bogus = Shell(kLs + " --standalone --scenario bogus");
  EXPECT_EQ(bogus.status, 1);
  EXPECT_EQ(bogus.err.rfind("neuron-ls: scenario: unknown scenario \"bogus\" (built-in: ", 0), 0u)
      << bogus.err;
  const Output unfit = Shell(kLs + " --standalone --device sim:trn1.2xlarge --scenario straggler");
  EXPECT_EQ(unfit.status, 1);
  EXPECT_EQ(unfit.err.rfind("neuron-ls: scenario: straggler: faults[0]: device 5 does not exist on "
                            "trn1.2xlarge",
                            0),
            0u)
      << unfit.err;
}

}  // namespace
}  // namespace neuronmon::testing

namespace neuronmon::testing {
namespace {

// Columns of UTF-8 text: one per code point.
int TextWidthOf(const std::string& utf8) {
  int n = 0;
  for (unsigned char ch : utf8) n += (ch & 0xC0) != 0x80;
  return n;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// neuron-top --once: one plain frame for scripts and bug reports, as wide as $COLUMNS (120 when
// unset or not a number), ASCII outside UTF-8 locales, no key help.
TEST(NeuronTopProcess, OncePrintsOnePlainFrame) {
  DaemonFixture d({}, "sim:trn1.32xlarge");
  const Output o = Shell("env -u LINES COLUMNS=100 LANG=C.UTF-8 " + kTop + " --once --socket " +
                         d.socket_path());
  ASSERT_EQ(o.status, 0) << o.err;
  const std::vector<std::string> lines = Lines(o.out);
  ASSERT_GT(lines.size(), 20u) << o.out;
  EXPECT_NE(lines[0].find("neuron-top 0.1.0 running on i-sim"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("live"), std::string::npos) << lines[0];
  EXPECT_NE(o.out.find("\nNeuronCore v2 Utilization (Avg: "), std::string::npos) << o.out;
  EXPECT_EQ(lines.back().rfind("Neuron Apps", 0), 0u) << lines.back();
  EXPECT_EQ(o.out.find("q: quit"), std::string::npos) << "no key help in a printed frame";
  for (const std::string& line : lines) EXPECT_LE(TextWidthOf(line), 100) << line;

  const Output ascii =
      Shell("COLUMNS=abc LANG=C LC_ALL=C " + kTop + " --once --standalone --scenario straggler");
  ASSERT_EQ(ascii.status, 0) << ascii.err;
  const std::vector<std::string> plain = Lines(ascii.out);
  ASSERT_FALSE(plain.empty());
  EXPECT_GE(plain[0].size(), 110u) << "120 columns (COLUMNS is not a number): " << plain[0];
  EXPECT_LE(plain[0].size(), 120u) << plain[0];
  for (unsigned char ch : ascii.out) {
    ASSERT_LT(ch, 0x80) << "a non-ASCII byte in a C-locale frame";
  }
  // LINES=30: exactly 30 rows, the last (key help) left blank.
  const Output sized = Shell("LINES=30 COLUMNS=90 " + kTop + " --once --standalone");
  ASSERT_EQ(sized.status, 0) << sized.err;
  const std::vector<std::string> rows = Lines(sized.out);
  EXPECT_EQ(rows.size(), 30u) << sized.out;
  EXPECT_EQ(sized.out.find("q: quit"), std::string::npos) << sized.out;
}

}  // namespace
}  // namespace neuronmon::testing
