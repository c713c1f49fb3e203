#include "daemon/core/metrics/prometheus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "daemon/core/analysis/analyzer.h"
#include "daemon/core/metrics/prometheus_families.h"
#include "daemon/core/report/report_builder.h"

namespace neuronmon::daemon {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

using metrics_internal::FamilyBuilder;
using metrics_internal::GroupContext;
using metrics_internal::WithLabels;

constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;

using Groups = std::vector<std::pair<std::string, bool>>;  // collector success, in report order

double AsDouble(std::uint64_t v) { return static_cast<double>(v); }

// The rates and percentiles of the window, computed as the stream's reports compute them.
v1::Report WindowReport(const MetricsInput& in, const Snapshot* start) {
  ReportInput r;
  r.inventory = in.inventory;
  r.end = in.end;
  for (v1::Group g : {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_NEURON_RUNTIME_VCPU_USAGE,
                      v1::GROUP_EXECUTION_STATS, v1::GROUP_HBM_STATS, v1::GROUP_DEVICE_HEALTH}) {
    r.groups.push_back({g, start});
  }
  return BuildReport(r);
}

bool AddFindings(const GroupContext& c) {
  FamilyBuilder active("neuron_finding",
                       "A current diagnosis of the runtime (1), by kind and severity", kGauge);
  FamilyBuilder confidence("neuron_finding_confidence_ratio",
                           "The analyzer's confidence in the finding", kGauge, "ratio");
  FamilyBuilder evidence("neuron_finding_evidence",
                         "A metric behind the finding, in the unit the unit label names", kGauge);
  for (std::size_t i = 0; i < c.in.end->runtimes.size(); ++i) {
    auto it = c.in.findings->find(c.in.end->runtimes[i].pid);
    if (it == c.in.findings->end()) continue;
    std::set<std::string> kinds, evidence_names;
    const std::vector<Label>& runtime = c.runtime_labels[i];
    for (const v1::Finding& f : it->second) {
      const std::string kind = FindingKindName(f.kind());
      if (!kinds.insert(kind).second) continue;
      active.Add(WithLabels(runtime, {{"kind", kind}, {"severity", SeverityName(f.severity())}}),
                 1);
      confidence.Add(WithLabels(runtime, {{"kind", kind}}), f.confidence());
      for (const v1::Evidence& e : f.evidence()) {
        if (!evidence_names.insert(kind + '\n' + e.name()).second) continue;
        evidence.Add(
            WithLabels(runtime, {{"kind", kind}, {"evidence", e.name()}, {"unit", e.unit()}}),
            e.value());
      }
    }
  }
  bool ok = active.AddTo(c.out, c.problems);
  ok = confidence.AddTo(c.out, c.problems) && ok;
  return evidence.AddTo(c.out, c.problems) && ok;
}

// The live jobs' counters (docs/jobs.md): labelled neuron_job — never `job`, Prometheus' own
// target label — plus the Slurm job and pod labels the runtime series carry.
bool AddJobs(const MetricsInput& in, Exposition& out, std::vector<std::string>& problems) {
  const std::vector<Label> instance =
      metrics_internal::InstanceLabels(in.inventory->instance_info());
  FamilyBuilder info("neuron_job_info", "A job the daemon accounts (1), by id and kind",
                     MetricType::kInfo);
  FamilyBuilder start("neuron_job_start_time_seconds",
                      "When the job started, seconds since the epoch", kGauge, "seconds");
  FamilyBuilder held("neuron_job_held_core_seconds_total",
                     "NeuronCore-seconds the job's processes held", kCounter, "seconds");
  FamilyBuilder busy("neuron_job_busy_core_seconds_total",
                     "NeuronCore-seconds the job's cores were busy (absent where the host cannot "
                     "measure utilization)",
                     kCounter, "seconds");
  FamilyBuilder verdict("neuron_job_verdict_seconds_total",
                        "Seconds the job spent under each verdict of the analyzer", kCounter,
                        "seconds");
  google::protobuf::RepeatedPtrField<v1::JobReport> jobs;
  in.jobs->Fill(jobs);
  for (const v1::JobReport& j : jobs) {
    if (!j.live()) break;  // live ones come first
    std::vector<Label> labels = WithLabels(instance, {{"neuron_job", j.id()}});
    const v1::Attribution& a = j.attribution();
    for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"pod", &a.pod()},
                                      {"namespace", &a.namespace_()},
                                      {"slurm_job_id", &a.slurm_job_id()}}) {
      if (!value->empty()) labels = WithLabels(labels, {{name, *value}});
    }
    info.Add(WithLabels(labels, {{"kind", j.kind()}}), 1);
    start.Add(labels, static_cast<double>(j.start_unix_ns()) / 1e9);
    held.Add(labels, j.core_seconds_held());
    if (j.unavailable().find("utilization") == std::string::npos) {
      busy.Add(labels, j.core_seconds_busy());
    }
    for (const v1::VerdictTime& v : j.verdicts()) {
      verdict.Add(WithLabels(labels, {{"verdict", FindingKindName(v.kind())}}), v.seconds());
    }
  }
  bool ok = true;
  for (FamilyBuilder* f : {&info, &start, &held, &busy, &verdict}) {
    ok = f->AddTo(out, problems) && ok;
  }
  return ok;
}

void AddDeviceGroups(const MetricsInput& in, Exposition& out, std::vector<std::string>& problems,
                     Groups& groups) {
  const bool has_window = in.start != nullptr && in.start != in.end;
  const v1::Report window = WindowReport(in, has_window ? in.start : in.end);
  GroupContext c{in, window, has_window, {}, {}, {}, {}, out, problems};
  c.instance = metrics_internal::InstanceLabels(in.inventory->instance_info());
  c.runtime_tags = metrics_internal::UniqueRuntimeTags(in.end->runtimes);
  std::map<std::uint32_t, const v1::Process*> processes;
  for (const v1::Process& p : in.inventory->processes()) processes[p.pid()] = &p;
  for (std::size_t i = 0; i < c.runtime_tags.size(); ++i) {
    const auto process = processes.find(in.end->runtimes[i].pid);
    c.runtime_processes.push_back(process == processes.end() ? nullptr : process->second);
    std::vector<Label> labels = WithLabels(c.instance, {{"runtime_tag", c.runtime_tags[i]}});
    // Who runs it, dcgm-exporter's label names; only what is known (docs/attribution.md).
    if (const v1::Process* p = c.runtime_processes.back()) {
      const v1::Attribution& a = p->attribution();
      for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"pod", &a.pod()},
                                        {"namespace", &a.namespace_()},
                                        {"container", &a.container()},
                                        {"slurm_job_id", &a.slurm_job_id()}}) {
        if (!value->empty()) labels = WithLabels(labels, {{name, *value}});
      }
    }
    c.runtime_labels.push_back(std::move(labels));
  }
  const bool device_ok = in.end->error.empty();
  (void)metrics_internal::AddInventoryInfo(c);
  (void)metrics_internal::AddUnavailableSignals(c);
  using Fn = bool (*)(const GroupContext&);
  const std::pair<v1::Group, Fn> device_groups[] = {
      {v1::GROUP_NEURONCORE_COUNTERS, metrics_internal::AddNeuronCoreCounters},
      {v1::GROUP_MEMORY_USED, metrics_internal::AddMemoryUsed},
      {v1::GROUP_NEURON_RUNTIME_VCPU_USAGE, metrics_internal::AddRuntimeVcpuUsage},
      {v1::GROUP_EXECUTION_STATS, metrics_internal::AddExecutionStats},
      {v1::GROUP_COLLECTIVES_STATS, metrics_internal::AddCollectivesStats},
      {v1::GROUP_NEURON_HW_COUNTERS, metrics_internal::AddHwCounters},
      {v1::GROUP_HBM_STATS, metrics_internal::AddHbmStats},
      {v1::GROUP_DEVICE_HEALTH, metrics_internal::AddDeviceHealth}};
  // A failed device read leaves nothing trustworthy in the device's counters.
  for (const auto& [group, fn] : device_groups) {
    groups.emplace_back(GroupName(group), device_ok && fn(c));
  }
  groups.emplace_back(GroupName(v1::GROUP_VCPU_USAGE), metrics_internal::AddVcpuUsage(c));
  groups.emplace_back(GroupName(v1::GROUP_MEMORY_INFO), metrics_internal::AddMemoryInfo(c));
  if (in.findings != nullptr) {
    groups.emplace_back(GroupName(v1::GROUP_BOTTLENECK_ANALYSIS), device_ok && AddFindings(c));
  }
  if (in.jobs != nullptr)
    groups.emplace_back(GroupName(v1::GROUP_JOBS), AddJobs(in, out, problems));
}

bool AddProcess(const ProcessMetrics& p, Exposition& out, std::vector<std::string>& problems) {
  // Names and HELP texts as client_golang's process collector.
  FamilyBuilder cpu("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                    kCounter, "seconds");
  FamilyBuilder fds("process_open_fds", "Number of open file descriptors.", kGauge);
  FamilyBuilder rss("process_resident_memory_bytes", "Resident memory size in bytes.", kGauge,
                    "bytes");
  FamilyBuilder vms("process_virtual_memory_bytes", "Virtual memory size in bytes.", kGauge,
                    "bytes");
  FamilyBuilder start("process_start_time_seconds",
                      "Start time of the process since unix epoch in seconds.", kGauge, "seconds");
  cpu.Add({}, p.cpu_seconds_total);
  fds.Add({}, AsDouble(p.open_fds));
  rss.Add({}, AsDouble(p.resident_memory_bytes));
  vms.Add({}, AsDouble(p.virtual_memory_bytes));
  start.Add({}, p.start_time_seconds);
  bool ok = true;
  for (FamilyBuilder* f : {&cpu, &fds, &rss, &vms, &start}) ok = f->AddTo(out, problems) && ok;
  if (p.max_fds) {
    FamilyBuilder max_fds("process_max_fds", "Maximum number of open file descriptors.", kGauge);
    max_fds.Add({}, AsDouble(*p.max_fds));
    ok = max_fds.AddTo(out, problems) && ok;
  }
  return ok;
}

// A counter or gauge without labels.
void AddScalar(Exposition& out, std::vector<std::string>& problems, const char* name,
               const char* help, MetricType type, double value,
               std::optional<std::string> unit = std::nullopt) {
  FamilyBuilder f(name, help, type, std::move(unit));
  f.Add({}, value);
  (void)f.AddTo(out, problems);
}

// One row of a table of AddScalar's arguments.
using Scalar = std::tuple<const char*, const char*, MetricType, double, std::optional<std::string>>;

void AddScalars(Exposition& out, std::vector<std::string>& problems,
                std::span<const Scalar> scalars) {
  for (const auto& [name, help, type, value, unit] : scalars) {
    AddScalar(out, problems, name, help, type, value, unit);
  }
}

// The stream clients connected now, by transport, and those disconnected, by reason.
void AddClients(const DaemonStats& s, Exposition& out, std::vector<std::string>& problems) {
  FamilyBuilder clients("neuron_monitord_clients", "Stream clients connected now, by transport",
                        kGauge);
  for (int t = 0; t < kTransports; ++t) {
    clients.Add({{"transport", TransportName(static_cast<Transport>(t))}},
                AsDouble(s.clients[static_cast<std::size_t>(t)]));
  }
  (void)clients.AddTo(out, problems);
  FamilyBuilder disconnects("neuron_monitord_client_disconnects_total",
                            "Stream clients disconnected, by reason", kCounter);
  for (const auto& [reason, n] : s.disconnects) disconnects.Add({{"reason", reason}}, AsDouble(n));
  (void)disconnects.AddTo(out, problems);
}

// The stream's, the sampler's and the configuration's counters.
void AddStreamScalars(const DaemonStats& s, Exposition& out, std::vector<std::string>& problems) {
  const Scalar scalars[] = {
      {"neuron_monitord_connections_total", "Stream connections accepted", kCounter,
       AsDouble(s.connections_total), std::nullopt},
      {"neuron_monitord_frames_sent_total", "Report frames sent to stream clients", kCounter,
       AsDouble(s.frames_sent), std::nullopt},
      {"neuron_monitord_sent_bytes_total", "Bytes sent to stream clients", kCounter,
       AsDouble(s.bytes_sent), "bytes"},
      {"neuron_monitord_frames_dropped_total", "Report frames dropped because a client fell behind",
       kCounter, AsDouble(s.frames_dropped), std::nullopt},
      {"neuron_monitord_sampler_missed_ticks_total",
       "Sampling ticks skipped because the sampler fell behind", kCounter, AsDouble(s.missed_ticks),
       std::nullopt},
      {"neuron_monitord_samples_total", "Samples taken of the device and host", kCounter,
       AsDouble(s.samples), std::nullopt},
      {"neuron_monitord_history_evicted_total",
       "Snapshots dropped from the history to keep within limits.max_history_bytes", kCounter,
       AsDouble(s.history_evicted), std::nullopt},
      {"neuron_monitord_sample_duration_seconds", "How long the last sample took", kGauge,
       s.last_sample_seconds, "seconds"},
      {"neuron_monitord_sampling_seconds_total", "Time spent sampling the device and host",
       kCounter, s.sample_seconds_total, "seconds"},
      {"neuron_monitord_read_pending_seconds",
       "How long the device read in flight has run, once it outlasts a period (0: none)", kGauge,
       s.read_pending_seconds, "seconds"},
      {"neuron_monitord_last_sample_timestamp_seconds",
       "Wall time of the last sample, seconds since the epoch", kGauge, s.last_sample_unix,
       "seconds"},
      {"neuron_monitord_reloads_total", "Configuration reloads that took effect", kCounter,
       AsDouble(s.reloads), std::nullopt},
      {"neuron_monitord_reload_failures_total", "Configuration reloads refused", kCounter,
       AsDouble(s.reload_failures), std::nullopt}};
  AddScalars(out, problems, scalars);
}

// The recorder's state and counters.
void AddRecorderStats(const DaemonStats& s, Exposition& out, std::vector<std::string>& problems) {
  const Scalar recorder[] = {
      {"neuron_monitord_recorder_active",
       "Whether the archive is being written (0: recording stopped, e.g. a full disk)", kGauge,
       s.recorder_active ? 1.0 : 0.0, std::nullopt},
      {"neuron_monitord_recorder_snapshots_total", "Snapshots written to the archive", kCounter,
       AsDouble(s.recorder_snapshots), std::nullopt},
      {"neuron_monitord_recorder_written_bytes_total", "Bytes written to the archive", kCounter,
       AsDouble(s.recorder_bytes_written), "bytes"},
      {"neuron_monitord_recorder_archive_bytes", "Size of the archive's files", kGauge,
       AsDouble(s.recorder_archive_bytes), "bytes"},
      {"neuron_monitord_recorder_failures_total",
       "Archive writes that failed (each stops recording until a retry succeeds)", kCounter,
       AsDouble(s.recorder_failures), std::nullopt},
      {"neuron_monitord_recorder_dropped_total",
       "Snapshots not archived because the disk was too far behind", kCounter,
       AsDouble(s.recorder_dropped), std::nullopt}};
  AddScalars(out, problems, recorder);
}

// What a real host's sources left out or refused: each family only where its source is read.
void AddSourceStats(const SourceStats& s, Exposition& out, std::vector<std::string>& problems) {
  if (s.kernel_log_refused) {
    AddScalar(out, problems, "neuron_monitord_kernel_log_refused_total",
              "Kernel log records naming NEURON_HW_ERR that were not the driver's events (another "
              "facility or level, or outside its grammar), so counted for nothing",
              kCounter, AsDouble(*s.kernel_log_refused));
  }
  if (s.kernel_log_unattributed) {
    AddScalar(out, problems, "neuron_monitord_kernel_log_unattributed_total",
              "Kernel log hardware error events naming no device, or one at or past device 128",
              kCounter, AsDouble(*s.kernel_log_unattributed));
  }
  if (!s.processes_unexamined.empty()) {
    FamilyBuilder f("neuron_monitord_processes_unexamined",
                    "Processes the last complete process scan did not examine, or not fully, by "
                    "reason (unreadable: no permission; omitted: beyond processes.max_tracked; "
                    "fd_limited, uid_limited: over a descriptor budget)",
                    kGauge);
    for (const auto& [reason, n] : s.processes_unexamined) f.Add({{"reason", reason}}, AsDouble(n));
    (void)f.AddTo(out, problems);
  }
  if (s.busy_readings_clamped) {
    AddScalar(
        out, problems, "neuron_monitord_busy_readings_clamped_total",
        "Core readings whose nc_time_in_use grew by more than the interval (a foreign or torn "
        "value), clamped to 100 %",
        kCounter, AsDouble(*s.busy_readings_clamped));
  }
  if (s.runtimes_dropped) {
    AddScalar(out, problems, "neuron_monitord_runtimes_dropped_total",
              "neuron-monitor runtimes left out because processes.max_runtimes were tracked",
              kCounter, AsDouble(*s.runtimes_dropped));
  }
}

void AddStreamStats(const DaemonStats& s, Exposition& out, std::vector<std::string>& problems) {
  AddClients(s, out, problems);
  AddStreamScalars(s, out, problems);
  if (s.incidents_enabled) {
    AddScalar(out, problems, "neuron_monitord_incidents_total",
              "Incident bundles saved (a verdict other than healthy that held)", kCounter,
              AsDouble(s.incidents_saved), std::nullopt);
    AddScalar(out, problems, "neuron_monitord_incident_failures_total",
              "Incident bundles that could not be written", kCounter, AsDouble(s.incident_failures),
              std::nullopt);
  }
  if (s.recorder_enabled) AddRecorderStats(s, out, problems);
  if (s.sources) AddSourceStats(*s.sources, out, problems);
}

void AddSelfMetrics(const MetricsInput& in, const Groups& groups, Exposition& out,
                    std::vector<std::string>& problems) {
  FamilyBuilder build("neuron_monitord_build_info", "The neuron-monitord build", MetricType::kInfo);
  build.Add({{"version", in.version}}, 1);
  (void)build.AddTo(out, problems);
  if (in.period > Nanos::zero()) {
    AddScalar(out, problems, "neuron_monitord_sample_period_seconds", "The base sampling period",
              kGauge, std::chrono::duration<double>(in.period).count(), "seconds");
  }
  if (in.stats != nullptr) AddStreamStats(*in.stats, out, problems);
  if (in.jobs != nullptr) {
    AddScalar(out, problems, "neuron_monitord_job_samples_untracked_total",
              "Process samples not accounted to any job because jobs.max_live jobs were live",
              kCounter, AsDouble(in.jobs->untracked()));
  }
  if (in.scrapes != nullptr) {
    FamilyBuilder responses("neuron_monitord_http_responses_total",
                            "HTTP responses of the metrics endpoint, by status code", kCounter);
    for (const auto& [code, n] : in.scrapes->responses) {
      responses.Add({{"code", std::to_string(code)}}, AsDouble(n));
    }
    (void)responses.AddTo(out, problems);
  }
  FamilyBuilder success("neuron_monitord_collector_success",
                        "Whether the group was read in full (1) or not (0)", kGauge);
  for (const auto& [group, ok] : groups) success.Add({{"group", group}}, ok ? 1 : 0);
  (void)success.AddTo(out, problems);
}

}  // namespace

Exposition BuildMetrics(const MetricsInput& in) {
  Exposition out;
  std::vector<std::string> problems;
  Groups groups;
  if (in.end != nullptr) AddDeviceGroups(in, out, problems, groups);
  if (in.process != nullptr) {
    groups.emplace_back("process", in.process->ok() && AddProcess(**in.process, out, problems));
  }
  AddSelfMetrics(in, groups, out, problems);
  return out;
}

MetricsWindow SelectWindow(const History& history, Nanos window, Nanos period) {
  const Snapshot* end = history.newest();
  if (end == nullptr) return {};
  const std::uint64_t back =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(window / period));
  const std::uint64_t from = end->seq > back ? end->seq - back : 0;
  return {history.AtOrBefore(from), end};
}

}  // namespace neuronmon::daemon
