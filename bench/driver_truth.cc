// driver_truth: the figures a real host shows, against the truth, on simulator-written driver
// trees of every generation. For each driver version, one simulated instance is written as that
// driver's sysfs tree and /proc (simdev::DriverTreeWriter) and read by the real-host backend
// (neurondev::Host) inside the daemon's core; an identical simulated instance feeds a second
// core directly (the truth). Both are sampled at the same instants, and the same report (every
// group over the last WINDOW seconds) is compared figure by figure:
//   busy per core, HBM used per device, each runtime's device memory, hardware error totals,
//   FLOP/s, and the processes (pids) each lists.
// Prints a markdown table (bench/README.md) and exits 1 when a figure is off by more than 1 %.
//   driver_truth [--device sim:trn1.32xlarge] [--scenario healthy-training] [--seconds 40]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "daemon/core/daemon_core.h"
#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"

namespace {

using namespace neuronmon;

struct Row {
  std::string figure;
  double truth = 0;
  double shown = 0;
  std::string unit;
  bool available = true;  // shown as a value (false: "unavailable")
};

// The relative difference, in percent (0 when both are 0).
double Off(const Row& r) {
  const double scale = std::max(std::abs(r.truth), std::abs(r.shown));
  return scale == 0 ? 0 : 100 * std::abs(r.truth - r.shown) / scale;
}

HostSample NoHost() { return HostSample{}; }

std::vector<Row> Compare(const v1::Report& truth, const v1::Report& shown) {
  std::vector<Row> rows;
  double busy_t = 0, busy_s = 0, flops_t = 0, flops_s = 0, mem_t = 0, mem_s = 0;
  std::size_t cores = 0;
  bool flops_shown = true;
  for (const v1::RuntimeReport& rt : truth.runtimes()) {
    const auto it = std::find_if(shown.runtimes().begin(), shown.runtimes().end(),
                                 [&](const v1::RuntimeReport& r) { return r.pid() == rt.pid(); });
    if (it == shown.runtimes().end()) continue;
    for (const v1::CoreCounters& c : rt.neuroncore_counters().cores()) {
      for (const v1::CoreCounters& d : it->neuroncore_counters().cores()) {
        if (d.index() != c.index()) continue;
        busy_t += c.utilization_percent();
        busy_s += d.utilization_percent();
        flops_t += c.flops();
        flops_s += d.flops();
        ++cores;
      }
    }
    flops_shown = flops_shown && it->neuroncore_counters().flops_unavailable().empty();
    mem_t += static_cast<double>(rt.memory_used().device_bytes());
    mem_s += static_cast<double>(it->memory_used().device_bytes());
  }
  const double n = std::max<std::size_t>(cores, 1);
  rows.push_back(
      {"busy per core (mean of " + std::to_string(cores) + ")", busy_t / n, busy_s / n, "%"});
  rows.push_back({"FLOP/s per core", flops_t / n, flops_s / n, "FLOP/s", flops_shown});
  rows.push_back({"runtimes' device memory", mem_t / 1e9, mem_s / 1e9, "GB"});
  double hbm_t = 0, hbm_s = 0;
  for (const v1::DeviceHbm& d : truth.system().hbm_stats().devices())
    hbm_t += static_cast<double>(d.used_bytes());
  for (const v1::DeviceHbm& d : shown.system().hbm_stats().devices())
    hbm_s += static_cast<double>(d.used_bytes());
  rows.push_back({"HBM used (all devices)", hbm_t / 1e9, hbm_s / 1e9, "GB"});
  double err_t = 0, err_s = 0, failed_t = 0, failed_s = 0;
  for (const v1::DeviceHealth& h : truth.system().device_health().devices()) {
    err_t += static_cast<double>(h.errors_total().mem_ecc_uncorrected() +
                                 h.errors_total().sram_ecc_uncorrected());
    failed_t += h.state() == v1::HEALTH_STATE_FAILED;
  }
  for (const v1::DeviceHealth& h : shown.system().device_health().devices()) {
    err_s += static_cast<double>(h.errors_total().mem_ecc_uncorrected() +
                                 h.errors_total().sram_ecc_uncorrected());
    failed_s += h.state() == v1::HEALTH_STATE_FAILED;
  }
  rows.push_back({"uncorrected ECC errors (totals)", err_t, err_s, "errors"});
  rows.push_back({"devices failed", failed_t, failed_s, "devices"});
  rows.push_back({"runtimes listed", static_cast<double>(truth.runtimes_size()),
                  static_cast<double>(shown.runtimes_size()), "processes"});
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "sim:trn1.32xlarge", scenario_name = "healthy-training";
  int seconds = 40, window = 10;
  std::vector<std::string> drivers = {"2.24.7.0", "2.28.0.0", "2.30.2.0", "2.31.7.0"};
  CLI::App app{"real-host figures against the simulator's truth, per driver generation"};
  app.add_option("--device", device, "simulated instance");
  app.add_option("--scenario", scenario_name, "simulated scenario");
  app.add_option("--seconds", seconds, "simulated seconds sampled (one sample a second)");
  app.add_option("--window", window, "the report's window, seconds");
  app.add_option("--driver", drivers, "driver versions to write");
  CLI11_PARSE(app, argc, argv);
  const std::string temp = std::filesystem::temp_directory_path().string() + "/driver-truth-XXXXXX";
  std::string dir = temp;
  if (::mkdtemp(dir.data()) == nullptr) return std::perror("mkdtemp"), 1;
  std::printf("%s, scenario %s, %d s, window %d s\n\n", device.c_str(), scenario_name.c_str(),
              seconds, window);
  std::printf("| driver | figure | truth | shown | off |\n|---|---|---|---|---|\n");
  bool ok = true;
  for (const std::string& driver : drivers) {
    const std::string root = dir + "/" + driver;
    std::filesystem::create_directories(root + "/sys");
    std::filesystem::create_directories(root + "/proc");
    auto writing = simdev::Instance::Named(device, scenario_name, 1);
    if (!writing.ok()) return std::cerr << writing.status().message() << "\n", 1;
    simdev::DriverTreeWriter writer(root + "/sys", root + "/proc",
                                    {.driver_version = driver, .kernel_log = root + "/kmsg"});
    const MonoTime t0{};
    // The tree must exist before the host opens it.
    if (Status s = writer.Write((*writing)->Inventory(Nanos(0)), (*writing)->Read(Nanos(0)));
        !s.ok()) {
      return std::cerr << s.message() << "\n", 1;
    }
    daemon::BackendOptions sim_options;
    sim_options.device = device;
    sim_options.scenario = scenario_name;
    daemon::BackendOptions host_options;
    host_options.device = "neuron";
    host_options.host.sysfs_root = root + "/sys";
    host_options.host.proc_root = root + "/proc";
    host_options.host.dev_root = root + "/dev";
    host_options.host.neuron_monitor = "";
    host_options.host.kubernetes = false;
    host_options.host.kernel_log_options.path = root + "/kmsg";
    host_options.host.process_scan_every = 1;
    // The writer replaces each file by rename (the driver rewrites in place): rediscover and read
    // everything at every sample, as the round-trip test does.
    host_options.host.sampler = {.rediscover_every = 1, .slow_every = 1};
    auto truth_backend = daemon::MakeBackend(sim_options, t0);
    auto host_backend = daemon::MakeBackend(host_options, t0);
    if (!truth_backend.ok() || !host_backend.ok()) {
      std::cerr << (truth_backend.ok() ? host_backend.status() : truth_backend.status()).message()
                << "\n";
      return 1;
    }
    daemon::DaemonCore truth({}, std::move(*truth_backend), NoHost);
    daemon::DaemonCore shown({}, std::move(*host_backend), NoHost);
    std::uint64_t seq = 0;
    for (int s = 0; s <= seconds; ++s) {
      const Nanos t = std::chrono::seconds(s);
      if (s > 0) {
        if (Status w = writer.Write((*writing)->Inventory(t), (*writing)->Read(t)); !w.ok())
          return std::cerr << w.message() << "\n", 1;
      }
      seq = truth.Sample(t0 + t, WallTime{});
      shown.Sample(t0 + t, WallTime{});
    }
    v1::Subscribe request;
    for (int g = v1::Group_MIN + 1; g <= v1::Group_MAX; ++g) {
      if (!v1::Group_IsValid(g)) continue;
      v1::GroupSubscription* sub = request.add_groups();
      sub->set_group(static_cast<v1::Group>(g));
      sub->set_period_ns(static_cast<std::uint64_t>(window) * 1'000'000'000);
    }
    auto sub = daemon::Subscription::FromRequest(request, std::chrono::seconds(1));
    if (!sub.ok()) return std::cerr << sub.status().message() << "\n", 1;
    const auto a = truth.ReportAt(*sub, seq, daemon::ReportScope::kFirst);
    const auto b = shown.ReportAt(*sub, seq, daemon::ReportScope::kFirst);
    if (!a || !b) return std::cerr << "no report\n", 1;
    for (const Row& r : Compare(*a, *b)) {
      const double off = Off(r);
      if (r.available && off > 1) ok = false;
      if (r.available) {
        std::printf("| %s | %s | %.4g %s | %.4g %s | %.2f %% |\n", driver.c_str(), r.figure.c_str(),
                    r.truth, r.unit.c_str(), r.shown, r.unit.c_str(), off);
      } else {
        std::printf("| %s | %s | %.4g %s | unavailable | — |\n", driver.c_str(), r.figure.c_str(),
                    r.truth, r.unit.c_str());
      }
    }
  }
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
