// Scenario: a simulated workload — runtimes (processes) running training jobs or inference
// servers on sets of devices, a fault plan by time window, and the diagnosis each runtime should
// get. Scenarios are JSON files (format: docs/scenarios.md); ParseScenario validates everything
// and returns either a complete Scenario or the first problem, never a half-loaded one.
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::simdev {

enum class DType { kBf16, kFp8, kFp32 };

inline constexpr int kMaxNodes = 1024;  // cluster nodes a scenario may span

// One collective the workload issues repeatedly.
struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0;    // message size per operation
  double count = 1;    // operations per training step (or per inference batch)
  double overlap = 0;  // fraction hidden behind compute (0..1)
};

struct TrainingSpec {
  double parameters = 8e9;
  DType dtype = DType::kBf16;
  double tokens_per_step = 1 << 20;   // global batch, tokens
  double flops_per_token = 0;         // 0: 6 x parameters (forward + backward)
  double compute_efficiency = 0.55;   // fraction of peak FLOP/s while computing
  double arithmetic_intensity = 400;  // FLOPs per HBM byte during compute
  double input_seconds = 0.05;        // host input pipeline time per step
  bool input_prefetch = true;         // input of step k+1 overlaps compute of step k
  std::vector<CollectiveSpec> collectives;
  int nodes = 1;                   // nodes the job spans (collectives cross EFA when > 1)
  int checkpoint_every_steps = 0;  // 0: never
  Nanos checkpoint_duration{0};
  int warmup_steps = 5;
  double warmup_slowdown = 3;                      // warm-up steps take this many times longer
  double optimizer_bytes_per_parameter = 32;       // HBM traffic of the optimizer step
  double activation_bytes_per_token = 256 * 1024;  // HBM held for activations
  double noise = 0.02;                             // relative step-to-step variation
  double dataloader_cpus = 4;                      // host CPUs the input pipeline keeps busy
};

struct InferenceSpec {
  double parameters = 7e9;
  DType dtype = DType::kBf16;
  double requests_per_second = 200;  // Poisson arrivals, per runtime
  double load_swing = 0;             // relative amplitude of a slow sinusoidal load swing
  Nanos swing_period{std::chrono::minutes(10)};
  int max_batch = 8;
  Nanos batch_timeout{std::chrono::milliseconds(5)};
  double flops_per_request = 2e12;
  double kv_bytes_per_request = 256 << 20;
  Nanos overhead{std::chrono::microseconds(800)};  // fixed cost of one execution
  std::vector<CollectiveSpec> collectives;         // per batch (tensor-parallel)
  int max_queue = 256;                             // requests; more fail to queue
  double noise = 0.05;
};

struct IdleSpec {};  // a model is loaded, nothing runs

using Workload = std::variant<TrainingSpec, InferenceSpec, IdleSpec>;

enum class Workers { kPerDevice, kPerCore, kSingle };

// A verdict the analyzer should give from `from` on (until the next expectation).
struct Expectation {
  Nanos from{0};
  std::string diagnosis;   // "healthy", "input_bound", ...
  std::vector<int> ranks;  // workers it applies to; empty: all of the runtime's workers
};

struct RuntimeSpec {
  std::string name;       // scenario-local id, referenced by faults
  std::string tag;        // "{rank}" expands to the worker's rank; empty: the pid is the tag
  std::uint32_t pid = 0;  // first worker's pid; 0: derived from the seed
  std::string command;
  // Who runs it (docs/attribution.md), each optional: the user, the Kubernetes pod, its namespace
  // and container, the Slurm job ("4242", or "4242_7" for array task 7 of job 4242).
  std::string user;
  std::string pod;
  std::string pod_namespace;  // JSON "namespace"
  std::string container;
  std::string slurm_job;
  std::string model_name;  // NEFF path shown in loaded_models
  std::string runtime_version = "2.21.41.0";
  std::string framework_version = "2.5.1";  // "" for none: written into its datastore
  std::vector<int> devices;                 // empty: every device
  Workers workers = Workers::kPerDevice;
  Nanos start{0};  // may be negative: the job was running before the monitor started
  Nanos load_duration{std::chrono::seconds(10)};
  std::optional<Nanos> stop;  // the process exits
  Workload workload = TrainingSpec{};
  std::vector<Expectation> expect;
};

enum class FaultType {
  kEcc,              // ECC events on a device
  kRuntimeExit,      // a runtime's processes exit
  kDeviceLost,       // a device stops answering
  kNanErrors,        // numerical errors in a runtime's executions
  kTimeouts,         // executions time out
  kDeviceReset,      // every counter restarts from zero
  kSlowdown,         // a device computes slower (a straggler)
  kHang,             // a rank stops joining its job's collectives; every other rank waits for it
  kInputSlowdown,    // a runtime's host input pipeline is `factor` times slower
  kNetworkSlowdown,  // a runtime's collectives take `factor` times longer (congested fabric)
  kStall,            // a runtime's processes stop submitting work but keep their NeuronCores
  kHbmTraffic,       // a runtime's kernels move `factor` times more bytes through HBM per step
  kHardwareError,    // a device reports hardware errors of one kind (FaultSpec::error)
  kMemoryGrowth,     // a runtime's device memory grows (a KV cache, a leak) toward HBM capacity
};

// The hardware errors a `hardware_error` fault reports, as the driver counts them.
enum class HardwareErrorKind {
  kNeuronCore,   // "nc": executions hit an uncorrectable NeuronCore error
  kHbm,          // "hbm": executions hit an uncorrectable HBM error
  kDma,          // "dma": executions aborted by a DMA error
  kCollectives,  // "collectives": executions hit a collectives hardware error
  kEvent,        // "event": hardware error events only (no execution fails)
};

struct FaultSpec {
  FaultType type = FaultType::kEcc;
  Nanos start{0};
  std::optional<Nanos> end;  // open-ended when absent
  int node = -1;             // the cluster node it happens on; -1: every node
  int device = -1;           // -1 on a slowdown: every device of `node`
  int rank = -1;             // hang: the worker (of `runtime`) that stops joining
  std::string runtime;       // RuntimeSpec::name
  bool sram = false;         // ECC: on-chip SRAM instead of HBM
  bool uncorrected = false;  // ECC severity
  bool repairable = false;   // ECC: uncorrected, but a device reset repairs it (HBM only)
  HardwareErrorKind error = HardwareErrorKind::kNeuronCore;  // hardware_error
  double limit = 0.97;    // memory_growth: of the HBM of the runtime's devices, at most
  double per_second = 1;  // event rate; memory_growth: bytes per second per device
  double factor = 1;      // slowdown factor
};

struct Scenario {
  std::string name;
  std::string description;
  // A cluster: this daemon simulates node `node` of `nodes`. Every node runs the same scenario and
  // seed, so all agree on the job's steps; training jobs span every node (their collectives cross
  // EFA), and a fault on one node (FaultSpec::node) slows or stalls the job on all of them.
  int nodes = 1;
  int node = 0;
  // The preset the scenario was written for. On another preset, training jobs keep their work per
  // core: model and batch scale with the instance (see Instance::Create).
  std::string instance;
  std::vector<RuntimeSpec> runtimes;
  std::vector<FaultSpec> faults;
  std::vector<Expectation> instance_expect;
};

// Parses scenario JSON (comments allowed). `source` names the file in errors, which read
// "SOURCE: FIELD: what is wrong".
Result<Scenario> ParseScenario(std::string_view json_text, const std::string& source);

const char* DTypeName(DType dtype);

}  // namespace neuronmon::simdev
