#include "exporter/job_report_format.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string_view>
#include <utility>

#include "exporter/json_writer.h"
#include "proto/common/duration.h"
#include "proto/common/terminal_text.h"
#include "proto/common/text.h"
#include "proto/names/names.h"
#include "proto/wire/field_codec.h"

namespace neuronmon::exporter {
namespace {

std::string Clean(std::string_view text) { return SanitizeForTerminal(text); }

std::string Percent(double v) { return FormatFixed(v, 1) + "%"; }

std::string Elapsed(double seconds) {
  return FormatElapsed(Nanos(static_cast<std::int64_t>(std::max(0.0, seconds) * 1e9)));
}

// `unix_ns` in UTC, with strftime's `format`.
std::string Utc(std::int64_t unix_ns, const char* format) {
  const std::time_t t = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// "2026-12-08 01:02:03 UTC", for people; RFC 3339 for JSON.
std::string UtcTime(std::int64_t unix_ns) { return Utc(unix_ns, "%Y-%m-%d %H:%M:%S UTC"); }
std::string Rfc3339(std::int64_t unix_ns) { return Utc(unix_ns, "%Y-%m-%dT%H:%M:%SZ"); }

std::string Bytes(std::uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1024.0 * 1024 * 1024) return FormatFixed(v / (1024.0 * 1024 * 1024), 1) + " GiB";
  if (v >= 1024.0 * 1024) return FormatFixed(v / (1024.0 * 1024), 1) + " MiB";
  return FormatFixed(v / 1024.0, 1) + " KiB";
}

std::string FlopRate(double v) {
  const char* units[] = {"FLOP/s",  "kFLOP/s", "MFLOP/s", "GFLOP/s",
                         "TFLOP/s", "PFLOP/s", "EFLOP/s"};
  int i = 0;
  while (v >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  return FormatFixed(v, v >= 100 ? 0 : (v >= 10 ? 1 : 2)) + " " + units[i];
}

// "0-7", "0-3, 8, 10-11".
std::string Ranges(const google::protobuf::RepeatedField<std::uint32_t>& values) {
  std::string out;
  for (int i = 0; i < values.size();) {
    int j = i;
    while (j + 1 < values.size() && values.Get(j + 1) == values.Get(j) + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(values.Get(i));
    if (j > i) out += "-" + std::to_string(values.Get(j));
    i = j + 1;
  }
  return out;
}

// What the host could not measure for the job, by figure ("utilization" -> reason).
std::vector<std::pair<std::string, std::string>> Unavailable(const v1::JobReport& job) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view rest = job.unavailable();
  while (!rest.empty()) {
    const std::size_t end = rest.find("; ");
    const std::string_view part = rest.substr(0, end);
    const std::size_t colon = part.find(": ");
    if (colon != std::string_view::npos) {
      out.emplace_back(std::string(part.substr(0, colon)), std::string(part.substr(colon + 2)));
    }
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 2);
  }
  return out;
}

const std::string* UnavailableReason(const std::vector<std::pair<std::string, std::string>>& u,
                                     std::string_view what) {
  for (const auto& [name, reason] : u) {
    if (name == what) return &reason;
  }
  return nullptr;
}

std::string State(const v1::JobReport& job) {
  if (job.live()) return "live";
  return job.stop_marked() ? "ended (marked)" : "ended";
}

// Who runs it, in a few words: "Slurm job 4242 (claimed), user mlteam".
std::string Owner(const v1::JobReport& job) {
  const v1::Attribution& a = job.attribution();
  std::string out;
  if (!a.slurm_job_id().empty()) {
    out = "Slurm job " + Clean(JobOf(a)) + (a.slurm_claimed() ? " (claimed)" : "");
  } else if (!a.pod().empty()) {
    out = Clean(PodLabelWithContainer(a));
  } else if (!a.container_id().empty()) {
    out = "container " + Clean(a.container_id().substr(0, 12));
  } else {
    out = job.kind() == "launch" ? "processes launched together" : "one process";
  }
  if (!a.user().empty()) out += ", user " + Clean(a.user());
  return out;
}

// The verdict the job spent the most time in other than healthy ("healthy" when none).
std::string TopVerdict(const v1::JobReport& job) {
  const v1::VerdictTime* top = nullptr;
  for (const v1::VerdictTime& v : job.verdicts()) {
    if (v.kind() == v1::FINDING_KIND_HEALTHY) continue;
    if (top == nullptr || v.seconds() > top->seconds()) top = &v;
  }
  if (top == nullptr) return job.verdicts_size() > 0 ? "healthy" : "-";
  const double base = job.accounted_seconds();
  return std::string(FindingKindName(top->kind())) +
         (base > 0 ? " " + FormatFixed(100 * top->seconds() / base, 0) + "%" : "");
}

std::string Sparkline(const v1::JobReport& job) {
  static constexpr std::string_view kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string out;
  for (int i = 0; i < job.trace_busy_size() && i < job.trace_held_size(); ++i) {
    const double held = job.trace_held(i);
    if (held <= 0) {
      out += ' ';
      continue;
    }
    const double u = std::clamp(job.trace_busy(i) / held, 0.0, 1.0);
    out += kBlocks[std::min<int>(7, static_cast<int>(u * 8))];
  }
  return out;
}

double Steps(const v1::JobReport& job) {
  return static_cast<double>(job.executions().completed()) / std::max(1u, job.max_ranks());
}

// One labelled line of the report: the same facts for the text page and the Markdown table.
struct Fact {
  std::string label;
  std::string value;
};

std::vector<Fact> Facts(const v1::JobReport& job, const JobFormatOptions& o) {
  std::vector<Fact> f;
  const auto unavailable = Unavailable(job);
  f.push_back({"State", State(job) + (job.live() ? " (as of " + UtcTime(ToUnixNanos(o.now)) + ")"
                                                 : ", at " + UtcTime(job.end_unix_ns()))});
  f.push_back({"Who", Owner(job)});
  if (!job.command().empty()) f.push_back({"Command", Clean(job.command())});
  f.push_back({"Started", UtcTime(job.start_unix_ns()) + (job.start_marked() ? " (marked)" : "")});
  f.push_back({"Wall time", Elapsed(job.wall_seconds()) + " (" + Elapsed(job.accounted_seconds()) +
                                " accounted)"});
  f.push_back(
      {"Hardware",
       std::to_string(job.device_indices_size()) +
           (job.device_indices_size() == 1 ? " device" : " devices") +
           (job.device_indices_size() > 0 ? " (" + Ranges(job.device_indices()) + ")" : "") + ", " +
           std::to_string(job.core_ids_size()) + " NeuronCores, " +
           std::to_string(job.member_count()) +
           (job.member_count() == 1 ? " process" : " processes") + " (at most " +
           std::to_string(job.max_ranks()) + " at once)"});
  if (const std::string* r = UnavailableReason(unavailable, "utilization")) {
    f.push_back({"Utilization", "unavailable: " + Clean(*r)});
    f.push_back({"NeuronCore-seconds", FormatFixed(job.core_seconds_held(), 0) + " held"});
  } else {
    f.push_back({"Utilization", "mean " + Percent(job.utilization_mean_percent()) + ", p10 " +
                                    Percent(job.utilization_p10_percent())});
    f.push_back({"NeuronCore-seconds", FormatFixed(job.core_seconds_busy(), 0) + " busy of " +
                                           FormatFixed(job.core_seconds_held(), 0) + " held"});
  }
  if (const std::string* r = UnavailableReason(unavailable, "flops")) {
    f.push_back({"Compute", "unavailable: " + Clean(*r)});
  } else {
    std::string compute = FlopRate(job.flops_per_second()) + " achieved";
    if (job.peak_flops_per_core() > 0) {
      compute += "; hardware FLOPs utilization " + Percent(100 * job.hardware_flops_utilization()) +
                 " of " + FlopRate(job.peak_flops_per_core()) + " per core (BF16)";
    }
    const double mfu = ModelFlopsUtilization(job, o.model_flops_per_step);
    if (mfu > 0) compute += "; model FLOPs utilization " + Percent(100 * mfu);
    f.push_back({"Compute", compute});
  }
  f.push_back({"Memory", "HBM peak " + Bytes(job.hbm_peak_bytes()) + ", host memory peak " +
                             Bytes(job.host_memory_peak_bytes())});
  if (const std::string* r = UnavailableReason(unavailable, "collectives")) {
    f.push_back({"Collectives", "unavailable: " + Clean(*r)});
  } else {
    f.push_back({"Collectives", Percent(100 * job.collective_share()) + " of the processes' time"});
  }
  const ExecutionCounters ex = wire::ExecutionSummariesFromProto(job.errors(), job.executions());
  std::string executions = std::to_string(ex.completed) + " completed";
  std::string failures;
  for (const ExecutionField& field : kExecutionFields) {
    const std::uint64_t n = ex.*field.member;
    if (n == 0 || field.name == "completed") continue;
    failures += (failures.empty() ? "" : ", ") + std::string(field.name) + " " + std::to_string(n);
  }
  executions += failures.empty() ? ", no errors" : "; " + failures;
  if (const std::string* r = UnavailableReason(unavailable, "executions")) {
    executions = "unavailable: " + Clean(*r);
  }
  f.push_back({"Executions", executions});
  std::string hw = job.hardware_event_count() == 0
                       ? "none on its devices"
                       : std::to_string(job.hardware_event_count()) + " on its devices";
  for (const v1::JobEvent& e : job.events()) {
    hw += "\n" + UtcTime(e.unix_ns()) + " nd" + std::to_string(e.neuron_device_index()) + " " +
          Clean(e.kind()) + ": " + Clean(e.summary());
  }
  f.push_back({"Hardware events", hw});
  return f;
}

struct VerdictRow {
  std::string name;
  double seconds = 0;
  double share = 0;  // of the accounted time, 0..1
  std::uint32_t episodes = 0;
  std::string subject;
};

std::vector<VerdictRow> VerdictRows(const v1::JobReport& job) {
  std::vector<VerdictRow> rows;
  const double base = job.accounted_seconds();
  double counted = 0;
  for (const v1::VerdictTime& v : job.verdicts()) {
    rows.push_back({FindingKindName(v.kind()), v.seconds(), base > 0 ? v.seconds() / base : 0,
                    v.episodes(), Clean(v.subject())});
    counted += v.seconds();
  }
  std::sort(rows.begin(), rows.end(),
            [](const VerdictRow& a, const VerdictRow& b) { return a.seconds > b.seconds; });
  // The analyzer needs its window before its first verdict for a process.
  if (base - counted >= 0.5) {
    rows.push_back({"(no verdict yet)", base - counted, (base - counted) / base, 0, ""});
  }
  return rows;
}

std::string SubjectNote(const VerdictRow& row) {
  if (row.subject.empty()) return "";
  return row.name == "straggler" ? "slowest: " + row.subject : "stuck: " + row.subject;
}

// The columns `s` takes on a terminal, counted in code points: the sparkline, the bars and
// names may be multi-byte.
std::size_t Columns(std::string_view s) {
  std::size_t cols = 0;
  for (unsigned char c : s) cols += (c & 0xC0) != 0x80;
  return cols;
}

std::string Pad(std::string s, std::size_t width) {
  const std::size_t cols = Columns(s);
  if (cols < width) s.append(width - cols, ' ');
  return s;
}

void WriteAttribution(JsonWriter& w, const v1::Attribution& a) {
  w.BeginObject();
  if (a.has_uid()) {
    w.Key("uid");
    w.Uint(a.uid());
  }
  const std::pair<const char*, const std::string*> fields[] = {
      {"user", &a.user()},
      {"slurm_job_id", &a.slurm_job_id()},
      {"slurm_array_job_id", &a.slurm_array_job_id()},
      {"slurm_array_task_id", &a.slurm_array_task_id()},
      {"pod", &a.pod()},
      {"namespace", &a.namespace_()},
      {"container", &a.container()},
      {"container_id", &a.container_id()}};
  for (const auto& [name, value] : fields) {
    if (value->empty()) continue;
    w.Key(name);
    w.String(*value);
  }
  if (a.slurm_claimed()) {
    w.Key("slurm_claimed");
    w.Bool(true);
  }
  w.EndObject();
}

void WriteJob(JsonWriter& w, const v1::JobReport& job, const JobFormatOptions& o) {
  const auto unavailable = Unavailable(job);
  const bool util = UnavailableReason(unavailable, "utilization") == nullptr;
  const bool flops = UnavailableReason(unavailable, "flops") == nullptr;
  const bool collectives = UnavailableReason(unavailable, "collectives") == nullptr;
  const auto number_or_null = [&w](const char* key, bool known, double v) {
    w.Key(key);
    known ? w.Double(v) : w.Null();
  };
  w.BeginObject();
  w.Key("number");
  w.Uint(job.number());
  w.Key("id");
  w.String(job.id());
  w.Key("kind");
  w.String(job.kind());
  w.Key("state");
  w.String(job.live() ? "live" : "ended");
  w.Key("command");
  w.String(job.command());
  w.Key("attribution");
  WriteAttribution(w, job.attribution());
  w.Key("start");
  w.String(Rfc3339(job.start_unix_ns()));
  w.Key("end");
  job.live() ? w.Null() : w.String(Rfc3339(job.end_unix_ns()));
  w.Key("start_marked");
  w.Bool(job.start_marked());
  w.Key("stop_marked");
  w.Bool(job.stop_marked());
  w.Key("wall_seconds");
  w.Double(job.wall_seconds());
  w.Key("accounted_seconds");
  w.Double(job.accounted_seconds());
  w.Key("neuron_device_indices");
  w.BeginArray();
  for (std::uint32_t d : job.device_indices()) w.Uint(d);
  w.EndArray();
  w.Key("neuroncore_ids");
  w.BeginArray();
  for (std::uint32_t c : job.core_ids()) w.Uint(c);
  w.EndArray();
  w.Key("processes");
  w.Uint(job.member_count());
  w.Key("max_processes_at_once");
  w.Uint(job.max_ranks());
  w.Key("neuroncore_seconds_held");
  w.Double(job.core_seconds_held());
  number_or_null("neuroncore_seconds_busy", util, job.core_seconds_busy());
  number_or_null("utilization_mean_percent", util, job.utilization_mean_percent());
  number_or_null("utilization_p10_percent", util, job.utilization_p10_percent());
  number_or_null("flops", flops, job.flops());
  number_or_null("flops_per_second", flops, job.flops_per_second());
  number_or_null("hardware_flops_utilization", flops && job.peak_flops_per_core() > 0,
                 job.hardware_flops_utilization());
  const double mfu = ModelFlopsUtilization(job, o.model_flops_per_step);
  number_or_null("model_flops_utilization", flops && mfu > 0, mfu);
  w.Key("peak_flops_per_core");
  w.Double(job.peak_flops_per_core());
  w.Key("hbm_peak_bytes");
  w.Uint(job.hbm_peak_bytes());
  w.Key("host_memory_peak_bytes");
  w.Uint(job.host_memory_peak_bytes());
  number_or_null("collective_share", collectives, job.collective_share());
  const ExecutionCounters ex = wire::ExecutionSummariesFromProto(job.errors(), job.executions());
  for (const auto& [key, part] : {std::pair{"execution_summary", ExecutionPart::kOutcome},
                                  std::pair{"error_summary", ExecutionPart::kError}}) {
    w.Key(key);
    w.BeginObject();
    for (const ExecutionField& field : kExecutionFields) {
      if (field.part != part) continue;
      w.Key(field.name);
      w.Uint(ex.*field.member);
    }
    w.EndObject();
  }
  w.Key("hardware_event_count");
  w.Uint(job.hardware_event_count());
  w.Key("hardware_events");
  w.BeginArray();
  for (const v1::JobEvent& e : job.events()) {
    w.BeginObject();
    w.Key("time");
    w.String(Rfc3339(e.unix_ns()));
    w.Key("kind");
    w.String(e.kind());
    w.Key("neuron_device_index");
    w.Uint(e.neuron_device_index());
    w.Key("summary");
    w.String(e.summary());
    w.EndObject();
  }
  w.EndArray();
  w.Key("verdicts");
  w.BeginArray();
  for (const v1::VerdictTime& v : job.verdicts()) {
    w.BeginObject();
    w.Key("verdict");
    w.String(FindingKindName(v.kind()));
    w.Key("seconds");
    w.Double(v.seconds());
    w.Key("share");
    w.Double(job.accounted_seconds() > 0 ? v.seconds() / job.accounted_seconds() : 0);
    w.Key("episodes");
    w.Uint(v.episodes());
    if (!v.subject().empty()) {
      w.Key("subject");
      w.String(v.subject());
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("utilization_trace");
  w.BeginObject();
  w.Key("span_seconds");
  w.Double(static_cast<double>(job.trace_span_ns()) / 1e9);
  w.Key("percent");
  w.BeginArray();
  for (int i = 0; i < job.trace_busy_size() && i < job.trace_held_size(); ++i) {
    const double held = job.trace_held(i);
    held > 0 ? w.Double(std::round(1000 * job.trace_busy(i) / held) / 10) : w.Null();
  }
  w.EndArray();
  w.EndObject();
  w.Key("unavailable");
  w.BeginObject();
  for (const auto& [name, reason] : unavailable) {
    w.Key(name);
    w.String(reason);
  }
  w.EndObject();
  w.EndObject();
}

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char c : Clean(text)) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '`') {
      out += '\'';
    } else if (c == '\n') {
      out += "<br>";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

double ModelFlopsUtilization(const v1::JobReport& job, double model_flops_per_step) {
  if (job.model_flops_utilization() > 0) return job.model_flops_utilization();
  const double capacity = job.core_seconds_held() * job.peak_flops_per_core();
  if (model_flops_per_step <= 0 || capacity <= 0) return 0;
  return model_flops_per_step * Steps(job) / capacity;
}

Result<v1::JobReport> FindJob(const std::vector<v1::JobReport>& jobs, const std::string& key) {
  // An id or a Slurm job id first: a number only when no job has that id (a Slurm job id of
  // another user's could equal one's number).
  const v1::JobReport* found = nullptr;
  for (int pass = 0; pass < 2 && found == nullptr; ++pass) {
    for (const v1::JobReport& j : jobs) {
      const bool match = pass == 0
                             ? j.id() == key || (j.kind() == "slurm" && j.id() == "slurm-" + key)
                             : std::to_string(j.number()) == key;
      if (match && (found == nullptr || j.start_unix_ns() > found->start_unix_ns())) found = &j;
    }
  }
  if (found != nullptr) return *found;
  std::string known;
  for (std::size_t i = 0; i < jobs.size() && i < 10; ++i) {
    known += (known.empty() ? "" : ", ") + jobs[i].id();
  }
  return Status::NotFound(
      "no job " + Clean(key) +
      (known.empty() ? " (no jobs at all)"
                     : " (jobs: " + Clean(known) + (jobs.size() > 10 ? ", ..." : "") + ")"));
}

std::string RenderJobList(const std::vector<v1::JobReport>& jobs, const JobFormatOptions&) {
  if (jobs.empty()) return "no jobs\n";
  std::vector<std::vector<std::string>> rows = {{"JOB", "ID", "KIND", "STATE", "STARTED", "WALL",
                                                 "CORES", "UTIL", "MOST TIME", "USER", "COMMAND"}};
  for (const v1::JobReport& j : jobs) {
    const bool util = j.unavailable().find("utilization") == std::string::npos;
    std::string command = Clean(j.command());
    if (command.size() > 40) command = command.substr(0, 37) + "...";
    rows.push_back({std::to_string(j.number()), Clean(j.id()), Clean(j.kind()),
                    j.live() ? "live" : "ended", UtcTime(j.start_unix_ns()),
                    Elapsed(j.wall_seconds()), std::to_string(j.core_ids_size()),
                    util ? Percent(j.utilization_mean_percent()) : "n/a", TopVerdict(j),
                    Clean(j.attribution().user()), command});
  }
  return RenderColumns(rows);
}

std::string RenderColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Columns(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : Pad(row[i], widths[i] + 2);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string RenderJobListJson(const std::vector<v1::JobReport>& jobs,
                              const JobFormatOptions& options) {
  std::string out;
  JsonWriter w(out, JsonWriter::Style::kIndented);
  w.BeginArray();
  for (const v1::JobReport& j : jobs) WriteJob(w, j, options);
  w.EndArray();
  return out + "\n";
}

std::string RenderJobJson(const v1::JobReport& job, const JobFormatOptions& options) {
  std::string out;
  JsonWriter w(out, JsonWriter::Style::kIndented);
  WriteJob(w, job, options);
  return out + "\n";
}

std::string RenderJobText(const v1::JobReport& job, const JobFormatOptions& options) {
  std::string out = "Job " + Clean(job.id()) + " (#" + std::to_string(job.number()) + ")\n\n";
  for (const Fact& f : Facts(job, options)) {
    std::string value = f.value;
    for (std::size_t at = value.find('\n'); at != std::string::npos; at = value.find('\n', at)) {
      value.replace(at, 1, "\n" + std::string(22, ' '));
      at += 23;
    }
    out += "  " + Pad(f.label, 20) + value + "\n";
  }
  const std::string spark = Sparkline(job);
  if (!spark.empty()) {
    out += "\n  Utilization over the job (each point " +
           Elapsed(static_cast<double>(job.trace_span_ns()) / 1e9) + "):\n    " + spark + "\n";
  }
  out += "\nWhere the time went\n";
  const std::vector<VerdictRow> rows = VerdictRows(job);
  if (rows.empty()) out += "  no verdict yet\n";
  for (const VerdictRow& r : rows) {
    const int bar = static_cast<int>(std::lround(r.share * 30));
    std::string bars;
    for (int i = 0; i < bar; ++i) bars += "█";
    std::string note = SubjectNote(r);
    if (r.episodes > 1)
      note += (note.empty() ? "" : ", ") + std::to_string(r.episodes) + " episodes";
    out += "  " + Pad(r.name, 18) + Pad(Elapsed(r.seconds), 9) + Pad(Percent(100 * r.share), 8) +
           Pad(bars, 31) + note;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

std::string RenderJobMarkdown(const v1::JobReport& job, const JobFormatOptions& options) {
  std::string out = "### Job " + MarkdownCell(job.id()) + " (#" + std::to_string(job.number()) +
                    ")\n\n| | |\n|---|---|\n";
  for (const Fact& f : Facts(job, options)) {
    const std::string value =
        f.label == "Command" ? "`" + MarkdownCell(f.value) + "`" : MarkdownCell(f.value);
    out += "| " + f.label + " | " + value + " |\n";
  }
  const std::string spark = Sparkline(job);
  if (!spark.empty()) {
    out += "| Utilization over the job | `" + spark + "` (each point " +
           Elapsed(static_cast<double>(job.trace_span_ns()) / 1e9) + ") |\n";
  }
  out +=
      "\n**Where the time went**\n\n| verdict | time | share | episodes | note |\n"
      "|---|---:|---:|---:|---|\n";
  for (const VerdictRow& r : VerdictRows(job)) {
    out += "| " + MarkdownCell(r.name) + " | " + Elapsed(r.seconds) + " | " +
           Percent(100 * r.share) + " | " + (r.episodes > 0 ? std::to_string(r.episodes) : "") +
           " | " + MarkdownCell(SubjectNote(r)) + " |\n";
  }
  return out;
}

}  // namespace neuronmon::exporter
