// A stand-in for AWS's nccom-test on a simulated device, for the tests of `neuron-ls --check
// --active`: it takes nccom-test's command line (`allr -r N -b BYTES -e BYTES -n ITERS -d TYPE
// --check`), asks the simulating daemon (the socket in $NCCOM_STAND_IN_SOCKET) for its instance
// type and device health, and prints what nccom-test would print for an all-reduce on that
// hardware: the simulator's collective model gives the time; a device with collectives errors
// (`hardware_error` with error `collectives`) carries it 50 times slower, one with DMA aborts
// (error `dma`) fails the run as nccom-test reports a failed benchmark. Every invocation is
// appended to $NCCOM_STAND_IN_LOG when set, so tests can tell whether and how it ran.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "client/client.h"
#include "simdev/collective_model.h"
#include "simdev/preset.h"

namespace {

using namespace neuronmon;

int Usage(const std::string& why) {
  std::cerr << "nccom-test (stand-in): " << why << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const char* log = std::getenv("NCCOM_STAND_IN_LOG")) {
    std::ofstream out(log, std::ios::app);
    for (const std::string& a : args) out << a << " ";
    out << "\n";
  }
  std::string op;
  int ranks = 0;
  double bytes = 32 << 20;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if ((a == "-r" || a == "--nworkers") && has_value) {
      ranks = std::atoi(args[++i].c_str());
    } else if ((a == "-b" || a == "--minbytes" || a == "-e" || a == "--maxbytes") && has_value) {
      bytes = std::atof(args[++i].c_str());
    } else if ((a == "-n" || a == "--iters" || a == "-d" || a == "--datatype") && has_value) {
      ++i;
    } else if (a == "--check") {
    } else if (a == "allr" || a == "all_reduce") {
      op = a;
    } else {
      return Usage("unexpected argument " + a);
    }
  }
  if (op.empty() || ranks < 2 || !(bytes > 0)) return Usage("need allr, -r N (N >= 2), -b BYTES");
  const char* socket = std::getenv("NCCOM_STAND_IN_SOCKET");
  if (socket == nullptr) return Usage("NCCOM_STAND_IN_SOCKET is not set");

  client::ClientOptions co;
  co.client_name = "nccom-test-stand-in";
  co.endpoint.kind = client::Endpoint::Kind::kUnix;
  co.endpoint.path = socket;
  co.reconnect = false;
  co.subscribe.add_groups()->set_group(v1::GROUP_DEVICE_HEALTH);
  auto c = client::Client::Connect(std::move(co));
  if (!c.ok()) return Usage(c.status().message());
  std::optional<v1::Inventory> inventory;
  std::optional<v1::Report> report;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!report && std::chrono::steady_clock::now() < deadline) {
    std::optional<client::Event> e = (*c)->Next(std::chrono::milliseconds(100));
    if (!e) continue;
    if (e->kind == client::Event::Kind::kConnected) inventory = e->welcome.inventory();
    if (e->kind == client::Event::Kind::kReport) report = std::move(e->report);
    if (e->kind == client::Event::Kind::kDisconnected) break;
  }
  if (!inventory || !report) return Usage("no report from " + std::string(socket));
  Result<simdev::InstanceSpec> spec =
      simdev::FindPreset(inventory->instance_info().instance_type());
  if (!spec.ok()) return Usage(spec.status().message());

  bool slow_link = false;
  bool dma_abort = false;
  for (const v1::DeviceHealth& h : report->system().device_health().devices()) {
    for (const v1::HealthReason& r : h.reasons()) {
      slow_link |= r.code() == "collectives_error";
      dma_abort |= r.code() == "dma_abort";
    }
  }
  std::printf("%12s%16s%9s%16s%15s%15s\n", "size(B)", "count(elems)", "type", "time:avg(us)",
              "algbw(GB/s)", "busbw(GB/s)");
  if (dma_abort) {
    std::printf("%12.0f    Failure running neuron-bench - log file /tmp/nccom_test_log_sim.log\n",
                bytes);
    std::printf("1 errors found - test failed\n");
    return 1;
  }
  simdev::CollectiveGroup group;
  group.devices_per_node = spec->devices_per_node();
  double seconds =
      simdev::EstimateCollective(*spec, group, CollectiveKind::kAllReduce, bytes, 0.0).seconds;
  if (slow_link) seconds *= 50;
  const double algbw = bytes / seconds / (1024.0 * 1024.0 * 1024.0);
  const double busbw = algbw * simdev::BusFactor(CollectiveKind::kAllReduce, ranks);
  std::printf("%12.0f%16.0f%9s%16.2f%15.2f%15.2f\n", bytes, bytes / 4, "fp32", seconds * 1e6, algbw,
              busbw);
  std::printf("Avg bus bandwidth:\t%.4fGB/s\n", busbw);
  return 0;
}
