#include "tests/neurondev/tree_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <vector>

namespace neuronmon::neurondev::testing {

namespace fs = std::filesystem;

namespace {

// The names driver 2.23-2.25 uses (neuron_sysfs_metrics.c), with a typical usage in bytes that the
// fixtures add their tags to.
struct Category {
  const char* name;
  std::uint64_t typical_bytes;
};
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr Category kHostCategories[] = {
    {"dma_buffers", 64 * kMiB},   {"tensors", 256 * kMiB},
    {"constants", 128 * kMiB},    {"application_memory", 1024 * kMiB},
    {"driver_memory", 32 * kMiB}, {"notifications", 2 * kMiB},
    {"dma_rings", 8 * kMiB},      {"uncategorized", 0}};
constexpr Category kDeviceCategories[] = {
    {"model_code", 96 * kMiB},     {"tensors", 2048 * kMiB},
    {"constants", 512 * kMiB},     {"model_shared_scratchpad", 1024 * kMiB},
    {"runtime_memory", 64 * kMiB}, {"driver_memory", 16 * kMiB},
    {"collectives", 128 * kMiB},   {"nonshared_scratchpad", 256 * kMiB},
    {"notifications", 4 * kMiB},   {"dma_rings", 32 * kMiB},
    {"uncategorized", 0}};
constexpr const char* kOutcomes[] = {"success",
                                     "failure",
                                     "timeout",
                                     "exec_bad_input",
                                     "hw_error",
                                     "execute_completed_with_error",
                                     "execute_completed_with_num_error",
                                     "generic_error",
                                     "resource_error",
                                     "resource_nc_error",
                                     "execute_failed_to_queue",
                                     "invalid_error",
                                     "unsupported_neff_version",
                                     "oob_error",
                                     "hw_collectives_error",
                                     "hw_hbm_ue_error",
                                     "hw_nc_ue_error",
                                     "hw_dma_abort_error",
                                     "execute_sw_nq_overflow",
                                     "execute_sw_semaphore_error",
                                     "execute_sw_event_error",
                                     "execute_sw_psum_collision",
                                     "execute_sw_sequencer_fatal",
                                     "hw_repairable_hbm_ue_error"};

constexpr const char* kPowerFile = "stats/power/utilization";
// What AdvanceTrn2Counters adds per busy µs, and what the fixtures' counters already hold per tag.
constexpr std::uint64_t kFlopsPerBusyMicrosecond = 30'000'000;  // ~38% of a NeuronCore-v3's BF16
constexpr std::uint64_t kBusyMicrosecondsPerExecution = 1500;
constexpr std::uint64_t kCyclesPerMicrosecond = 1400;
constexpr int kPeRowGroups = 4;

enum class Topology { kRing, kTorus4x4 };

// One host model as a driver version shows it. `salt` enters every value (see Tag), so no two
// fixtures share a reading.
struct HostShape {
  int devices;
  int cores;
  const char* arch_type;
  const char* instance_type;
  const char* device_name;
  const char* core_arch_type;
  Topology topology;
  bool health_status;  // driver 2.28+
  std::uint64_t salt;
  std::uint64_t serial_base;  // device N's serial is serial_base + N
};

constexpr HostShape kInf2{
    12, 2, "NDv3", "Inf2", "Inferentia2", "NCv2", Topology::kRing, false, 1, 0x5a1f0c93e2b70000};
constexpr HostShape kTrn1{
    16, 2, "NDv2", "Trn1", "Trainium1", "NCv2", Topology::kTorus4x4, false, 2, 0x9ff5434815c80000};
constexpr HostShape kTrn2Driver228{
    16, 8, "NDv3", "Trn2", "Trainium2", "NCv3", Topology::kTorus4x4, true, 3, 0x1d3e6b20a94c0000};
constexpr HostShape kTrn2Driver230{
    16, 8, "NDv3", "Trn2", "Trainium2", "NCv3", Topology::kTorus4x4, true, 4, 0x2b8a41d7c0e50000};
constexpr HostShape kPartial{
    3, 8, "NDv3", "Trn2", "Trainium2", "NCv3", Topology::kTorus4x4, true, 5, 0x7c04e9f3168a0000};

// A number that says where it was written: salt, device and core as decimal digits (SNNKK... e.g.
// 30907 is fixture 3, device 9, core 7). Device-level values use k = 0.
std::uint64_t Tag(const HostShape& host, int n, int k) {
  return host.salt * 10000 + static_cast<std::uint64_t>(n) * 100 + static_cast<std::uint64_t>(k);
}

std::string Number(std::uint64_t v) { return std::to_string(v) + "\n"; }

// Percentages as the driver prints its basis points: two decimals.
std::string PowerLine(const char* status, std::uint64_t epoch, unsigned min_bips, unsigned max_bips,
                      unsigned avg_bips) {
  char line[96];
  std::snprintf(line, sizeof line, "%s,%llu,%u.%02u,%u.%02u,%u.%02u\n", status,
                static_cast<unsigned long long>(epoch), min_bips / 100, min_bips % 100,
                max_bips / 100, max_bips % 100, avg_bips / 100, avg_bips % 100);
  return line;
}

// neuron-ls's order: a ring lists n-1 then n+1; the 4x4 torus up, left, down, right, with wrap.
std::string ConnectedDevices(Topology topology, int n, int count) {
  std::vector<int> peers;
  if (topology == Topology::kRing) {
    peers = {(n + count - 1) % count, (n + 1) % count};
  } else {
    const int row = n / 4 * 4;
    peers = {(n + 12) % 16, row + (n + 3) % 4, (n + 4) % 16, row + (n + 1) % 4};
  }
  std::string text;
  for (int peer : peers) text += (text.empty() ? "" : ", ") + std::to_string(peer);
  return text + "\n";
}

// A `{total,present}` counter node; `present` is the last increment.
void WriteCounter(const FakeTree& tree, const std::string& dir, std::uint64_t total) {
  tree.Write(dir + "/total", Number(total));
  tree.Write(dir + "/present", Number(total == 0 ? 0 : 1));
}

// A `{total,present,peak}` memory node: `total` is the current usage, `present` the last change.
void WriteMemory(const FakeTree& tree, const std::string& dir, std::uint64_t total,
                 std::uint64_t peak) {
  tree.Write(dir + "/total", Number(total));
  tree.Write(dir + "/present", Number(total == 0 ? 0 : 4096));
  tree.Write(dir + "/peak", Number(peak));
}

void WriteIdentity(const FakeTree& tree, const HostShape& host, int n) {
  tree.Write(tree.Device(n, "core_count"), std::to_string(host.cores));  // no newline
  tree.Write(tree.Device(n, "reset"), "1\n");  // NEURON_DEVICE_STATE_READY (root only)
  tree.Write(tree.Device(n, "connected_devices"), ConnectedDevices(host.topology, n, host.devices));
  char serial[32];
  std::snprintf(serial, sizeof serial, "%016llx\n",
                static_cast<unsigned long long>(host.serial_base + static_cast<unsigned>(n)));
  tree.Write(tree.Device(n, "info/serial_number"), serial);
  tree.Write(tree.Device(n, "info/architecture/arch_type"), std::string(host.arch_type) + "\n");
  tree.Write(tree.Device(n, "info/architecture/instance_type"),
             std::string(host.instance_type) + "\n");
  tree.Write(tree.Device(n, "info/architecture/device_name"), std::string(host.device_name) + "\n");
}

// Host memory: typical + tag × 4 KiB. ECC: 0, except that every fourth device has seen `salt`
// uncorrected HBM errors and twice as many repairable ones, which health_status (2.28+) counts
// together in hbm_ecc_err_count.
void WriteDeviceStats(const FakeTree& tree, const HostShape& host, int n) {
  const std::uint64_t tag = Tag(host, n, 0);
  for (const Category& cat : kHostCategories) {
    const std::uint64_t total = cat.typical_bytes + tag * 4096;
    WriteMemory(tree, tree.Device(n, "stats/memory_usage/host_mem/") + cat.name, total,
                total + cat.typical_bytes / 4);
  }
  const std::uint64_t hbm = n % 4 == 3 ? host.salt : 0;
  tree.Write(tree.Device(n, "stats/hardware/sram_ecc_uncorrected"), Number(0));
  tree.Write(tree.Device(n, "stats/hardware/mem_ecc_uncorrected"), Number(hbm));
  tree.Write(tree.Device(n, "stats/hardware/mem_ecc_repairable_uncorrected"), Number(2 * hbm));
  if (!host.health_status) return;
  const std::string health = tree.Device(n, "stats/hardware/health_status/");
  tree.Write(health + "hbm_ecc_err_count", Number(3 * hbm));
  tree.Write(health + "repairable_hbm_ecc_err_count", Number(2 * hbm));
  tree.Write(health + "sram_ecc_err_count", Number(0));
  tree.Write(health + "hw_error_event", Number(0));
}

// pe_cntrs as the driver formats it: a header, then "%d,%llu,%llu,%llu\n" per row group.
std::string PeCounters(std::uint64_t mm, std::uint64_t wl, std::uint64_t idle) {
  std::string text = "xrow_grp,mm_active,wl_active,idle\n";
  for (int g = 0; g < kPeRowGroups; ++g) {
    text += std::to_string(g) + "," + std::to_string(mm + g) + "," + std::to_string(wl + g) + "," +
            std::to_string(idle + g) + "\n";
  }
  return text;
}

// One physical core after `tag` executions of 1500 busy µs each (failures: (n + k) mod 3), with
// device memory typical + tag × 4 KiB per category.
void WriteCore(const FakeTree& tree, const HostShape& host, int n, int k) {
  const std::uint64_t tag = Tag(host, n, k);
  const std::uint64_t busy_us = tag * kBusyMicrosecondsPerExecution;
  const std::string core = tree.Device(n, "neuron_core" + std::to_string(k) + "/");
  tree.Write(core + "info/architecture/arch_type", std::string(host.core_arch_type) + "\n");
  for (const char* outcome : kOutcomes) {
    const std::string name = outcome;
    WriteCounter(tree, core + "stats/status/" + name,
                 name == "success" ? tag : (name == "failure" ? (n + k) % 3 : 0));
  }
  const std::string other = core + "stats/other_info/";
  WriteCounter(tree, other + "flop_count", busy_us * kFlopsPerBusyMicrosecond);
  WriteCounter(tree, other + "nc_time_in_use", busy_us);
  WriteCounter(tree, other + "inference_count", tag);
  WriteCounter(tree, other + "model_load_count", 1 + k % 2);
  WriteCounter(tree, other + "reset_req_count", 0);
  WriteCounter(tree, other + "reset_fail_count", 0);
  const std::string memory = core + "stats/memory_usage/";
  std::uint64_t device_total = 0;
  for (const Category& cat : kDeviceCategories) {
    const std::uint64_t total = cat.typical_bytes + tag * 4096;
    WriteMemory(tree, memory + "device_mem/" + cat.name, total, total + cat.typical_bytes / 4);
    device_total += total;
  }
  WriteMemory(tree, memory + "device_mem", device_total, device_total);  // the reader skips these
  WriteMemory(tree, memory + "host_mem", tag * 65536, tag * 65536);
  const std::uint64_t busy_cycles = busy_us * kCyclesPerMicrosecond;
  tree.Write(core + "stats/tensor_engine/pe_cntrs",
             PeCounters(busy_cycles / 4 * 3, busy_cycles / 4, 2 * busy_cycles));
}

void WriteDevice(const FakeTree& tree, const HostShape& host, int n) {
  WriteIdentity(tree, host, n);
  WriteDeviceStats(tree, host, n);
  for (int k = 0; k < host.cores; ++k) WriteCore(tree, host, n, k);
}

// Every device of `host` with a valid power line: device n's epoch and percentages are the given
// ones + n (seconds, basis points).
void WriteHost(const FakeTree& tree, const HostShape& host, std::uint64_t epoch, unsigned min_bips,
               unsigned max_bips, unsigned avg_bips) {
  for (int n = 0; n < host.devices; ++n) {
    WriteDevice(tree, host, n);
    const unsigned u = static_cast<unsigned>(n);
    tree.Write(tree.Device(n, kPowerFile), PowerLine("POWER_STATUS_VALID", epoch + u, min_bips + u,
                                                     max_bips + u, avg_bips + u));
  }
}

std::optional<std::uint64_t> ReadNumber(const fs::path& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

// The driver's increment: total += delta, present = delta. Skips a counter that is not there.
void Increment(const fs::path& dir, std::uint64_t delta) {
  const std::optional<std::uint64_t> total = ReadNumber(dir / "total");
  if (!total) return;
  std::ofstream(dir / "total", std::ios::binary) << Number(*total + delta);
  std::ofstream(dir / "present", std::ios::binary) << Number(delta);
}

void AdvancePeCounters(const fs::path& file, std::uint64_t busy_cycles, std::uint64_t cycles) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return;
  std::string text = line + "\n";
  while (std::getline(in, line)) {
    unsigned group = 0;
    unsigned long long mm = 0, wl = 0, idle = 0;
    if (std::sscanf(line.c_str(), "%u,%llu,%llu,%llu", &group, &mm, &wl, &idle) != 4) return;
    text += std::to_string(group) + "," + std::to_string(mm + busy_cycles / 4 * 3) + "," +
            std::to_string(wl + busy_cycles / 4) + "," +
            std::to_string(idle + cycles - busy_cycles) + "\n";
  }
  in.close();
  std::ofstream(file, std::ios::binary) << text;
}

// The µs a core `utilization` (0–1) busy is busy for in `elapsed`.
std::uint64_t BusyMicroseconds(std::chrono::microseconds elapsed, double utilization) {
  const auto elapsed_us = static_cast<std::uint64_t>(std::max<std::int64_t>(elapsed.count(), 0));
  return static_cast<std::uint64_t>(static_cast<double>(elapsed_us) *
                                    (utilization > 0 ? std::min(utilization, 1.0) : 0.0));
}

// The neuron_core<K> directories of device `device` (every device when nullopt).
std::vector<fs::path> CoreDirs(const std::string& root, std::optional<int> device) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& dev :
       fs::directory_iterator(fs::path(root) / "devices/virtual/neuron_device", ec)) {
    const std::string name = dev.path().filename().string();
    if (name.rfind("neuron", 0) != 0) continue;
    if (device && name != "neuron" + std::to_string(*device)) continue;
    for (const fs::directory_entry& core : fs::directory_iterator(dev.path(), ec)) {
      if (core.path().filename().string().rfind("neuron_core", 0) == 0) out.push_back(core.path());
    }
  }
  return out;
}

}  // namespace

std::string FastTempDirectory() {
  if (std::getenv("TEST_TMPDIR") == nullptr && ::access("/dev/shm", W_OK | X_OK) == 0) {
    return "/dev/shm";
  }
  return fs::temp_directory_path().string();
}

FakeTree::FakeTree() {
  std::string pattern = FastTempDirectory() + "/neurondev-XXXXXX";
  root_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
}

FakeTree::~FakeTree() {
  std::error_code ec;
  if (!root_.empty()) fs::remove_all(root_, ec);
}

void FakeTree::Write(const std::string& relative, const std::string& contents) const {
  const fs::path path = fs::path(root_) / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << contents;
}

void FakeTree::Symlink(const std::string& target, const std::string& relative) const {
  const fs::path path = fs::path(root_) / relative;
  fs::create_directories(path.parent_path());
  fs::create_symlink(target, path);
}

void FakeTree::Remove(const std::string& relative) const {
  fs::remove_all(fs::path(root_) / relative);
}

std::string FakeTree::Device(int n, const std::string& relative) const {
  return "devices/virtual/neuron_device/neuron" + std::to_string(n) + "/" + relative;
}

void FakeTree::WriteDriverVersion(const std::string& version) const {
  Write("module/neuron/version", version + "\n");
}

void FakeTree::WriteTrn2Device(int n) const {
  auto counter = [&](const std::string& path, std::uint64_t v) {
    Write(Device(n, path), std::to_string(v) + "\n");
  };
  Write(Device(n, "core_count"), "8");  // no newline, as the driver prints it
  Write(Device(n, "reset"), "1\n");
  Write(Device(n, "connected_devices"),
        std::to_string((n + 15) % 16) + ", " + std::to_string((n + 1) % 16) + "\n");
  char serial[32];
  std::snprintf(serial, sizeof serial, "%016llx\n", 0x1d0f000000000000ULL + n);
  Write(Device(n, "info/serial_number"), serial);
  Write(Device(n, "info/architecture/arch_type"), "NDv3\n");
  Write(Device(n, "info/architecture/instance_type"), "Trn2\n");
  Write(Device(n, "info/architecture/device_name"), "Trainium2\n");
  for (const Category& cat : kHostCategories) {
    const std::string dir = std::string("stats/memory_usage/host_mem/") + cat.name;
    counter(dir + "/total", 1000u * (n + 1));
    counter(dir + "/present", 64);
    counter(dir + "/peak", 2000u * (n + 1));
  }
  counter("stats/hardware/sram_ecc_uncorrected", 0);
  counter("stats/hardware/mem_ecc_uncorrected", n);
  counter("stats/hardware/mem_ecc_repairable_uncorrected", 2 * n);
  counter("stats/hardware/health_status/hbm_ecc_err_count", 3 * n);
  counter("stats/hardware/health_status/repairable_hbm_ecc_err_count", 4 * n);
  counter("stats/hardware/health_status/sram_ecc_err_count", 0);
  counter("stats/hardware/health_status/hw_error_event", 0);
  Write(Device(n, "stats/power/utilization"), "POWER_STATUS_VALID,1764720000,0.86,25.00,18.86\n");
  for (int k = 0; k < 8; ++k) {
    const std::string core = "neuron_core" + std::to_string(k) + "/stats/";
    for (const char* outcome : kOutcomes) {
      const std::uint64_t v = std::string(outcome) == "success" ? 1000u * n + k : 0;
      counter(core + "status/" + outcome + "/total", v);
      counter(core + "status/" + outcome + "/present", 1);
    }
    counter(core + "other_info/flop_count/total", 2'000'000'000'000ULL * (k + 1));
    counter(core + "other_info/nc_time_in_use/total", 500'000u * (k + 1));
    counter(core + "other_info/inference_count/total", 10u * k);
    for (const char* other : {"model_load_count", "reset_req_count", "reset_fail_count"}) {
      counter(core + "other_info/" + other + "/total", 1);
      counter(core + "other_info/" + other + "/present", 1);
    }
    std::string pe = "xrow_grp,mm_active,wl_active,idle\n";
    for (int g = 0; g < 4; ++g) {
      pe += std::to_string(g) + "," + std::to_string(1000 * (k + 1) + g) + "," +
            std::to_string(100 * (k + 1)) + "," + std::to_string(50 * g) + "\n";
    }
    Write(Device(n, core + "tensor_engine/pe_cntrs"), pe);
    for (const Category& cat : kDeviceCategories) {
      counter(core + "memory_usage/device_mem/" + cat.name + "/total", (1u << 20) * (k + 1));
      counter(core + "memory_usage/device_mem/" + cat.name + "/peak", (1u << 21) * (k + 1));
    }
  }
}

void FakeTree::WriteInf2_48xlarge_Driver224() const {
  WriteDriverVersion("2.24.7.0");
  for (int n = 0; n < kInf2.devices; ++n) {
    WriteDevice(*this, kInf2, n);
    // Readings reported from a real inf2: idle, and under load.
    Write(Device(n, kPowerFile),
          n % 2 == 0 ? PowerLine("POWER_STATUS_VALID", 1752000000 + n, 0, 206, 56)
                     : PowerLine("POWER_STATUS_VALID", 1752000000 + n, 86, 2500, 1886));
  }
}

void FakeTree::WriteTrn1_32xlarge_Driver226() const {
  WriteDriverVersion("2.26.5.0");
  WriteHost(*this, kTrn1, 1758000000, 1200, 3100, 2475);
}

void FakeTree::WriteTrn2_48xlarge_Driver228() const {
  WriteDriverVersion("2.28.4.0");
  WriteHost(*this, kTrn2Driver228, 1764720000, 3000, 5800, 4700);
}

void FakeTree::WriteTrn2_48xlarge_Driver230() const {
  WriteDriverVersion("2.30.2.0");
  WriteHost(*this, kTrn2Driver230, 1770000000, 4100, 7350, 6220);
}

void FakeTree::WritePartialTree() const {
  WriteHost(*this, kPartial, 1767225600, 2210, 4090, 3350);
  Remove(Device(0, "info"));
  Remove(Device(0, "stats/power"));
  for (int k = 1; k < kPartial.cores; k += 2) {
    Remove(Device(0, "neuron_core" + std::to_string(k) + "/stats/other_info"));
  }
  Write(Device(1, "info/serial_number"), "\n");  // the firmware's serial read failed
  Write(Device(1, kPowerFile), "POWER_STATUS_NO_DATA,1767225601,0.00,0.00,0.00\n");
  Write(Device(1, "connected_devices"), "");  // the list did not fit the driver's 20 bytes
  // Zeroed by a root write, then frees went on subtracting.
  Write(Device(1, "stats/memory_usage/host_mem/dma_buffers/total"), Number(0 - 24576ULL));
  Write(Device(1, "neuron_core4/stats/other_info/nc_time_in_use/total"), "busy\n");
}

void FakeTree::AdvanceTrn2Counters(std::chrono::microseconds elapsed, double utilization,
                                   std::optional<int> device) const {
  const std::uint64_t busy_us = BusyMicroseconds(elapsed, utilization);
  const std::uint64_t executions = busy_us / kBusyMicrosecondsPerExecution;
  for (const fs::path& core : CoreDirs(root_, device)) {
    Increment(core / "stats/other_info/nc_time_in_use", busy_us);
    Increment(core / "stats/other_info/flop_count", busy_us * kFlopsPerBusyMicrosecond);
    Increment(core / "stats/other_info/inference_count", executions);
    Increment(core / "stats/status/success", executions);
  }
  AdvanceTrn2TensorEngine(elapsed, utilization, device);
}

void FakeTree::AdvanceTrn2TensorEngine(std::chrono::microseconds elapsed, double utilization,
                                       std::optional<int> device) const {
  const auto elapsed_us = static_cast<std::uint64_t>(std::max<std::int64_t>(elapsed.count(), 0));
  const std::uint64_t busy_us = BusyMicroseconds(elapsed, utilization);
  for (const fs::path& core : CoreDirs(root_, device)) {
    AdvancePeCounters(core / "stats/tensor_engine/pe_cntrs", busy_us * kCyclesPerMicrosecond,
                      elapsed_us * kCyclesPerMicrosecond);
  }
}

}  // namespace neuronmon::neurondev::testing
