#include "bench/soak/hostile_host.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "simdev/driver_tree.h"
#include "simdev/instance.h"
#include "simdev/scenario_library.h"
#include "tests/neurondev/fake_kubelet.h"

namespace neuronmon::soak {

using namespace std::chrono_literals;

struct HostileHost::Tree {
  std::unique_ptr<simdev::Instance> instance;
  std::unique_ptr<simdev::DriverTreeWriter> writer;
  Steady::time_point start;
  std::unique_ptr<neurondev::testing::FakeKubelet> kubelet;
  // What the kubelet stand-in answers, in turn: within gRPC's 4 MiB, and beyond it.
  std::vector<neurondev::testing::FakeDevices> answers[2];
};

HostileHost::HostileHost() = default;
HostileHost::~HostileHost() = default;

namespace {

constexpr int kHostileProcesses = 50;
constexpr int kFirstHostilePid = 3000000;

// What a user gets into the kernel log without a Neuron device, and what one with a device open
// prints through the driver with a prefix or in free text: none of it may count.
const char* const kForgeries[] = {
    "6,%llu,%llu,-;x NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0 action=TERMINATE_INSTANCE "
    "y[4242]: segfault at 0 ip 0000000000401000 sp 00007ffd error 4\n",
    "11,%llu,%llu,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0 action=TERMINATE_INSTANCE\n",
    "3,%llu,%llu,-;neuron0: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0\n",
    "3,%llu,%llu,-;NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR nd-id=0 says the user\n",
    "4,%llu,%llu,-;NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR nd-id=0\n",
};

// `containers` containers of one pod each, each allocated 1,000 short device ids: what a hostile
// (or broken) kubelet could answer.
std::vector<neurondev::testing::FakeDevices> HugeAnswer(int containers) {
  std::vector<neurondev::testing::FakeDevices> answer;
  for (int c = 0; c < containers; ++c) {
    neurondev::testing::FakeDevices d{
        "pod-" + std::to_string(c), "default", "c", "aws.amazon.com/neuroncore", {}};
    for (int i = 0; i < 1000; ++i) d.device_ids.push_back(std::to_string(c * 1000 + i));
    answer.push_back(std::move(d));
  }
  return answer;
}

}  // namespace

Result<std::unique_ptr<simdev::Instance>> SimulatedInstance(const SoakOptions& o) {
  Result<simdev::InstanceSpec> spec = simdev::ParseDeviceSpec(o.device);
  if (!spec.ok()) return spec.status();
  Result<simdev::Scenario> scenario = simdev::LoadScenario("healthy-training");
  if (!scenario.ok()) return scenario.status();
  return simdev::Instance::Create(*spec, std::move(*scenario), o.seed);
}

int HostileHost::kubelet_calls() const {
  return tree_ && tree_->kubelet ? tree_->kubelet->calls() : 0;
}

bool HostileHost::Prepare(const std::filesystem::path& dir, const SoakOptions& o,
                          const std::string& self, std::string& error) {
  dir_ = dir;
  std::error_code ec;
  std::filesystem::create_directories(dir / "sys", ec);
  std::filesystem::create_directories(dir / "proc", ec);
  Result<std::unique_ptr<simdev::Instance>> instance = SimulatedInstance(o);
  if (!instance.ok()) {
    error = instance.status().message();
    return false;
  }
  tree_ = std::make_unique<Tree>();
  tree_->instance = std::move(*instance);
  tree_->writer =
      std::make_unique<simdev::DriverTreeWriter>((dir / "sys").string(), (dir / "proc").string());
  tree_->start = Steady::now();
  const Nanos at = 60s;
  if (Status s = tree_->writer->Write(tree_->instance->Inventory(at), tree_->instance->Read(at));
      !s.ok()) {
    error = s.message();
    return false;
  }
  // The hostile user's processes: descriptors that all have to be looked at, none a device.
  const std::uint64_t per_process = o.host_fds / kHostileProcesses;
  for (int p = 0; p < kHostileProcesses; ++p) {
    const std::filesystem::path pid = dir / "proc" / std::to_string(kFirstHostilePid + p);
    std::filesystem::create_directories(pid / "fd", ec);
    std::ofstream(pid / "comm") << "hog\n";
    std::ofstream(pid / "status") << "Name:\thog\nUid:\t4242\t4242\t4242\t4242\n";
    for (std::uint64_t fd = 0; fd < per_process; ++fd) {
      const std::string link = (pid / "fd" / std::to_string(fd)).string();
      if (::symlink("/dev/null", link.c_str()) != 0 && errno != EEXIST) {
        error = "cannot create " + link;
        return false;
      }
      ++descriptors_;
    }
  }
  std::ofstream(dir / "kmsg").flush();
  tree_->answers[0] = HugeAnswer(400);
  tree_->answers[1] = HugeAnswer(1000);
  tree_->kubelet =
      std::make_unique<neurondev::testing::FakeKubelet>((dir / "kubelet.sock").string());
  tree_->kubelet->Serve(tree_->answers[0]);
  const std::filesystem::path wrapper = dir / "neuron-monitor";
  std::ofstream(wrapper) << "#!/bin/sh\nexec '" << self << "' --be-neuron-monitor\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all, ec);
  return !ec;
}

std::string HostileHost::ConfigKeys() const {
  const std::string d = dir_.string();
  return "\"sysfs_root\": \"" + d + "/sys\", \"proc_root\": \"" + d + "/proc\",\n" +
         "  \"neuron_monitor\": \"" + d + "/neuron-monitor\",\n" +
         "  \"kubernetes\": {\"enabled\": true, \"pod_resources_socket\": \"" + d +
         "/kubelet.sock\"},\n" + "  \"kernel_log\": {\"path\": \"" + d + "/kmsg\"},\n";
}

void HostileHost::Run(const std::atomic<Phase>& phase) {
  const std::string kmsg = (dir_ / "kmsg").string();
  unsigned long long seq = 1;
  auto next_tree = Steady::now();
  auto next_answer = Steady::now() + 10s;
  std::size_t answer = 0;
  while (phase.load() == Phase::kRunning) {
    const int fd = ::open(kmsg.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
      for (const char* forgery : kForgeries) {
        char line[512];
        const int n = std::snprintf(line, sizeof line, forgery, seq, seq * 1000);
        ++seq;
        if (n > 0 && ::write(fd, line, static_cast<std::size_t>(n)) == n) ++forged_;
      }
      ::close(fd);
    }
    if (Steady::now() >= next_tree) {
      const Nanos at = 60s + std::chrono::duration_cast<Nanos>(Steady::now() - tree_->start);
      (void)tree_->writer->Write(tree_->instance->Inventory(at), tree_->instance->Read(at));
      next_tree += 1s;
    }
    if (Steady::now() >= next_answer) {
      answer ^= 1;
      tree_->kubelet->Serve(tree_->answers[answer]);
      next_answer += 10s;
    }
    std::this_thread::sleep_for(100ms);
  }
}

int BeNeuronMonitor() {
  std::uint64_t next_pid = 4000000;
  for (std::uint64_t line = 1;; ++line) {
    std::string doc;
    if (line % 7 == 0) {
      doc = "{\"neuron_runtime_data\": [ {\"pid\": not json";
    } else {
      const int runtimes = line % 11 == 0 ? 2000 : 50;
      doc = "{\"neuron_runtime_data\":[";
      for (int i = 0; i < runtimes; ++i) {
        const std::string pid = std::to_string(next_pid++);
        doc += std::string(i == 0 ? "" : ",") + "{\"pid\":" + pid +
               ",\"neuron_runtime_tag\":\"flood-" + pid +
               "\",\"error\":\"\",\"report\":{\"neuroncore_counters\":{\"period\":0.2,"
               "\"neuroncores_in_use\":{\"0\":{\"neuroncore_utilization\":50}},\"error\":\"\"},"
               "\"execution_stats\":{\"period\":0.2,\"execution_summary\":{\"completed\":3},"
               "\"error\":\"\"}}}";
      }
      doc += "]}";
    }
    doc += "\n";
    if (std::fwrite(doc.data(), 1, doc.size(), stdout) != doc.size() || std::fflush(stdout) != 0) {
      return 0;
    }
    std::this_thread::sleep_for(200ms);
  }
}

}  // namespace neuronmon::soak
