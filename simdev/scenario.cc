#include "simdev/scenario.h"

#include <charconv>
#include <limits>
#include <utility>

#include "proto/common/json_reader.h"
#include "proto/names/names.h"

namespace neuronmon::simdev {
namespace {

using nlohmann::json;
constexpr Nanos kDay = std::chrono::hours(24);
constexpr Nanos kYear = std::chrono::hours(24 * 366);

// The verdicts a scenario may expect: every finding kind but unallocated (a finding beside a
// verdict, never one itself), named as the analyzer names them.
std::vector<std::string> DiagnosisNames() {
  std::vector<std::string> names;
  const google::protobuf::EnumDescriptor* kinds = v1::FindingKind_descriptor();
  for (int i = 0; i < kinds->value_count(); ++i) {
    const auto kind = static_cast<v1::FindingKind>(kinds->value(i)->number());
    if (kind != v1::FINDING_KIND_UNSPECIFIED && kind != v1::FINDING_KIND_UNALLOCATED) {
      names.emplace_back(FindingKindName(kind));
    }
  }
  return names;
}
const std::vector<std::string>& Diagnoses() {
  static const std::vector<std::string> names = DiagnosisNames();
  return names;
}
// Fault types as scenario files name them, in the order errors list them.
constexpr std::pair<const char*, FaultType> kFaultTypes[] = {
    {"ecc", FaultType::kEcc},
    {"runtime_exit", FaultType::kRuntimeExit},
    {"device_lost", FaultType::kDeviceLost},
    {"nan_errors", FaultType::kNanErrors},
    {"timeouts", FaultType::kTimeouts},
    {"device_reset", FaultType::kDeviceReset},
    {"slowdown", FaultType::kSlowdown},
    {"hang", FaultType::kHang},
    {"input_slowdown", FaultType::kInputSlowdown},
    {"network_slowdown", FaultType::kNetworkSlowdown},
    {"stall", FaultType::kStall},
    {"hbm_traffic", FaultType::kHbmTraffic},
    {"hardware_error", FaultType::kHardwareError},
    {"memory_growth", FaultType::kMemoryGrowth},
};

const std::vector<std::string> kCollectiveNames(kCollectiveKindNames.begin(),
                                                kCollectiveKindNames.end());

DType ParseDType(JsonReader& r) {
  const std::string d = r.Choice("dtype", "bf16", {"bf16", "fp8", "fp32"});
  return d == "fp8" ? DType::kFp8 : d == "fp32" ? DType::kFp32 : DType::kBf16;
}

std::vector<CollectiveSpec> ParseCollectives(JsonReader& parent, std::vector<std::string>* p) {
  std::vector<CollectiveSpec> out;
  const json* list = parent.Array("collectives");
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonReader r((*list)[i], parent.PathOf("collectives", i), p);
    CollectiveSpec c;
    const std::string op = r.Choice("op", "all_reduce", kCollectiveNames);
    for (std::size_t k = 0; k < kCollectiveNames.size(); ++k) {
      if (kCollectiveNames[k] == op) c.kind = static_cast<CollectiveKind>(k);
    }
    if (!r.Has("bytes")) r.Problem("bytes", "required");
    c.bytes = r.Number("bytes", 1 << 20, 1, 1e12);
    c.count = r.Number("count", 1, 0, 1e6);
    c.overlap = r.Number("overlap", 0, 0, 1);
    r.Finish();
    out.push_back(c);
  }
  return out;
}

TrainingSpec ParseTraining(JsonReader& r, std::vector<std::string>* p) {
  TrainingSpec t;
  t.parameters = r.Number("parameters", t.parameters, 1e6, 1e13);
  t.dtype = ParseDType(r);
  t.tokens_per_step = r.Number("tokens_per_step", t.tokens_per_step, 1, 1e10);
  t.flops_per_token = r.Number("flops_per_token", t.flops_per_token, 0, 1e15);
  t.compute_efficiency = r.Number("compute_efficiency", t.compute_efficiency, 0.01, 1);
  t.arithmetic_intensity = r.Number("arithmetic_intensity", t.arithmetic_intensity, 0.1, 1e5);
  t.input_seconds = r.Number("input_seconds", t.input_seconds, 0, 3600);
  t.input_prefetch = r.Bool("input_prefetch", t.input_prefetch);
  t.collectives = ParseCollectives(r, p);
  t.nodes = static_cast<int>(r.Integer("nodes", t.nodes, 1, 1024));
  if (const json* ck = r.Object("checkpoint")) {
    JsonReader c(*ck, r.PathOf("checkpoint"), p);
    t.checkpoint_every_steps = static_cast<int>(c.Integer("every_steps", 0, 1, 1'000'000));
    t.checkpoint_duration = c.Duration("duration", std::chrono::seconds(10), Nanos(0), kDay);
    c.Finish();
  }
  if (const json* wu = r.Object("warmup")) {
    JsonReader w(*wu, r.PathOf("warmup"), p);
    t.warmup_steps = static_cast<int>(w.Integer("steps", t.warmup_steps, 0, 100000));
    t.warmup_slowdown = w.Number("slowdown", t.warmup_slowdown, 1, 100);
    w.Finish();
  }
  t.optimizer_bytes_per_parameter =
      r.Number("optimizer_bytes_per_parameter", t.optimizer_bytes_per_parameter, 0, 1000);
  t.activation_bytes_per_token =
      r.Number("activation_bytes_per_token", t.activation_bytes_per_token, 0, 1e9);
  t.noise = r.Number("noise", t.noise, 0, 0.5);
  t.dataloader_cpus = r.Number("dataloader_cpus", t.dataloader_cpus, 0, 1024);
  return t;
}

InferenceSpec ParseInference(JsonReader& r, std::vector<std::string>* p) {
  InferenceSpec s;
  s.parameters = r.Number("parameters", s.parameters, 1e6, 1e13);
  s.dtype = ParseDType(r);
  s.requests_per_second = r.Number("requests_per_second", s.requests_per_second, 0, 1e7);
  s.load_swing = r.Number("load_swing", s.load_swing, 0, 1);
  s.swing_period = r.Duration("swing_period", s.swing_period, std::chrono::seconds(1), kDay);
  s.max_batch = static_cast<int>(r.Integer("max_batch", s.max_batch, 1, 4096));
  s.batch_timeout =
      r.Duration("batch_timeout", s.batch_timeout, Nanos(0), std::chrono::seconds(10));
  s.flops_per_request = r.Number("flops_per_request", s.flops_per_request, 1, 1e18);
  s.kv_bytes_per_request = r.Number("kv_bytes_per_request", s.kv_bytes_per_request, 0, 1e12);
  s.overhead = r.Duration("overhead", s.overhead, Nanos(0), std::chrono::seconds(10));
  s.collectives = ParseCollectives(r, p);
  s.max_queue = static_cast<int>(r.Integer("max_queue", s.max_queue, 1, 10'000'000));
  s.noise = r.Number("noise", s.noise, 0, 0.5);
  return s;
}

// "all", "0-7", [0, 1, 2].
std::vector<int> DevicesFrom(const json& value, const std::string& path,
                             std::vector<std::string>* p) {
  std::vector<int> out;
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (s == "all") return out;
    int lo = 0, hi = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    auto r1 = std::from_chars(b, e, lo);
    if (r1.ec == std::errc() && r1.ptr != e && *r1.ptr == '-') {
      auto r2 = std::from_chars(r1.ptr + 1, e, hi);
      if (r2.ec == std::errc() && r2.ptr == e && lo >= 0 && hi >= lo && hi < 4096) {
        for (int d = lo; d <= hi; ++d) out.push_back(d);
        return out;
      }
    } else if (r1.ec == std::errc() && r1.ptr == e && lo >= 0 && lo < 4096) {
      return {lo};
    }
    p->push_back(path + ": expected \"all\", a range such as \"0-7\", or a list of device indices");
    return {};
  }
  if (value.is_array()) {
    for (const json& d : value) {
      if (!d.is_number_integer() || d.get<int>() < 0 || d.get<int>() >= 4096) {
        p->push_back(path + ": device indices must be integers from 0");
        return {};
      }
      out.push_back(d.get<int>());
    }
    if (out.empty()) p->push_back(path + ": empty device list");
    return out;
  }
  p->push_back(path + ": expected \"all\", a range such as \"0-7\", or a list of device indices");
  return {};
}

std::vector<Expectation> ParseExpect(JsonReader& parent, std::string_view key,
                                     std::vector<std::string>* p) {
  std::vector<Expectation> out;
  const json* list = parent.Array(key);
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonReader r((*list)[i], parent.PathOf(key, i), p);
    Expectation e;
    e.from = r.Duration("from", Nanos(0), Nanos(0), kYear);
    if (!r.Has("diagnosis")) r.Problem("diagnosis", "required");
    e.diagnosis = r.Choice("diagnosis", "healthy", Diagnoses());
    if (const json* ranks = r.Array("ranks")) {
      for (const json& k : *ranks) {
        if (!k.is_number_integer() || k.get<int>() < 0) {
          r.Problem("ranks", "expected worker ranks (integers from 0)");
          break;
        }
        e.ranks.push_back(k.get<int>());
      }
    }
    r.Finish();
    if (!out.empty() && e.from < out.back().from) {
      r.Problem("from", "expectations must be in time order");
    }
    out.push_back(e);
  }
  return out;
}

RuntimeSpec ParseRuntime(const json& value, const std::string& path, std::vector<std::string>* p) {
  JsonReader r(value, path, p);
  RuntimeSpec rt;
  rt.name = r.String("name");
  if (rt.name.empty()) r.Problem("name", "required (faults refer to runtimes by name)");
  rt.tag = r.String("tag");
  rt.pid = static_cast<std::uint32_t>(r.Integer("pid", 0, 0, 4'000'000));
  rt.command = r.String("command", "python3 app.py");
  rt.user = r.String("user");
  rt.pod = r.String("pod");
  rt.pod_namespace = r.String("namespace");
  rt.container = r.String("container");
  rt.slurm_job = r.String("slurm_job");
  if (!rt.pod_namespace.empty() && rt.pod.empty()) r.Problem("namespace", "needs \"pod\"");
  rt.model_name = r.String("model_name");
  rt.runtime_version = r.String("runtime_version", rt.runtime_version);
  rt.framework_version = r.String("framework_version", rt.framework_version);
  if (const json* devices = r.Raw("devices")) {
    rt.devices = DevicesFrom(*devices, r.PathOf("devices"), p);
  }
  const std::string workers =
      r.Choice("workers", "per_device", {"per_device", "per_core", "single"});
  rt.workers = workers == "per_core" ? Workers::kPerCore
               : workers == "single" ? Workers::kSingle
                                     : Workers::kPerDevice;
  rt.start = r.Duration("start", Nanos(0), -kYear, kYear, /*allow_negative=*/true);
  rt.load_duration = r.Duration("load", rt.load_duration, Nanos(0), kDay);
  if (r.Has("stop")) rt.stop = r.Duration("stop", Nanos(0), -kYear, kYear, true);
  int kinds = 0;
  if (const json* t = r.Object("training")) {
    JsonReader tr(*t, r.PathOf("training"), p);
    rt.workload = ParseTraining(tr, p);
    tr.Finish();
    ++kinds;
  }
  if (const json* i = r.Object("inference")) {
    JsonReader ir(*i, r.PathOf("inference"), p);
    rt.workload = ParseInference(ir, p);
    ir.Finish();
    ++kinds;
  }
  if (const json* idle = r.Object("idle")) {
    JsonReader ir(*idle, r.PathOf("idle"), p);
    ir.Finish();
    rt.workload = IdleSpec{};
    ++kinds;
  }
  rt.expect = ParseExpect(r, "expect", p);
  r.Finish();
  if (kinds != 1) r.Problem("", "needs exactly one of \"training\", \"inference\" or \"idle\"");
  if (rt.stop && *rt.stop <= rt.start) r.Problem("stop", "must be after start");
  return rt;
}

// The fault's "type"; sets f.type.
std::string ParseFaultType(JsonReader& r, FaultSpec& f) {
  static const std::vector<std::string> kTypeNames = [] {
    std::vector<std::string> names;
    for (const auto& [name, type] : kFaultTypes) names.emplace_back(name);
    return names;
  }();
  const std::string type = r.Choice("type", "ecc", kTypeNames);
  if (!r.Has("type")) r.Problem("type", "required");
  for (const auto& [name, t] : kFaultTypes) {
    if (type == name) f.type = t;
  }
  return type;
}

// When the fault starts ("at" for an event) and, for one that lasts, when it ends.
void ParseFaultWindow(JsonReader& r, FaultSpec& f) {
  f.start = r.Duration(
      f.type == FaultType::kRuntimeExit || f.type == FaultType::kDeviceReset ? "at" : "start",
      Nanos(0), Nanos(0), kYear);
  const bool windowed = f.type != FaultType::kRuntimeExit && f.type != FaultType::kDeviceReset;
  if (windowed && r.Has("end")) f.end = r.Duration("end", Nanos(0), Nanos(0), kYear);
  if (f.end && *f.end <= f.start) r.Problem("end", "must be after start");
}

// What the fault strikes: a rank, a node, a device or a runtime of `scenario`.
void ParseFaultTarget(JsonReader& r, const std::string& type, const Scenario& scenario,
                      FaultSpec& f) {
  const bool on_device = f.type == FaultType::kEcc || f.type == FaultType::kDeviceLost ||
                         f.type == FaultType::kSlowdown || f.type == FaultType::kHardwareError;
  const bool on_runtime = f.type == FaultType::kRuntimeExit || f.type == FaultType::kNanErrors ||
                          f.type == FaultType::kTimeouts || f.type == FaultType::kHang ||
                          f.type == FaultType::kInputSlowdown ||
                          f.type == FaultType::kNetworkSlowdown || f.type == FaultType::kStall ||
                          f.type == FaultType::kHbmTraffic || f.type == FaultType::kMemoryGrowth;
  if (f.type == FaultType::kHang) {
    if (!r.Has("rank")) r.Problem("rank", "required for a hang fault");
    f.rank = static_cast<int>(r.Integer("rank", 0, 0, 4095));
  }
  if (r.Has("node")) f.node = static_cast<int>(r.Integer("node", 0, 0, kMaxNodes - 1));
  // A slowdown on a node may slow all of its devices (a throttled or mis-configured host).
  const bool whole_node = f.type == FaultType::kSlowdown && f.node >= 0 && !r.Has("device");
  if (on_device && !whole_node) {
    if (!r.Has("device")) r.Problem("device", "required for a " + type + " fault");
    f.device = static_cast<int>(r.Integer("device", 0, 0, 4095));
  }
  if (on_runtime) {
    f.runtime = r.String("runtime");
    bool known = false;
    for (const RuntimeSpec& rt : scenario.runtimes) known = known || rt.name == f.runtime;
    if (!known) r.Problem("runtime", "no runtime named \"" + f.runtime + "\"");
  }
}

// The settings of the fault's type: an ECC error's memory and severity, a hardware error's
// kind, rates, limits and factors.
void ParseFaultSettings(JsonReader& r, FaultSpec& f) {
  if (f.type == FaultType::kEcc) {
    f.sram = r.Choice("memory", "hbm", {"hbm", "sram"}) == "sram";
    const std::string severity =
        r.Choice("severity", "corrected", {"corrected", "uncorrected", "repairable"});
    f.uncorrected = severity != "corrected";
    f.repairable = severity == "repairable";
    if (f.repairable && f.sram) r.Problem("severity", "only HBM errors are repairable");
  }
  if (f.type == FaultType::kHardwareError) {
    const std::string kind = r.Choice("error", "nc", {"nc", "hbm", "dma", "collectives", "event"});
    f.error = kind == "hbm"           ? HardwareErrorKind::kHbm
              : kind == "dma"         ? HardwareErrorKind::kDma
              : kind == "collectives" ? HardwareErrorKind::kCollectives
              : kind == "event"       ? HardwareErrorKind::kEvent
                                      : HardwareErrorKind::kNeuronCore;
  }
  if (f.type == FaultType::kEcc || f.type == FaultType::kNanErrors ||
      f.type == FaultType::kTimeouts || f.type == FaultType::kHardwareError) {
    f.per_second = r.Number("per_second", 1, 0, 1e6);
  }
  if (f.type == FaultType::kMemoryGrowth) {
    f.per_second = r.Number("bytes_per_second", 1 << 20, 0, 1e12);
    f.limit = r.Number("limit", 0.97, 0, 1);
  }
  if (f.type == FaultType::kSlowdown) f.factor = r.Number("factor", 1.3, 1, 100);
  if (f.type == FaultType::kInputSlowdown || f.type == FaultType::kNetworkSlowdown ||
      f.type == FaultType::kHbmTraffic)
    f.factor = r.Number("factor", 10, 1, 1000);
}

FaultSpec ParseFault(const json& value, const std::string& path, const Scenario& scenario,
                     std::vector<std::string>* p) {
  JsonReader r(value, path, p);
  FaultSpec f;
  const std::string type = ParseFaultType(r, f);
  ParseFaultWindow(r, f);
  ParseFaultTarget(r, type, scenario, f);
  ParseFaultSettings(r, f);
  r.Finish();
  return f;
}

}  // namespace

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kFp32:
      return "fp32";
  }
  return "bf16";
}

Result<Scenario> ParseScenario(std::string_view json_text, const std::string& source) {
  Result<json> doc = ParseJsonWithComments(json_text, source);
  if (!doc.ok()) return doc.status();
  std::vector<std::string> problems;
  Scenario s;
  JsonReader r(*doc, "", &problems);
  s.name = r.String("name");
  if (s.name.empty()) r.Problem("name", "required");
  s.description = r.String("description");
  s.instance = r.String("instance", "trn2.48xlarge");
  s.nodes = static_cast<int>(r.Integer("nodes", 1, 1, kMaxNodes));
  if (const json* list = r.Array("runtimes")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      s.runtimes.push_back(ParseRuntime((*list)[i], r.PathOf("runtimes", i), &problems));
      for (std::size_t j = 0; j < i; ++j) {
        if (s.runtimes[j].name == s.runtimes[i].name && !s.runtimes[i].name.empty()) {
          problems.push_back(r.PathOf("runtimes", i) + ".name: duplicate name \"" +
                             s.runtimes[i].name + "\"");
        }
      }
    }
  }
  if (const json* list = r.Array("faults")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      s.faults.push_back(ParseFault((*list)[i], r.PathOf("faults", i), s, &problems));
    }
  }
  s.instance_expect = ParseExpect(r, "expect_instance", &problems);
  r.Finish();
  if (!problems.empty()) return Status::InvalidArgument(source + ": " + problems.front());
  return s;
}

}  // namespace neuronmon::simdev
