// The active half of `neuron-ls --check --active` (docs/health.md, "The active check"): one
// all-reduce over every NeuronCore of this host with AWS's nccom-test, run only when the tool is
// installed and no process holds a NeuronCore, its bus bandwidth compared with a floor derived
// from the instance type's NeuronLink bandwidth (or the operator's own --min-busbw). Everything
// but RunActiveCheck is pure; RunActiveCheck blocks while the tool runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/health_check.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/clock.h"

namespace neuronmon::neurondev {
struct ChildRun;
}

namespace neuronmon::exporter {

struct ActiveOptions {
  std::string nccom_test;  // the tool; "": `nccom-test` in $PATH, else /opt/aws/neuron/bin
  std::string path_env;    // $PATH to search
  std::string aws_tools_dir = "/opt/aws/neuron/bin";  // searched after $PATH
  // Held (flock) while the collective runs, so that two gates (NPD, a Prolog, a person) never
  // run theirs at once: the second says device_busy. "": no lock.
  std::string lock_path = "/run/lock/neuron-ls-active.lock";
  Nanos timeout = std::chrono::minutes(2);
  std::optional<double> min_busbw;  // GB/s as nccom-test prints it; unset: the built-in floor
  std::uint64_t bytes = std::uint64_t{256} << 20;
  int iterations = 20;
};

// The figure an instance type's all-reduce is judged by: AWS's NeuronLink bandwidth per device
// from the architecture pages, in nccom-test's unit (GiB/s, which it prints as "GB/s").
struct BusBandwidthReference {
  std::string_view instance_type;
  double link_gbps;
  std::string_view source;  // "trn1 architecture page: NeuronLink-v2 384 GiB/s per device"
};

// The share of the reference the default floor is: low on purpose (AWS publishes no all-reduce
// figure per instance type), so it fails a broken interconnect, not a slow one.
inline constexpr double kDefaultFloorShare = 0.05;

// nullopt for a single-device type (no NeuronLink) or one this build does not know.
std::optional<BusBandwidthReference> ReferenceBusBandwidth(std::string_view instance_type);

// What nccom-test printed, read: the "Avg bus bandwidth:" line, else the mean of the busbw
// column; `failed` when it reports a failed run ("Failure running ...", "N errors found").
struct NccomOutput {
  std::optional<double> busbw;
  bool failed = false;
  std::string failure;  // the line that says so
};
NccomOutput ParseNccomOutput(std::string_view out);

// nccom-test's arguments (without argv[0]): the operation first, so that a trailing `--check`
// (whose mode argument is optional) cannot take it as its value.
std::vector<std::string> NccomArgs(std::uint32_t ranks, const ActiveOptions& options);

// The tool's path, or "" when it is not installed (`looked` says where it looked).
std::string FindNccomTest(const ActiveOptions& options, std::string* looked);

// Before running: a device a process holds (a runtime, not a monitoring tool) or the kubelet gave
// a pod, fewer than two cores. nullopt when the collective may run.
std::optional<ActiveResult> ActivePrecheck(const v1::Inventory& inventory);

// The verdict on a finished run.
ActiveResult JudgeRun(const neurondev::ChildRun& run, std::uint32_t ranks,
                      const std::string& instance_type, const ActiveOptions& options);

// All of it: precheck, find, run, judge. `instance_type` picks the reference.
ActiveResult RunActiveCheck(const v1::Inventory& inventory, const std::string& instance_type,
                            const ActiveOptions& options);

}  // namespace neuronmon::exporter
