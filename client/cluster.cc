#include "client/cluster.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "client/client.h"
#include "proto/common/order_statistics.h"
#include "proto/common/text.h"
#include "proto/names/names.h"

namespace neuronmon::client {
namespace {

std::string Fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

// What a hang verdict says of the stuck rank, read from its structure (Finding.hang): "rank7 has
// not joined all_reduce for 41 s". A daemon older than that field names the rank only. "" when
// the stuck rank is not on that host.
std::string StuckClause(const v1::Finding& f) {
  if (f.straggler().empty()) return "";
  if (!f.has_hang()) return f.straggler() + " stopped joining its collectives";
  return StuckRankClause(f.hang());
}

// Checks one HOST:PORT the way --connect does.
Status CheckAddress(std::string_view address) {
  Result<Endpoint> ep = TcpEndpoint(address);
  return ep.ok() ? Status::Ok() : ep.status();
}

// A hosts file line's settings: each declared once, here, with what its value must be.
struct HostsSetting {
  std::string_view key;
  std::string HostsFileLine::*member;
  bool path;  // a file (relative to the hosts file's directory), else a server name
};
constexpr HostsSetting kHostsSettings[] = {
    {"token_file", &HostsFileLine::token_file, true},
    {"server_name", &HostsFileLine::server_name, false},
    {"tls_ca", &HostsFileLine::tls_ca, true},
};

// The directory part of `path` with its '/', or "" for a file in the current directory.
std::string BaseDirectory(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// Why `value` cannot be setting `s`'s, or "".
std::string CheckSettingValue(const HostsSetting& s, std::string_view value) {
  for (const char ch : value) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      return std::string(s.key) + ": control character in the value";
    }
  }
  if (s.path) {
    return value.size() > kMaxHostsFilePath ? std::string(s.key) + ": path longer than " +
                                                  std::to_string(kMaxHostsFilePath) + " bytes"
                                            : "";
  }
  const bool name_chars = std::all_of(value.begin(), value.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_' ||
           ch == ':';
  });
  if (value.size() > kMaxServerName || !name_chars) {
    return std::string(s.key) + ": \"" + std::string(value.substr(0, 64)) + "\" is not a host name";
  }
  return "";
}

// Applies one "key=value" field to `line`.
Status ApplySetting(std::string_view field, const std::string& base, HostsFileLine& line) {
  const std::size_t eq = field.find('=');
  const std::string_view key = field.substr(0, eq);
  const auto* s = std::find_if(std::begin(kHostsSettings), std::end(kHostsSettings),
                               [&](const HostsSetting& h) { return h.key == key; });
  if (s == std::end(kHostsSettings)) {
    return Status::InvalidArgument("unknown setting \"" + std::string(key.substr(0, 64)) +
                                   "\" (expected token_file=, server_name= or tls_ca=)");
  }
  if (eq == std::string_view::npos || eq + 1 == field.size()) {
    return Status::InvalidArgument(std::string(key) + " needs a value (" + std::string(key) +
                                   "=...)");
  }
  std::string& member = line.*(s->member);
  if (!member.empty()) return Status::InvalidArgument(std::string(key) + " given twice");
  const std::string_view value = field.substr(eq + 1);
  if (std::string why = CheckSettingValue(*s, value); !why.empty()) {
    return Status::InvalidArgument(why);
  }
  member = s->path && value.front() != '/' ? base + std::string(value) : std::string(value);
  return Status::Ok();
}

// "HOST:PORT [key=value ...]", comments and blanks around already removed.
Result<HostsFileLine> ParseHostsLine(std::string_view text, const std::string& base) {
  HostsFileLine line;
  bool first = true;
  while (!text.empty()) {
    const std::size_t end = text.find_first_of(kLineBlanks);
    const std::string_view field = text.substr(0, end);
    text = Trim(text.substr(field.size()), kLineBlanks);
    if (first) {
      if (Status s = CheckAddress(field); !s.ok()) return s;
      line.address = std::string(field);
      first = false;
    } else if (Status s = ApplySetting(field, base, line); !s.ok()) {
      return s;
    }
  }
  return line;
}

// Each host's own verdict, and the jobs of the reporting hosts (same command line), in list order.
ClusterAnalysis GroupJobs(const std::vector<ClusterHost>& hosts) {
  ClusterAnalysis out;
  out.host_verdicts.resize(hosts.size());
  std::map<std::string, std::size_t> job_of;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    out.host_verdicts[i] = hosts[i].verdict;
    if (hosts[i].state != HostState::kUp || !hosts[i].has_summary) continue;
    const std::string& command = hosts[i].summary.job();
    auto [it, added] = job_of.emplace(command, out.jobs.size());
    if (added) out.jobs.push_back({command, {}, 0, 0});
    out.jobs[it->second].hosts.push_back(i);
  }
  return out;
}

// The host of `job` whose own verdict is `hang`, preferring one that names the stuck rank; null
// when none hangs.
const ClusterHost* HungHost(const std::vector<ClusterHost>& hosts, const ClusterJob& job) {
  const ClusterHost* hung = nullptr;
  for (std::size_t i : job.hosts) {
    const v1::Finding& v = hosts[i].verdict;
    if (v.kind() != v1::FINDING_KIND_HANG) continue;
    if (hung == nullptr || (!v.straggler().empty() && hung->verdict.straggler().empty()))
      hung = &hosts[i];
  }
  return hung;
}

// A hang on any host stops the whole job: every other host of it waits for `hung`.
void SpreadHang(const std::vector<ClusterHost>& hosts, const ClusterJob& job,
                const ClusterHost& hung, std::vector<v1::Finding>& verdicts) {
  for (std::size_t i : job.hosts) {
    if (verdicts[i].kind() == v1::FINDING_KIND_HANG) continue;
    v1::Finding& f = verdicts[i];
    f = v1::Finding{};
    f.set_kind(v1::FINDING_KIND_HANG);
    f.set_severity(v1::SEVERITY_CRITICAL);
    f.set_subject(hosts[i].name);
    f.set_summary("waits for node " + hung.name);
  }
}

// The straggler verdict for host `h` of `job`, or none. Busier than the others while they wait
// in collectives: they wait for it (its own share of time in collectives may be as high as
// theirs: overlapped all-reduces count there too). Less busy: only if it is not waiting in
// collectives itself (it stalls elsewhere).
std::optional<v1::Finding> StragglerVerdict(const ClusterHost& h, const ClusterJob& job,
                                            const ClusterThresholds& t) {
  const v1::HostSummary& s = h.summary;
  const double gap = s.utilization_percent() - job.median_utilization;
  const bool busier = gap >= t.straggler_gap_points;
  const bool stalled = -gap >= t.straggler_gap_points &&
                       s.collective_time_share() < t.own_share_ratio * job.median_collective_share;
  if (!busier && !stalled) return std::nullopt;
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_STRAGGLER);
  f.set_severity(v1::SEVERITY_WARNING);
  f.set_subject(h.name);
  f.set_straggler(h.name);
  f.set_summary(
      Fmt("NeuronCores %.0f%% busy against the job's median %.0f%%, %.0f%% of the "
          "time in collectives against %.0f%%: the other nodes wait for it",
          s.utilization_percent(), job.median_utilization, 100 * s.collective_time_share(),
          100 * job.median_collective_share));
  AddEvidence(f, "utilization_gap_points", busier ? gap : -gap, "percent", t.straggler_gap_points,
              ">=");
  if (stalled) {
    AddEvidence(f, "collective_time_share_percent", 100 * s.collective_time_share(), "percent",
                100 * t.own_share_ratio * job.median_collective_share, "<");
  }
  AddEvidence(f, "job_median_collective_time_share_percent", 100 * job.median_collective_share,
              "percent", 100 * t.peer_share, ">=");
  return f;
}

// Sets `job`'s medians and, for a job (hosts with applications), the verdicts the comparison
// gives its hosts: a hang for all, or the stragglers.
void CompareJob(const std::vector<ClusterHost>& hosts, const ClusterThresholds& t, ClusterJob& job,
                std::vector<v1::Finding>& verdicts) {
  std::vector<double> u, c;
  for (std::size_t i : job.hosts) {
    u.push_back(hosts[i].summary.utilization_percent());
    c.push_back(hosts[i].summary.collective_time_share());
  }
  job.median_utilization = Median(u);
  job.median_collective_share = Median(c);
  if (job.command.empty()) return;
  if (const ClusterHost* hung = HungHost(hosts, job); hung != nullptr) {
    SpreadHang(hosts, job, *hung, verdicts);
    return;
  }
  if (job.hosts.size() < t.min_hosts || job.median_collective_share < t.peer_share) return;
  for (std::size_t i : job.hosts) {
    if (std::optional<v1::Finding> f = StragglerVerdict(hosts[i], job, t)) verdicts[i] = *f;
  }
}

// The host whose verdict is the cluster's: the worst (VerdictRank), a hang naming its stuck rank
// before one that does not; hosts.size() when no host has a verdict.
std::size_t WorstHost(const std::vector<v1::Finding>& verdicts) {
  std::size_t worst = verdicts.size();
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const v1::Finding& f = verdicts[i];
    if (f.kind() == v1::FINDING_KIND_UNSPECIFIED) continue;
    if (worst == verdicts.size()) {
      worst = i;
      continue;
    }
    const v1::Finding& w = verdicts[worst];
    if (VerdictRank(f.kind()) > VerdictRank(w.kind()) ||
        (f.kind() == v1::FINDING_KIND_HANG && w.kind() == v1::FINDING_KIND_HANG &&
         !f.straggler().empty() && w.straggler().empty())) {
      worst = i;
    }
  }
  return worst;
}

// What the cluster verdict says of node `node`, whose verdict `worst` is the cluster's.
std::string VerdictText(const v1::Finding& worst, const std::string& node,
                        const std::vector<v1::Finding>& verdicts) {
  switch (worst.kind()) {
    case v1::FINDING_KIND_HANG: {
      const std::string stuck = StuckClause(worst);
      return stuck.empty() ? "node " + node +
                                 " hangs: every rank waits in a collective; the rank that "
                                 "stopped joining is on a host not reporting"
                           : "node " + node + ": " + stuck;
    }
    case v1::FINDING_KIND_HEALTHY: {
      std::size_t healthy = 0;
      for (const v1::Finding& f : verdicts) healthy += f.kind() == v1::FINDING_KIND_HEALTHY ? 1 : 0;
      return Fmt("%.0f of %.0f hosts healthy", static_cast<double>(healthy),
                 static_cast<double>(verdicts.size()));
    }
    default:
      // A host's own summary is about its applications ("3 of 16 applications: ...").
      return "node " + node + ": " + worst.summary();
  }
}

// The cluster's verdict: the worst host's, naming the node; and how many hosts do not report.
v1::Finding ClusterVerdict(const std::vector<ClusterHost>& hosts,
                           const std::vector<v1::Finding>& verdicts) {
  v1::Finding v;
  v.set_subject("cluster");
  std::size_t up = 0, down = 0;
  for (const ClusterHost& h : hosts) (h.state == HostState::kUp ? up : down) += 1;
  const std::string unreachable =
      down == 0 ? ""
                : Fmt("; %.0f of %.0f hosts not reporting", static_cast<double>(down),
                      static_cast<double>(hosts.size()));
  const std::size_t at = WorstHost(verdicts);
  if (at == verdicts.size()) {
    v.set_kind(v1::FINDING_KIND_HEALTHY);
    v.set_severity(v1::SEVERITY_INFO);
    v.set_summary((up == 0 ? std::string("no host is reporting yet") : "collecting data") +
                  unreachable);
    return v;
  }
  const v1::Finding& worst = verdicts[at];
  v.set_kind(worst.kind());
  v.set_severity(worst.severity());
  v.set_straggler(worst.kind() == v1::FINDING_KIND_HANG ? hosts[at].name : worst.straggler());
  v.set_summary(VerdictText(worst, hosts[at].name, verdicts) + unreachable);
  for (const v1::Evidence& e : worst.evidence()) *v.add_evidence() = e;
  return v;
}

}  // namespace

ClusterAnalysis AnalyzeCluster(const std::vector<ClusterHost>& hosts, const ClusterThresholds& t) {
  ClusterAnalysis out = GroupJobs(hosts);
  for (ClusterJob& job : out.jobs) CompareJob(hosts, t, job, out.host_verdicts);
  out.verdict = ClusterVerdict(hosts, out.host_verdicts);
  return out;
}

Result<std::vector<HostsFileLine>> ParseHostsFile(std::string_view text, const std::string& source,
                                                  std::size_t max_hosts) {
  std::vector<HostsFileLine> hosts;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = Trim(line, kLineBlanks);
    if (line.empty()) continue;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (hosts.size() == max_hosts) {
      return Status::InvalidArgument(where + "more than " + std::to_string(max_hosts) + " hosts");
    }
    Result<HostsFileLine> parsed = ParseHostsLine(line, BaseDirectory(source));
    if (!parsed.ok()) return Status::InvalidArgument(where + parsed.status().message());
    hosts.push_back(std::move(*parsed));
  }
  if (hosts.empty()) return Status::InvalidArgument(source + ": no HOST:PORT lines");
  return hosts;
}

Result<std::vector<std::string>> SplitHostList(std::string_view list, std::size_t max_hosts) {
  std::vector<std::string> hosts;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = Trim(list.substr(0, comma), kLineBlanks);
    if (item.empty()) return Status::InvalidArgument("--connect: empty HOST:PORT in the list");
    if (hosts.size() == max_hosts) {
      return Status::InvalidArgument("--connect: more than " + std::to_string(max_hosts) +
                                     " hosts");
    }
    if (Status s = CheckAddress(item); !s.ok()) return s;
    hosts.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return hosts;
}

}  // namespace neuronmon::client
