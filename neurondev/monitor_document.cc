#include "neurondev/monitor_document.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "proto/common/file_reader.h"
#include "proto/common/json_reader.h"

namespace neuronmon::neurondev {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxCount = INT64_MAX;
// Generous ceilings that only reject what cannot be a reading.
constexpr double kMaxUtilization = 1000;  // percent; above 100 is rounding, clamped when added
constexpr double kMaxPercent = 1e6;       // vCPU percent
constexpr double kMaxRate = 1e30;         // FLOP/s, bytes/s, operations/s
constexpr double kMaxLatency = 1e6;       // seconds

// --- Parsing ---------------------------------------------------------------------------------

// The deepest nesting of objects and arrays in `text`, counted before parsing so that a hostile
// document cannot make the parser or the destructor recurse deeply.
std::size_t NestingDepth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// `text` cut to at most `max_bytes` without splitting a UTF-8 character (the parser has checked
// that it is valid UTF-8).
std::string Bounded(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

// A parser's message may quote the offending bytes: keep it printable ASCII.
std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

std::optional<std::uint32_t> IndexOf(std::string_view key, std::uint64_t max) {
  if (key.empty() || key.size() > 10 || (key[0] == '0' && key.size() > 1)) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > max) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

std::uint64_t Count(JsonReader& r, std::string_view key) {
  return static_cast<std::uint64_t>(r.Integer(key, 0, 0, kMaxCount));
}

// The members of `object` (nullptr: none), refusing more than `max`.
bool WithinBound(JsonReader& r, std::string_view key, const json* object, std::size_t max) {
  if (object == nullptr || object->size() <= max) return true;
  r.Problem(key, std::to_string(object->size()) + " entries, more than the limit of " +
                     std::to_string(max));
  return false;
}

std::optional<LatencyPercentiles> Percentiles(JsonReader& parent, std::string_view key,
                                              std::vector<std::string>* problems) {
  const json* object = parent.Object(key);
  if (object == nullptr) return std::nullopt;  // null: nothing completed
  JsonReader r(*object, parent.PathOf(key), problems);
  LatencyPercentiles p;
  p.p0 = r.Number("p0", 0, 0, kMaxLatency);
  p.p1 = r.Number("p1", 0, 0, kMaxLatency);
  p.p25 = r.Number("p25", 0, 0, kMaxLatency);
  p.p50 = r.Number("p50", 0, 0, kMaxLatency);
  p.p75 = r.Number("p75", 0, 0, kMaxLatency);
  p.p99 = r.Number("p99", 0, 0, kMaxLatency);
  p.p100 = r.Number("p100", 0, 0, kMaxLatency);
  return p;
}

// The context of one group's content: its reader, the limits and where problems go.
struct GroupInput {
  JsonReader& r;
  const MonitorLimits& limits;
  std::vector<std::string>* problems;
};

void ReadPhysical(GroupInput in, const json& v3d, const std::string& path,
                  std::vector<PhysicalCoreUtilization>* out) {
  for (auto it = v3d.begin(); it != v3d.end(); ++it) {
    const std::string& name = it.key();  // "nc_v3.<N>"
    const std::size_t dot = name.rfind('.');
    const auto index =
        IndexOf(dot == std::string::npos ? "" : std::string_view(name).substr(dot + 1),
                std::uint64_t{in.limits.max_core_index} * 4);
    if (!index) {
      in.problems->push_back(path + "." + name + ": not a physical core name");
      continue;
    }
    JsonReader core(it.value(), path + "." + name, in.problems);
    out->push_back({*index, core.Number("neuroncore_utilization", 0, 0, kMaxUtilization)});
  }
  std::sort(out->begin(), out->end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
}

void ReadCoreCounters(GroupInput in, NeuroncoreCounters* out) {
  const json* in_use = in.r.Object("neuroncores_in_use");
  if (in_use == nullptr ||
      !WithinBound(in.r, "neuroncores_in_use", in_use, in.limits.max_cores_per_runtime)) {
    return;
  }
  for (auto it = in_use->begin(); it != in_use->end(); ++it) {
    const std::string path = in.r.PathOf("neuroncores_in_use") + "." + it.key();
    const auto core = IndexOf(it.key(), in.limits.max_core_index);
    if (!core) {
      in.problems->push_back(path + ": not a core index");
      continue;
    }
    JsonReader c(it.value(), path, in.problems);
    CoreUtilization u;
    u.core = *core;
    u.utilization = c.Number("neuroncore_utilization", 0, 0, kMaxUtilization);
    if (c.Raw("flops") != nullptr) u.flops = c.Number("flops", 0, 0, kMaxRate);
    if (c.Raw("effective_flops") != nullptr) {
      u.effective_flops = c.Number("effective_flops", 0, 0, kMaxRate);
    }
    const json* v3d = c.Object("v3d");
    if (v3d != nullptr && WithinBound(c, "v3d", v3d, in.limits.max_physical_cores)) {
      ReadPhysical(in, *v3d, c.PathOf("v3d"), &u.physical);
    }
    out->cores.push_back(std::move(u));
  }
  std::sort(out->cores.begin(), out->cores.end(),
            [](const auto& a, const auto& b) { return a.core < b.core; });
}

void ReadExecutionStats(GroupInput in, ExecutionStats* out) {
  ExecutionCounters& c = out->counts;
  for (const auto& [key, part] : {std::pair{"execution_summary", ExecutionPart::kOutcome},
                                  std::pair{"error_summary", ExecutionPart::kError}}) {
    const json* summary = in.r.Object(key);
    if (summary == nullptr) continue;
    JsonReader s(*summary, in.r.PathOf(key), in.problems);
    for (const ExecutionField& f : kExecutionFields) {
      if (f.part == part) c.*f.member = Count(s, f.name);
    }
  }
  if (const json* latency = in.r.Object("latency_stats")) {
    JsonReader l(*latency, in.r.PathOf("latency_stats"), in.problems);
    out->total_latency = Percentiles(l, "total_latency", in.problems);
    out->device_latency = Percentiles(l, "device_latency", in.problems);
  }
}

HostMemory ReadHostMemory(JsonReader& parent, std::string_view key,
                          std::vector<std::string>* problems) {
  HostMemory m;
  if (const json* object = parent.Object(key)) {
    JsonReader r(*object, parent.PathOf(key), problems);
    m.application_memory = Count(r, "application_memory");
    m.constants = Count(r, "constants");
    m.dma_buffers = Count(r, "dma_buffers");
    m.tensors = Count(r, "tensors");
  }
  return m;
}

void ReadCoreMemory(GroupInput in, JsonReader& breakdown, RuntimeMemory* out) {
  const json* cores = breakdown.Object("neuroncore_memory_usage");
  if (cores == nullptr ||
      !WithinBound(breakdown, "neuroncore_memory_usage", cores, in.limits.max_cores_per_runtime)) {
    return;
  }
  for (auto it = cores->begin(); it != cores->end(); ++it) {
    const std::string path = breakdown.PathOf("neuroncore_memory_usage") + "." + it.key();
    const auto core = IndexOf(it.key(), in.limits.max_core_index);
    if (!core) {
      in.problems->push_back(path + ": not a core index");
      continue;
    }
    JsonReader r(it.value(), path, in.problems);
    CoreMemory m;
    m.core = *core;
    m.constants = Count(r, "constants");
    m.model_code = Count(r, "model_code");
    m.model_shared_scratchpad = Count(r, "model_shared_scratchpad");
    m.runtime_memory = Count(r, "runtime_memory");
    m.tensors = Count(r, "tensors");
    out->cores.push_back(m);
  }
  std::sort(out->cores.begin(), out->cores.end(),
            [](const auto& a, const auto& b) { return a.core < b.core; });
}

SubgraphMemory ReadSubgraph(GroupInput in, const std::string& name, const json& object,
                            const std::string& path) {
  JsonReader r(object, path, in.problems);
  SubgraphMemory s;
  s.name = Bounded(name, in.limits.max_string_bytes);
  s.core =
      static_cast<std::uint32_t>(r.Integer("neuroncore_index", 0, 0, in.limits.max_core_index));
  s.device =
      static_cast<std::uint32_t>(r.Integer("neuron_device_index", 0, 0, in.limits.max_core_index));
  const json* used = r.Object("memory_used_bytes");
  if (used == nullptr) return s;
  JsonReader u(*used, r.PathOf("memory_used_bytes"), in.problems);
  const json* breakdown = u.Object("usage_breakdown");
  if (breakdown == nullptr) return s;
  JsonReader b(*breakdown, u.PathOf("usage_breakdown"), in.problems);
  s.host = ReadHostMemory(b, "host", in.problems);
  if (const json* device = b.Object("neuron_device")) {
    JsonReader d(*device, b.PathOf("neuron_device"), in.problems);
    s.constants = Count(d, "constants");
    s.model_code = Count(d, "model_code");
    s.runtime_memory = Count(d, "runtime_memory");
    s.tensors = Count(d, "tensors");
  }
  return s;
}

LoadedModel ReadModel(GroupInput in, const json& object, const std::string& path) {
  JsonReader r(object, path, in.problems);
  LoadedModel m;
  m.name = Bounded(r.String("name"), in.limits.max_string_bytes);
  m.uuid = Bounded(r.String("uuid"), in.limits.max_string_bytes);
  m.model_id = static_cast<std::uint32_t>(r.Integer("model_id", 0, 0, UINT32_MAX));
  m.is_running = r.Bool("is_running", false);
  const json* subgraphs = r.Object("subgraphs");
  if (subgraphs == nullptr ||
      !WithinBound(r, "subgraphs", subgraphs, in.limits.max_subgraphs_per_model)) {
    return m;
  }
  for (auto it = subgraphs->begin(); it != subgraphs->end(); ++it) {
    m.subgraphs.push_back(
        ReadSubgraph(in, it.key(), it.value(), r.PathOf("subgraphs") + "." + it.key()));
  }
  return m;
}

void ReadMemoryUsed(GroupInput in, MemoryUsed* out) {
  if (const json* used = in.r.Object("neuron_runtime_used_bytes")) {
    JsonReader u(*used, in.r.PathOf("neuron_runtime_used_bytes"), in.problems);
    out->host_bytes = Count(u, "host");
    out->device_bytes = Count(u, "neuron_device");
    if (const json* breakdown = u.Object("usage_breakdown")) {
      JsonReader b(*breakdown, u.PathOf("usage_breakdown"), in.problems);
      out->memory.host = ReadHostMemory(b, "host", in.problems);
      ReadCoreMemory(in, b, &out->memory);
    }
  }
  const json* models = in.r.Array("loaded_models");
  if (models == nullptr ||
      !WithinBound(in.r, "loaded_models", models, in.limits.max_models_per_runtime)) {
    return;
  }
  for (std::size_t i = 0; i < models->size(); ++i) {
    out->memory.models.push_back(ReadModel(in, (*models)[i], in.r.PathOf("loaded_models", i)));
  }
}

void ReadVcpuUsage(GroupInput in, RuntimeVcpuUsage* out) {
  if (const json* usage = in.r.Object("vcpu_usage")) {
    JsonReader u(*usage, in.r.PathOf("vcpu_usage"), in.problems);
    out->user = u.Number("user", 0, 0, kMaxPercent);
    out->system = u.Number("system", 0, 0, kMaxPercent);
  }
}

void ReadCollectives(GroupInput in, CollectivesStats* out) {
  out->time_share = in.r.Number("time_share", 0, 0, 1);
  const json* operations = in.r.Object("operations");
  if (operations == nullptr) return;
  for (int k = 0; k < kCollectiveKinds; ++k) {
    // Operations this build does not know (a newer exporter) are left out, not errors.
    const auto it = operations->find(std::string(kCollectiveKindNames[k]));
    if (it == operations->end()) continue;
    JsonReader r(*it, in.r.PathOf("operations") + "." + std::string(kCollectiveKindNames[k]),
                 in.problems);
    CollectiveOperation op;
    op.kind = static_cast<CollectiveKind>(k);
    op.count = Count(r, "count");
    op.bytes = Count(r, "bytes");
    op.operations_per_second = r.Number("operations_per_second", 0, 0, kMaxRate);
    op.bytes_per_second = r.Number("bytes_per_second", 0, 0, kMaxRate);
    op.mean_message_bytes = r.Number("mean_message_bytes", 0, 0, kMaxRate);
    op.time_share = r.Number("time_share", 0, 0, 1);
    op.latency = Percentiles(r, "latency", in.problems);
    out->operations.push_back(std::move(op));
  }
}

// Reads group `name` of `report` with `read_content`. A group whose content breaks the schema
// keeps its period and error, has "malformed: <first problem>" added to the error, and carries
// no figures.
template <typename Group, typename ReadContent>
std::optional<Group> ReadGroup(JsonReader& report, const char* name, const MonitorLimits& limits,
                               ReadContent read_content) {
  const json* object = report.Raw(name);
  if (object == nullptr) return std::nullopt;
  std::vector<std::string> problems;
  JsonReader r(*object, report.PathOf(name), &problems);
  Group group;
  if (const json* period = r.Raw("period"); period != nullptr) {
    if (period->is_number()) {
      group.period = period->get<double>();
    } else {
      r.Problem("period", "expected a number");
    }
  }
  group.error = Bounded(r.String("error"), limits.max_string_bytes);
  if (object->is_object()) read_content(GroupInput{r, limits, &problems}, &group);
  if (problems.empty()) return group;
  Group refused;
  refused.period = group.period;
  refused.error = (group.error.empty() ? "" : group.error + "; ") +
                  "malformed: " + Bounded(problems.front(), limits.max_string_bytes);
  if (problems.size() > 1)
    refused.error += " (and " + std::to_string(problems.size() - 1) + " more)";
  return refused;
}

void ReadReport(JsonReader& report, const MonitorLimits& limits, MonitorRuntime* out) {
  out->neuroncore_counters =
      ReadGroup<NeuroncoreCounters>(report, "neuroncore_counters", limits, ReadCoreCounters);
  out->execution_stats =
      ReadGroup<ExecutionStats>(report, "execution_stats", limits, ReadExecutionStats);
  out->memory_used = ReadGroup<MemoryUsed>(report, "memory_used", limits, ReadMemoryUsed);
  out->neuron_runtime_vcpu_usage =
      ReadGroup<RuntimeVcpuUsage>(report, "neuron_runtime_vcpu_usage", limits, ReadVcpuUsage);
  out->collectives_stats =
      ReadGroup<CollectivesStats>(report, "collectives_stats", limits, ReadCollectives);
}

// One entry of neuron_runtime_data; nothing (and a problem) when it has no usable pid.
std::optional<MonitorRuntime> ReadRuntime(const json& entry, const std::string& path,
                                          const MonitorLimits& limits,
                                          std::vector<std::string>* problems) {
  const std::size_t before = problems->size();
  JsonReader r(entry, path, problems);
  if (!entry.is_object()) return std::nullopt;
  if (r.Raw("pid") == nullptr) r.Problem("pid", "missing");
  MonitorRuntime runtime;
  runtime.pid = static_cast<std::uint32_t>(r.Integer("pid", 0, 1, INT32_MAX));
  if (problems->size() > before) return std::nullopt;
  runtime.tag = Bounded(r.String("neuron_runtime_tag"), limits.max_string_bytes);
  runtime.error = Bounded(r.String("error"), limits.max_string_bytes);
  if (const json* report = r.Object("report")) {
    JsonReader groups(*report, r.PathOf("report"), problems);
    ReadReport(groups, limits, &runtime);
  }
  return runtime;
}

// `line` parsed, its size and nesting checked first.
Result<json> ParseBounded(std::string_view line, const MonitorLimits& limits) {
  if (line.size() > limits.max_document_bytes) {
    return Status::InvalidArgument("document of " + FormatBytes(line.size()) +
                                   " is larger than the limit of " +
                                   FormatBytes(limits.max_document_bytes));
  }
  if (NestingDepth(line) > limits.max_depth) {
    return Status::InvalidArgument("document nested deeper than " +
                                   std::to_string(limits.max_depth) + " levels");
  }
  try {
    return json::parse(line.begin(), line.end());
  } catch (const json::exception& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    if (const std::size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    return Status::InvalidArgument("not JSON: " + Printable(what));
  }
}

// --- Integration -----------------------------------------------------------------------------

std::uint64_t Nanoseconds(double value) {
  return value <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(value));
}

double Clamp100(double percent) { return std::clamp(percent, 0.0, 100.0); }

// Places `n` observations at the seven percentile points (see MonitorIntegrator::Add).
void AddPercentiles(const LatencyPercentiles& p, std::uint64_t n, LatencyHistogram& histogram) {
  const std::array<double, 7> points = {p.p0, p.p1, p.p25, p.p50, p.p75, p.p99, p.p100};
  constexpr std::array<std::uint64_t, 7> kPerMille = {5, 125, 245, 250, 245, 125, 5};
  // Largest remainder first; ties go to the central points.
  constexpr std::array<int, 7> kTieOrder = {3, 2, 4, 1, 5, 0, 6};
  std::array<std::uint64_t, 7> share{}, remainder{};
  std::uint64_t placed = 0;
  for (int i = 0; i < 7; ++i) {
    // n / 1000 * w + (n % 1000) * w / 1000, without overflowing for any n.
    share[i] = n / 1000 * kPerMille[i] + n % 1000 * kPerMille[i] / 1000;
    remainder[i] = n % 1000 * kPerMille[i] % 1000;
    placed += share[i];
  }
  std::array<int, 7> order = kTieOrder;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return remainder[a] > remainder[b]; });
  for (int k = 0; placed < n; ++k, ++placed) ++share[order[k % 7]];
  for (int i = 0; i < 7; ++i) {
    if (share[i] > 0) histogram.Add(points[i], share[i]);
  }
}

void AddExecutions(const ExecutionStats& stats, RuntimeSample& r) {
  r.executions += stats.counts;
  const std::uint64_t n = stats.counts.completed + stats.counts.completed_with_err +
                          stats.counts.completed_with_num_err;
  if (stats.total_latency) AddPercentiles(*stats.total_latency, n, r.total_latency);
  if (stats.device_latency) AddPercentiles(*stats.device_latency, n, r.device_latency);
}

void AddCollectives(const CollectivesStats& stats, double period, RuntimeSample& r) {
  for (const CollectiveOperation& op : stats.operations) {
    CollectiveCounters& c = r.collectives[static_cast<std::size_t>(op.kind)];
    c.count += op.count;
    c.bytes += op.bytes;
    c.busy_ns += Nanoseconds(op.time_share * 1e9 * period);
    if (op.latency) AddPercentiles(*op.latency, op.count, c.latency);
  }
}

// The cores of `counters` the runtime uses: busy in the period or holding its device memory.
// neuron-monitor lists every core of the host for every runtime on some hosts (at 0).
std::vector<std::uint32_t> CoresInUse(const NeuroncoreCounters& counters,
                                      const RuntimeMemory& memory, bool memory_known) {
  std::vector<std::uint32_t> cores;
  for (const CoreUtilization& c : counters.cores) {
    const auto m =
        std::lower_bound(memory.cores.begin(), memory.cores.end(), c.core,
                         [](const CoreMemory& cm, std::uint32_t core) { return cm.core < core; });
    const bool holds_memory = m != memory.cores.end() && m->core == c.core && m->Total() > 0;
    if (!memory_known || c.utilization > 0 || holds_memory) cores.push_back(c.core);
  }
  return cores;
}

// Seconds as Go prints them: whole numbers without a fraction.
std::string Seconds(double value) {
  if (std::trunc(value) == value && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  return json(value).dump();
}

// Why a counter group's period cannot place its counts in time; empty when it can.
std::string PeriodProblem(const std::optional<double>& period, double max_seconds) {
  if (!period) return "period missing; figures skipped";
  if (*period > 0 && *period <= max_seconds) return "";
  return "period " + Seconds(*period) + " is not in (0, " + Seconds(max_seconds) +
         "] seconds; figures skipped";
}

// One document's figures for one core, summed over the runtimes listing it.
struct CoreShare {
  double busy_ns = 0;
  double period_ns = 0;  // the longest period among them: the cap on busy_ns
  double flops = 0;
  double effective_flops = 0;
  std::vector<double> physical_busy_ns;
};

// Adds `counters` to `shares`; returns false when a core lacks a FLOPs figure.
bool ShareCores(const NeuroncoreCounters& counters, double period,
                std::map<std::uint32_t, CoreShare>& shares) {
  bool flops = true;
  for (const CoreUtilization& c : counters.cores) {
    flops = flops && c.flops && c.effective_flops;
    CoreShare& s = shares[c.core];
    s.busy_ns += Clamp100(c.utilization) * 1e7 * period;
    s.period_ns = std::max(s.period_ns, period * 1e9);
    s.flops += c.flops.value_or(0) * period;
    s.effective_flops += c.effective_flops.value_or(0) * period;
    if (s.physical_busy_ns.size() < c.physical.size()) s.physical_busy_ns.resize(c.physical.size());
    for (std::size_t k = 0; k < c.physical.size(); ++k) {
      s.physical_busy_ns[k] += Clamp100(c.physical[k].utilization) * 1e7 * period;
    }
  }
  return flops;
}

void AddShare(const CoreShare& share, CoreCounters& core) {
  core.busy_ns += Nanoseconds(std::min(share.busy_ns, share.period_ns));
  core.flops += share.flops;
  core.effective_flops += share.effective_flops;
  if (core.physical_busy_ns.size() < share.physical_busy_ns.size()) {
    core.physical_busy_ns.resize(share.physical_busy_ns.size());
  }
  for (std::size_t k = 0; k < share.physical_busy_ns.size(); ++k) {
    core.physical_busy_ns[k] += Nanoseconds(std::min(share.physical_busy_ns[k], share.period_ns));
  }
}

template <typename Group>
const MonitorGroup* GroupOf(const std::optional<Group>& group) {
  return group ? &*group : nullptr;
}

}  // namespace

Result<MonitorDocument> ParseMonitorDocument(std::string_view line, const MonitorLimits& limits) {
  Result<json> doc = ParseBounded(line, limits);
  if (!doc.ok()) return doc.status();
  if (!doc->is_object()) return Status::InvalidArgument("not a JSON object");
  MonitorDocument out;
  const auto runtimes = doc->find("neuron_runtime_data");
  if (runtimes == doc->end() || runtimes->is_null()) return out;
  if (!runtimes->is_array()) {
    return Status::InvalidArgument("neuron_runtime_data: expected an array");
  }
  if (runtimes->size() > limits.max_runtimes) {
    return Status::InvalidArgument("neuron_runtime_data: " + std::to_string(runtimes->size()) +
                                   " entries, more than the limit of " +
                                   std::to_string(limits.max_runtimes));
  }
  std::set<std::uint32_t> pids;
  for (std::size_t i = 0; i < runtimes->size(); ++i) {
    const std::string path = "neuron_runtime_data[" + std::to_string(i) + "]";
    std::optional<MonitorRuntime> runtime =
        ReadRuntime((*runtimes)[i], path, limits, &out.problems);
    if (!runtime) continue;
    if (!pids.insert(runtime->pid).second) {
      out.problems.push_back(path + ": pid " + std::to_string(runtime->pid) + " listed twice");
      continue;
    }
    out.runtimes.push_back(std::move(*runtime));
  }
  return out;
}

MonitorIntegrator::MonitorIntegrator(IntegratorOptions options) : options_(options) {}

void MonitorIntegrator::Add(const MonitorDocument& doc, MonoTime now) {
  errors_ = doc.problems;
  flops_reported_ = true;
  std::map<std::uint32_t, CoreShare> shares;
  std::set<std::uint32_t> listed;
  for (const MonitorRuntime& runtime : doc.runtimes) listed.insert(runtime.pid);
  std::erase_if(runtimes_, [&](const auto& entry) { return !listed.contains(entry.first); });
  // Within the cap, the first pids in ascending order (the same ones document after document).
  std::set<std::uint32_t> kept;
  for (auto it = listed.begin(); it != listed.end() && kept.size() < options_.max_runtimes; ++it) {
    kept.insert(*it);
  }
  dropped_ += listed.size() - kept.size();
  for (const MonitorRuntime& runtime : doc.runtimes) {
    if (!kept.contains(runtime.pid)) continue;
    AddRuntime(runtime, now);
    const auto& counters = runtime.neuroncore_counters;
    if (runtime.error.empty() && counters && counters->error.empty() &&
        PeriodProblem(counters->period, options_.max_period_seconds).empty()) {
      flops_reported_ = ShareCores(*counters, *counters->period, shares) && flops_reported_;
    }
  }
  for (const auto& [core, share] : shares) AddShare(share, cores_[core]);
}

std::optional<double> MonitorIntegrator::Usable(const MonitorRuntime& runtime,
                                                const MonitorGroup* group, const char* name,
                                                bool counters, GroupStatus& status) {
  status.error.clear();
  if (group == nullptr || !runtime.error.empty()) return std::nullopt;
  status.error = !group->error.empty() ? group->error
                 : counters            ? PeriodProblem(group->period, options_.max_period_seconds)
                                       : "";
  if (!status.error.empty()) {
    errors_.push_back("pid " + std::to_string(runtime.pid) + " " + name + ": " + status.error);
    return std::nullopt;
  }
  status.available = true;
  return group->period.value_or(0);
}

MonitorIntegrator::Tracked& MonitorIntegrator::Track(const MonitorRuntime& runtime, MonoTime now) {
  auto [it, inserted] = runtimes_.try_emplace(runtime.pid);
  Tracked& t = it->second;
  if (inserted) {
    t.sample.pid = t.status.pid = runtime.pid;
    for (int k = 0; k < kCollectiveKinds; ++k) t.sample.collectives[k].kind = CollectiveKind(k);
    t.sample.memory = std::make_shared<const RuntimeMemory>();
  }
  t.last_seen = now;
  t.sample.tag = runtime.tag.empty() ? std::to_string(runtime.pid) : runtime.tag;
  t.sample.error = runtime.error;
  if (!runtime.error.empty()) {
    errors_.push_back("pid " + std::to_string(runtime.pid) + ": " + runtime.error);
  }
  return t;
}

void MonitorIntegrator::AddRuntime(const MonitorRuntime& runtime, MonoTime now) {
  Tracked& t = Track(runtime, now);
  RuntimeSample& r = t.sample;
  RuntimeStatus& s = t.status;
  if (Usable(runtime, GroupOf(runtime.memory_used), "memory_used", false, s.memory_used)) {
    r.memory = std::make_shared<const RuntimeMemory>(runtime.memory_used->memory);
  }
  if (Usable(runtime, GroupOf(runtime.neuroncore_counters), "neuroncore_counters", true,
             s.neuroncore_counters)) {
    r.cores = CoresInUse(*runtime.neuroncore_counters, *r.memory, s.memory_used.available);
  }
  if (Usable(runtime, GroupOf(runtime.execution_stats), "execution_stats", true,
             s.execution_stats)) {
    AddExecutions(*runtime.execution_stats, r);
  }
  if (const auto period = Usable(runtime, GroupOf(runtime.neuron_runtime_vcpu_usage),
                                 "neuron_runtime_vcpu_usage", true, s.neuron_runtime_vcpu_usage)) {
    const RuntimeVcpuUsage& cpu = *runtime.neuron_runtime_vcpu_usage;
    r.cpu_user_ns += Nanoseconds(cpu.user * 1e7 * *period * options_.host_vcpus);
    r.cpu_system_ns += Nanoseconds(cpu.system * 1e7 * *period * options_.host_vcpus);
  }
  if (const auto period = Usable(runtime, GroupOf(runtime.collectives_stats), "collectives_stats",
                                 true, s.collectives_stats)) {
    AddCollectives(*runtime.collectives_stats, *period, r);
  }
}

std::vector<RuntimeSample> MonitorIntegrator::Runtimes() const {
  std::vector<RuntimeSample> out;
  out.reserve(runtimes_.size());
  for (const auto& [pid, t] : runtimes_) out.push_back(t.sample);
  return out;
}

std::vector<RuntimeStatus> MonitorIntegrator::Statuses() const {
  std::vector<RuntimeStatus> out;
  out.reserve(runtimes_.size());
  for (const auto& [pid, t] : runtimes_) out.push_back(t.status);
  return out;
}

std::map<std::uint32_t, CoreCounters> MonitorIntegrator::Cores() const { return cores_; }

}  // namespace neuronmon::neurondev
