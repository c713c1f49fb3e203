#include "tests/neurondev/tree_writer.h"

#include <unistd.h>

#include <fstream>

namespace neuronmon::neurondev::testing {

namespace fs = std::filesystem;

namespace {

// The names driver 2.23-2.25 uses (neuron_sysfs_metrics.c).
constexpr const char* kHostCategories[] = {"dma_buffers",        "tensors",       "constants",
                                           "application_memory", "driver_memory", "notifications",
                                           "dma_rings",          "uncategorized"};
constexpr const char* kDeviceCategories[] = {
    "model_code",     "tensors",       "constants",    "model_shared_scratchpad",
    "runtime_memory", "driver_memory", "collectives",  "nonshared_scratchpad",
    "notifications",  "dma_rings",     "uncategorized"};
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

}  // namespace

FakeTree::FakeTree() {
  std::string pattern = (fs::temp_directory_path() / "neurondev-XXXXXX").string();
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
  Write(Device(n, "connected_devices"),
        std::to_string((n + 15) % 16) + ", " + std::to_string((n + 1) % 16) + "\n");
  char serial[32];
  std::snprintf(serial, sizeof serial, "%016llx\n", 0x1d0f000000000000ULL + n);
  Write(Device(n, "info/serial_number"), serial);
  Write(Device(n, "info/architecture/arch_type"), "NDv3\n");
  Write(Device(n, "info/architecture/instance_type"), "Trn2\n");
  Write(Device(n, "info/architecture/device_name"), "Trainium2\n");
  for (const char* cat : kHostCategories) {
    counter(std::string("stats/memory_usage/host_mem/") + cat + "/total", 1000u * (n + 1));
    counter(std::string("stats/memory_usage/host_mem/") + cat + "/present", 64);
    counter(std::string("stats/memory_usage/host_mem/") + cat + "/peak", 2000u * (n + 1));
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
    for (const char* cat : kDeviceCategories) {
      counter(core + "memory_usage/device_mem/" + cat + "/total", (1u << 20) * (k + 1));
      counter(core + "memory_usage/device_mem/" + cat + "/peak", (1u << 21) * (k + 1));
    }
  }
}

}  // namespace neuronmon::neurondev::testing
