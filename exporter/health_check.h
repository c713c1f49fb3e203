// The health gate of `neuron-ls --check` (docs/health.md, "A gate for schedulers"): from what a
// daemon (or a one-shot read of this host's driver) says — the inventory, one report with the
// devices' health — and what the operator requires, whether the node may take work: healthy (exit
// 0), unhealthy (1) or unknown (2), the contract of Node Problem Detector's custom plugins, with
// every reason. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/common/clock.h"

namespace neuronmon::exporter {

enum class CheckOutcome : int { kHealthy = 0, kUnhealthy = 1, kUnknown = 2 };

// The active check (`--active`, exporter/active_check.h): a collective run on every NeuronCore.
enum class ActiveOutcome {
  kPassed,      // the collective completed, at or above the floor (or with no floor to judge by)
  kFailed,      // it failed, hung past the timeout, or ran below the floor: unhealthy
  kUnknown,     // it could not be run (no nccom-test, fewer than 2 NeuronCores): unknown
  kDeviceBusy,  // a process holds NeuronCores: not run, unknown
  kSkipped,     // the passive check already found the node unhealthy: not run
};

// "passed", "failed", "unknown", "device_busy", "skipped".
const char* ActiveOutcomeName(ActiveOutcome outcome);

struct ActiveResult {
  ActiveOutcome outcome = ActiveOutcome::kSkipped;
  std::string reason;   // one line, terminal-safe
  std::string command;  // what ran (or would have): "/opt/aws/neuron/bin/nccom-test allr -r 32 ..."
  std::uint32_t ranks = 0;
  std::optional<double> busbw;      // measured
  std::optional<double> reference;  // the instance type's NeuronLink figure
  std::optional<double> floor;      // what it had to reach
  double seconds = 0;               // the tool's wall time
};

// What the operator requires (the flags).
struct CheckOptions {
  // The health state that makes the node unhealthy (--fail-on): FAILED, or DEGRADED as well.
  v1::HealthState fail_on = v1::HEALTH_STATE_FAILED;
  // Devices there must be (--expect-devices); unset: what the instance type has, when known.
  std::optional<std::uint32_t> expect_devices;
  // NeuronCores no process holds (--min-free-cores); unset: none required.
  std::optional<std::uint32_t> min_free_cores;
  // The newest sample may be at most this old (--max-age).
  Nanos max_age = std::chrono::seconds(30);
};

// What was learnt, and from where.
struct CheckInput {
  std::string source;  // "neuron-monitord (unix:/run/...)", "this host's driver (/sys)"
  // Empty when nothing could be read; then why not.
  std::string unreachable;
  // The instance type, when known even without a reading (DMI on EC2): for the device count.
  std::string instance_type;
  std::optional<v1::Inventory> inventory;
  std::optional<v1::Report> report;  // with system.device_health
  WallTime now;
};

struct CheckResult {
  CheckOutcome outcome = CheckOutcome::kUnknown;
  std::string source;
  // Why, the decisive first: "ND3 failed: ...", "14 of 16 devices (trn2.48xlarge)".
  std::vector<std::string> reasons;
  std::uint32_t devices = 0;
  std::optional<std::uint32_t> expected_devices;
  std::uint32_t ok = 0, degraded = 0, failed = 0, unknown = 0;  // devices by health
  std::optional<std::uint32_t> free_cores;
  std::optional<double> sample_age_seconds;
  std::optional<ActiveResult> active;  // with --active
};

// The devices an instance type has (AWS's figures: trn1.2xlarge 1, trn1.32xlarge 16, ...);
// nullopt for a type this build does not know.
std::optional<std::uint32_t> ExpectedDevices(const std::string& instance_type);

// The verdict. Unhealthy wins over unknown: any device at or past `fail_on`, fewer devices than
// expected (none at all on an instance type that has some), fewer free cores than required.
// Unknown: nothing could be read, no report, a device whose health is not known, the newest
// sample older than max_age.
CheckResult EvaluateCheck(const CheckInput& input, const CheckOptions& options);

// Adds the active check's result: failed makes the node unhealthy; device_busy and unknown make
// a healthy node unknown; its reason joins the others (a pass's at the end, as a note).
void AddActive(CheckResult* result, ActiveResult active);

// The one line for stdout: "healthy: 16 devices ok (neuron-monitord unix:...)",
// "unhealthy: ND3 failed: ...; 14 of 16 devices (trn2.48xlarge)", "unknown: ...". No newline.
std::string CheckLine(const CheckResult& result);

// Everything as one JSON object (no newline): outcome, exit_code, source, reasons, devices,
// expected_devices, ok, degraded, failed, unknown, free_cores, sample_age_seconds.
std::string CheckJson(const CheckResult& result);

}  // namespace neuronmon::exporter
