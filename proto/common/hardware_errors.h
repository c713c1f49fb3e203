// HardwareErrors: the hardware errors the driver counts for a device, cumulative since it loaded
// (docs/health.md), and its field table — one row per counter, beside the struct, that every layer
// iterates: Minus and the totals here, the snapshot codec and the reports' HardwareErrorCounts
// (proto/wire/field_codec.h, by the row's name), neuron-monitor's device_health JSON, the
// neuron_device_hardware_errors_total family, the devices' health reasons, the kernel log's
// NEURON_HW_ERR types (neurondev/kernel_log.cc) and the simulator's. Adding a counter is a member,
// a row and a field of v1.HardwareErrorCounts with the row's name (a test holds the message to the
// table). Plain values; thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace neuronmon {

// The counts: uncorrectable HBM and SRAM ECC (the driver's totals: EccCounters may count only since
// the daemon started), repairable HBM ECC, executions that hit an uncorrectable NeuronCore, HBM,
// DMA or collectives error or an uncorrectable HBM error a reset repairs, hardware error events,
// and the NEURON_HW_ERR events the driver logged in the kernel log naming the device, by type.
struct HardwareErrors {
  std::uint64_t mem_ecc_uncorrected = 0;
  std::uint64_t sram_ecc_uncorrected = 0;
  std::uint64_t mem_ecc_repairable = 0;
  std::uint64_t nc_uncorrectable = 0;
  std::uint64_t hbm_uncorrectable = 0;
  std::uint64_t dma_abort = 0;
  std::uint64_t collectives = 0;
  std::uint64_t events = 0;
  std::uint64_t kernel_sram_uncorrectable = 0;
  std::uint64_t kernel_nc_uncorrectable = 0;
  std::uint64_t kernel_hbm_uncorrectable = 0;
  std::uint64_t kernel_dma = 0;
  std::uint64_t kernel_other = 0;
  std::uint64_t hbm_repairable = 0;
  // What each counter grew by since `earlier` (one that went backwards counts its own value).
  HardwareErrors Minus(const HardwareErrors& earlier) const;
  // The driver's counters (the kernel log's events repeat what they count).
  std::uint64_t Total() const;
  // The kernel log's events.
  std::uint64_t KernelTotal() const;
  bool operator==(const HardwareErrors&) const = default;
};

// A device's health, numbered as v1::HealthState and v1::HealthAction (device health converts).
enum class HealthState : std::uint8_t { kOk = 1, kDegraded = 2, kFailed = 3 };
enum class HealthAction : std::uint8_t { kNone, kWatch, kDrain, kReset, kReplace };

enum class ErrorSource : std::uint8_t {
  kDriver,     // the driver's counters (sysfs)
  kKernelLog,  // NEURON_HW_ERR lines in the kernel log
};

// What a non-zero count makes a device, and the reason's words: "<count> <one|many><what> since
// the driver loaded<advice>", e.g. "2 executions hit an uncorrectable HBM error since the driver
// loaded". A kernel-log row uses only the code: any process that can open a Neuron device can
// print a NEURON_HW_ERR line, so its events beyond what the driver's counters confirm make a device
// degraded (drain) whatever their type, "<count> NEURON_HW_ERR events (<type>) reported in the
// kernel log, not confirmed by the driver's counters"; the driver's own row decides the rest.
struct HealthRule {
  std::string_view code = {};  // the reason's code; "": the row's name
  HealthState state = HealthState::kDegraded;
  HealthAction action = HealthAction::kDrain;
  std::string_view one = {}, many = {}, what = {}, advice = {};
};

struct HardwareErrorField {
  // The field of v1.HardwareErrorCounts, the JSON key, and the `type` label of
  // neuron_device_hardware_errors_total.
  std::string_view name;
  std::uint64_t HardwareErrors::*member;
  ErrorSource source = ErrorSource::kDriver;
  // A kernel-log row: the NEURON_HW_ERR type it counts ("": every type no other row counts). A
  // driver row: the type whose events repeat its counts ("": none).
  std::string_view kernel_type = {};
  // A series of neuron_device_hardware_errors_total (the ECC totals have hardware_ecc_events).
  bool exported = true;
  // Executions that hit the error: the driver reports each as a hardware error event too, so
  // `events` beyond them are events of their own.
  bool execution = false;
  HealthRule health = {};
};

// In the order of v1.HardwareErrorCounts' fields.
inline constexpr std::array<HardwareErrorField, 14> kHardwareErrorFields = {{
    {.name = "mem_ecc_uncorrected",
     .member = &HardwareErrors::mem_ecc_uncorrected,
     .kernel_type = "HBM_UNCORRECTABLE_ERROR",
     .exported = false,
     .health = {.state = HealthState::kFailed,
                .action = HealthAction::kReplace,
                .one = "uncorrectable HBM ECC error",
                .many = "uncorrectable HBM ECC errors"}},
    {.name = "mem_ecc_repairable",
     .member = &HardwareErrors::mem_ecc_repairable,
     .health = {.action = HealthAction::kReset,
                .one = "uncorrected HBM ECC error",
                .many = "uncorrected HBM ECC errors",
                .what = " a reset repairs"}},
    {.name = "sram_ecc_uncorrected",
     .member = &HardwareErrors::sram_ecc_uncorrected,
     .kernel_type = "SRAM_UNCORRECTABLE_ERROR",
     .exported = false,
     .health = {.action = HealthAction::kReset,
                .one = "uncorrectable SRAM ECC error",
                .many = "uncorrectable SRAM ECC errors"}},
    {.name = "nc_uncorrectable",
     .member = &HardwareErrors::nc_uncorrectable,
     .kernel_type = "NC_UNCORRECTABLE_ERROR",
     .execution = true,
     .health = {.state = HealthState::kFailed,
                .action = HealthAction::kReset,
                .one = "execution",
                .many = "executions",
                .what = " hit an uncorrectable NeuronCore error"}},
    {.name = "hbm_uncorrectable",
     .member = &HardwareErrors::hbm_uncorrectable,
     .kernel_type = "HBM_UNCORRECTABLE_ERROR",
     .execution = true,
     .health = {.state = HealthState::kFailed,
                .action = HealthAction::kReplace,
                .one = "execution",
                .many = "executions",
                .what = " hit an uncorrectable HBM error"}},
    {.name = "dma_abort",
     .member = &HardwareErrors::dma_abort,
     .kernel_type = "DMA_ERROR",
     .execution = true,
     .health = {.action = HealthAction::kReset,
                .one = "execution",
                .many = "executions",
                .what = " aborted by a DMA error"}},
    {.name = "collectives",
     .member = &HardwareErrors::collectives,
     .execution = true,
     .health = {.code = "collectives_error",
                .one = "execution",
                .many = "executions",
                .what = " hit a collectives hardware error",
                .advice = " (check its links and peers)"}},
    {.name = "events",
     .member = &HardwareErrors::events,
     .health = {.code = "hw_error_event",
                .one = "hardware error event",
                .many = "hardware error events",
                .what = " reported"}},
    {.name = "kernel_sram_uncorrectable",
     .member = &HardwareErrors::kernel_sram_uncorrectable,
     .source = ErrorSource::kKernelLog,
     .kernel_type = "SRAM_UNCORRECTABLE_ERROR"},
    {.name = "kernel_nc_uncorrectable",
     .member = &HardwareErrors::kernel_nc_uncorrectable,
     .source = ErrorSource::kKernelLog,
     .kernel_type = "NC_UNCORRECTABLE_ERROR"},
    {.name = "kernel_hbm_uncorrectable",
     .member = &HardwareErrors::kernel_hbm_uncorrectable,
     .source = ErrorSource::kKernelLog,
     .kernel_type = "HBM_UNCORRECTABLE_ERROR"},
    {.name = "kernel_dma",
     .member = &HardwareErrors::kernel_dma,
     .source = ErrorSource::kKernelLog,
     .kernel_type = "DMA_ERROR",
     .health = {.code = "kernel_dma_error"}},
    {.name = "kernel_other",
     .member = &HardwareErrors::kernel_other,
     .source = ErrorSource::kKernelLog,
     .health = {.code = "kernel_hw_error"}},
    {.name = "hbm_repairable",
     .member = &HardwareErrors::hbm_repairable,
     .execution = true,
     .health = {.action = HealthAction::kReset,
                .one = "execution",
                .many = "executions",
                .what = " hit an uncorrectable HBM error a reset repairs"}},
}};

// Every member has a row: a counter added to the struct without one does not compile.
static_assert(sizeof(HardwareErrors) == kHardwareErrorFields.size() * sizeof(std::uint64_t));

// The kernel-log row counting NEURON_HW_ERR events of `type` (the catch-all row for a type no
// row names).
const HardwareErrorField& KernelLogFieldOf(std::string_view type);

}  // namespace neuronmon
