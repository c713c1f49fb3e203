#include "exporter/report_app.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <ostream>
#include <vector>

#include "client/cluster.h"
#include "client/cluster_follower.h"
#include "client/program_flags.h"
#include "exporter/job_report_format.h"
#include "proto/common/file_reader.h"
#include "proto/common/terminal_text.h"
#include "proto/common/text.h"
#include "proto/names/names.h"

namespace neuronmon::exporter {
namespace {

using Complain = std::function<void(const std::string& message)>;

constexpr auto kAnswerTimeout = std::chrono::seconds(10);

v1::Subscribe JobsSubscription() {
  v1::Subscribe s;
  v1::GroupSubscription* g = s.add_groups();
  g->set_group(v1::GROUP_JOBS);
  g->set_period_ns(86'400'000'000'000ULL);  // the first report carries them; no later ones
  return s;
}

// The jobs of the recording, as the daemon's own accounting gives them after its last snapshot
// (or at --to).
std::optional<std::vector<v1::JobReport>> RecordingJobs(const client::ReplayRequest& request,
                                                        const client::ReplayOpener& open,
                                                        const Complain& complain, WallTime* as_of) {
  auto source = open(request);
  if (!source.ok()) return complain(source.status().message()), std::nullopt;
  v1::Subscribe sub;
  v1::GroupSubscription* g = sub.add_groups();
  g->set_group(v1::GROUP_JOBS);
  if (Status st = (*source)->Subscribe({sub}); !st.ok()) {
    return complain(st.message()), std::nullopt;
  }
  std::vector<std::optional<v1::Report>> reports;
  std::optional<v1::Report> last;
  while ((*source)->Step(reports)) {
    if (!reports.empty() && reports[0]) last = std::move(reports[0]);
  }
  for (const std::string& n : (*source)->TakeNotices()) complain(n);
  if (!last) return complain("the recording holds no snapshot in that range"), std::nullopt;
  *as_of = FromUnixNanos(last->wall_time_unix_ns());
  return std::vector<v1::JobReport>(last->jobs().begin(), last->jobs().end());
}

Result<client::Endpoint> Resolve(const client::EndpointFlags& flags,
                                 const client::LocalDaemonStarter& start_local, std::string* token,
                                 const Complain& complain) {
  auto ep = client::ResolveEndpoint(flags, token);
  if (!ep.ok()) return ep.status();
  ep->start_local = start_local;
  if (const std::string n = client::InsecureNotice(*ep, !token->empty()); !n.empty()) complain(n);
  return ep;
}

// Connects for the jobs (sending `mark` after the Subscribe when given) and waits for the first
// event `wanted` takes; errors, a lost connection and silence past kAnswerTimeout are said on
// `complain` and give nullopt.
std::optional<client::Event> Ask(const client::Endpoint& endpoint, const std::string& token,
                                 std::optional<v1::JobMark> mark,
                                 const std::function<bool(const client::Event&)>& wanted,
                                 const Complain& complain) {
  client::ClientOptions options;
  options.client_name = std::string("neuron-report/") + NEURONMON_VERSION;
  options.endpoint = endpoint;
  options.token = token;
  options.reconnect = false;
  options.subscribe = JobsSubscription();
  options.job_mark = std::move(mark);
  auto c = client::Client::Connect(std::move(options));
  if (!c.ok()) return complain(c.status().message()), std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<client::Event> e = (*c)->Next(std::chrono::milliseconds(200));
    if (!e) {
      if (!(*c)->running()) break;
      continue;
    }
    if (wanted(*e)) return e;
    switch (e->kind) {
      case client::Event::Kind::kInfo:
        complain(e->text);
        break;
      case client::Event::Kind::kError:
        complain(e->error.message());
        return std::nullopt;
      case client::Event::Kind::kDisconnected:
        complain(e->text);
        return std::nullopt;
      default:
        break;
    }
  }
  complain("no answer from the daemon within 10s");
  return std::nullopt;
}

std::optional<std::vector<v1::JobReport>> DaemonJobs(const client::EndpointFlags& flags,
                                                     const client::LocalDaemonStarter& start_local,
                                                     const Complain& complain, WallTime* as_of) {
  std::string token;
  Result<client::Endpoint> ep = Resolve(flags, start_local, &token, complain);
  if (!ep.ok()) return complain(ep.status().message()), std::nullopt;
  std::optional<client::Event> e = Ask(
      *ep, token, std::nullopt,
      [](const client::Event& ev) { return ev.kind == client::Event::Kind::kReport; }, complain);
  if (!e) return std::nullopt;
  *as_of = FromUnixNanos(e->report.wall_time_unix_ns());
  return std::vector<v1::JobReport>(e->report.jobs().begin(), e->report.jobs().end());
}

int Mark(const ReportCommandLine& c, std::ostream& out, const Complain& complain) {
  std::string token;
  // Marks go to a running daemon only: an in-process one would forget them at once.
  Result<client::Endpoint> ep = Resolve(c.endpoint, nullptr, &token, complain);
  if (!ep.ok()) return complain(ep.status().message()), 1;
  if (ep->kind == client::Endpoint::Kind::kStandalone) {
    return complain("--start and --stop mark a job in a running neuron-monitord, not --standalone"),
           2;
  }
  v1::JobMark mark;
  mark.set_job(c.start ? *c.start : *c.stop);
  mark.set_stop(c.stop.has_value());
  std::optional<client::Event> e = Ask(
      *ep, token, mark,
      [](const client::Event& ev) {
        return ev.kind == client::Event::Kind::kNotice &&
               ev.notice.kind() == v1::NOTICE_KIND_JOB_MARKED;
      },
      complain);
  if (!e) return 1;
  out << SanitizeForTerminal(e->notice.text()) << "\n";
  return 0;
}

constexpr std::size_t kMaxHosts = 1024;
constexpr std::size_t kAskAtOnce = 32;  // hosts asked at the same time

// The job `key` names on one host, else (no key) the one holding the most NeuronCores.
const v1::JobReport* PickJob(const std::vector<v1::JobReport>& jobs, const std::string& key,
                             v1::JobReport& found) {
  if (!key.empty()) {
    Result<v1::JobReport> job = FindJob(jobs, key);
    if (!job.ok()) return nullptr;
    found = std::move(*job);
    return &found;
  }
  const v1::JobReport* best = nullptr;
  for (const v1::JobReport& j : jobs) {
    if (j.live() && (best == nullptr || j.core_ids_size() > best->core_ids_size())) best = &j;
  }
  if (best == nullptr) return nullptr;
  found = *best;
  return &found;
}

// The verdict a job spent the most time under (unspecified when none).
v1::FindingKind MostTime(const v1::JobReport& job) {
  const v1::VerdictTime* top = nullptr;
  for (const v1::VerdictTime& v : job.verdicts()) {
    if (top == nullptr || v.seconds() > top->seconds()) top = &v;
  }
  return top == nullptr ? v1::FINDING_KIND_UNSPECIFIED : top->kind();
}

int ClusterReport(const ReportCommandLine& c, std::ostream& out, const Complain& complain) {
  Result<std::string> text = ReadRegularFile(*c.hosts, 1 << 20);
  if (!text.ok()) return complain(text.status().message()), 1;
  Result<std::vector<client::HostsFileLine>> lines =
      client::ParseHostsFile(*text, *c.hosts, kMaxHosts);
  if (!lines.ok()) return complain(lines.status().message()), 1;
  if (lines->empty()) return complain(*c.hosts + ": no hosts"), 1;
  client::EndpointFlags flags = c.endpoint;
  flags.connect = lines->front().address;  // validates the other flags, reads --token-file
  std::string token;
  Result<client::Endpoint> ep = client::ResolveEndpoint(flags, &token);
  if (!ep.ok()) return complain(ep.status().message()), 1;
  Result<std::vector<client::ClusterTarget>> targets =
      client::ResolveClusterHosts(*lines, ep->tls, token);
  if (!targets.ok()) return complain(targets.status().message()), 1;
  for (const client::ClusterTarget& t : *targets) {
    if (Status s = client::CheckTokenTransport(t.endpoint, t.token); !s.ok()) {
      return complain(s.message()), 1;
    }
  }
  // The hosts are asked kAskAtOnce at a time, each on its own thread (a down host costs its
  // connect timeout, not every host's); what they say is told in the file's order.
  struct Answer {
    client::ClusterHost host;
    std::optional<v1::JobReport> job;
    std::vector<std::string> complaints;
  };
  const auto ask = [&c](const client::ClusterTarget& t) {
    Answer a;
    client::ClusterHost& h = a.host;
    h.address = t.address;
    h.name = t.address;
    std::optional<client::Event> e = Ask(
        t.endpoint, t.token, std::nullopt,
        [&h](const client::Event& ev) {
          // The host as the cluster view names it: its instance's name, else its id.
          if (ev.kind == client::Event::Kind::kConnected) {
            const v1::InstanceInfo& info = ev.welcome.inventory().instance_info();
            const std::string& name =
                info.instance_name().empty() ? info.instance_id() : info.instance_name();
            if (!name.empty()) h.name = SanitizeForTerminal(name.substr(0, 64));
          }
          return ev.kind == client::Event::Kind::kReport;
        },
        [&](const std::string& m) { a.complaints.push_back(t.address + ": " + m); });
    h.state = e ? client::HostState::kUp : client::HostState::kDown;
    if (!e) return a;
    const std::vector<v1::JobReport> all(e->report.jobs().begin(), e->report.jobs().end());
    v1::JobReport found;
    if (PickJob(all, c.job, found) != nullptr) {
      h.has_summary = true;
      h.summary.set_utilization_percent(found.utilization_mean_percent());
      h.summary.set_collective_time_share(found.collective_share());
      h.summary.set_cores_in_use(static_cast<std::uint32_t>(found.core_ids_size()));
      h.summary.set_job(found.command());
      h.verdict.set_kind(MostTime(found));
      a.job = std::move(found);
    }
    return a;
  };
  std::vector<client::ClusterHost> hosts;
  std::vector<std::optional<v1::JobReport>> jobs;
  for (std::size_t from = 0; from < targets->size(); from += kAskAtOnce) {
    std::vector<std::future<Answer>> asked;
    for (std::size_t i = from; i < targets->size() && i < from + kAskAtOnce; ++i) {
      asked.push_back(std::async(std::launch::async, ask, std::cref((*targets)[i])));
    }
    for (std::future<Answer>& f : asked) {
      Answer a = f.get();
      for (const std::string& m : a.complaints) complain(m);
      hosts.push_back(std::move(a.host));
      jobs.push_back(std::move(a.job));
    }
  }
  const client::ClusterAnalysis analysis = client::AnalyzeCluster(hosts);
  std::vector<std::vector<std::string>> rows = {
      {"HOST", "NAME", "JOB", "CORES", "UTIL", "COLLECTIVES", "MOST TIME", "IN THE CLUSTER"}};
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (!jobs[i]) {
      rows.push_back({SanitizeForTerminal(hosts[i].address), hosts[i].name,
                      hosts[i].state == client::HostState::kUp ? "no such job" : "unreachable", "",
                      "", "", "", ""});
      continue;
    }
    const v1::JobReport& j = *jobs[i];
    const v1::Finding& v = analysis.host_verdicts[i];
    rows.push_back({SanitizeForTerminal(hosts[i].address), hosts[i].name,
                    SanitizeForTerminal(j.id()), std::to_string(j.core_ids_size()),
                    FormatFixed(j.utilization_mean_percent(), 1) + "%",
                    FormatFixed(100 * j.collective_share(), 1) + "%", FindingKindName(MostTime(j)),
                    v.kind() == v1::FINDING_KIND_UNSPECIFIED ? "-" : FindingKindName(v.kind())});
  }
  out << RenderColumns(rows);
  if (analysis.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED) {
    out << "\ncluster: " << FindingKindName(analysis.verdict.kind()) << ": "
        << SanitizeForTerminal(analysis.verdict.summary()) << "\n";
  }
  for (const auto& job : jobs) {
    if (!job) return 1;
  }
  return 0;
}

}  // namespace

void AddReportOptions(CLI::App& app, ReportCommandLine& c) {
  client::AddVersionFlag(app, "neuron-report");
  app.add_option("JOB", c.job,
                 "the job to report: its number or id as the list shows them, or a Slurm job id; "
                 "without it, the list of live and recent jobs");
  CLI::Option* json = app.add_flag("-j,--json", c.json, "print JSON");
  app.add_flag("--markdown", c.markdown, "print the report as Markdown (to paste into a ticket)")
      ->excludes(json);
  CLI::Option* start =
      app.add_option("--start", c.start,
                     "mark JOB (a Slurm job id) started now, before its processes appear (a "
                     "Slurm Prolog; root, or the job's owner)")
          ->type_name("JOB");
  app.add_option("--stop", c.stop,
                 "mark JOB ended now, without waiting for jobs.grace (a Slurm Epilog; root, or "
                 "the job's owner)")
      ->type_name("JOB")
      ->excludes(start);
  app.add_option("--model-flops", c.model_flops,
                 "the model's FLOPs per training step: model FLOPs utilization from the job's "
                 "steps, where the host does not count the model's FLOPs")
      ->type_name("FLOPS")
      ->check(CLI::PositiveNumber);
  client::AddReplayOptions(
      app, c.replay,
      {"report the jobs of a recording (an archive directory or a --record file), computed as "
       "the daemon computes them live",
       "with --replay: from TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or +10m from the "
       "recording's start)",
       "with --replay: up to TIME (the same forms)"});
  app.add_option("--hosts", c.hosts,
                 "the job on every host of FILE (one HOST:PORT per line, as neuron-top --hosts "
                 "reads it) side by side, compared as the cluster view compares hosts: a "
                 "straggler host is named on every row")
      ->type_name("FILE");
  client::AddEndpointOptions(app, c.endpoint);
}

int RunReport(const ReportCommandLine& c, const client::ReplayOpener& open_replay,
              const client::LocalDaemonStarter& start_local, std::ostream& out, std::ostream& err) {
  const Complain complain = [&err](const std::string& m) {
    err << "neuron-report: " << SanitizeForTerminal(m) << "\n";
  };
  if (Status st = client::CheckReplayOptions(c.replay); !st.ok()) {
    return complain(st.message()), 2;
  }
  if (c.start || c.stop) {
    if (c.replay.given() || !c.job.empty()) {
      return complain("--start and --stop take their JOB alone: no report, no --replay"), 2;
    }
    return Mark(c, out, complain);
  }
  if (c.hosts) {
    if (c.replay.given() || c.json || c.markdown) {
      return complain("--hosts prints one table: no --replay, -j or --markdown with it"), 2;
    }
    return ClusterReport(c, out, complain);
  }
  WallTime as_of{};
  std::optional<std::vector<v1::JobReport>> jobs =
      c.replay.given() ? RecordingJobs(c.replay.request, open_replay, complain, &as_of)
                       : DaemonJobs(c.endpoint, start_local, complain, &as_of);
  if (!jobs) return 1;
  JobFormatOptions options;
  options.model_flops_per_step = c.model_flops;
  options.now = as_of;
  if (c.job.empty()) {
    out << (c.json ? RenderJobListJson(*jobs, options) : RenderJobList(*jobs, options));
    return 0;
  }
  Result<v1::JobReport> job = FindJob(*jobs, c.job);
  if (!job.ok()) return complain(job.status().message()), 1;
  if (c.json) {
    out << RenderJobJson(*job, options);
  } else if (c.markdown) {
    out << RenderJobMarkdown(*job, options);
  } else {
    out << RenderJobText(*job, options);
  }
  return 0;
}

}  // namespace neuronmon::exporter
