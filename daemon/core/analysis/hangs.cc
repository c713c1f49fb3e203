#include "daemon/core/analysis/hangs.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace neuronmon::daemon::analysis_internal {
namespace {

std::uint64_t Growth(std::uint64_t now, std::uint64_t before) {
  return now > before ? now - before : 0;
}

// The hang finding of `s`, one member of a hung job: `detail` names the collective it does not
// complete and the rank here that has not joined it (none: that rank runs on another host);
// `peers`: the ranks here that wait ("3 ranks").
v1::Finding HangFinding(const Stalled& s, const v1::HangDetail& detail, const std::string& peers,
                        const AnalyzerThresholds& t) {
  v1::Finding f;
  f.set_kind(v1::FINDING_KIND_HANG);
  f.set_subject(s.m->tag);
  f.set_pid(s.m->pid);
  AddEvidence(f, "seconds_since_last_execution", s.seconds, "seconds", s.threshold, ">=");
  AddEvidence(f, "collective_in_flight_percent", 100 * s.recent.in_flight, "percent",
              100 * t.hang_in_flight, s.recent.in_flight >= t.hang_in_flight ? ">=" : "<");
  const std::string op = CollectiveOpName(detail.operation());
  const double secs = std::floor(s.seconds);
  if (!s.recent.waiting) {
    f.set_summary(StuckRankClause(detail) + "; " + peers + " here wait for it");
  } else if (!detail.stuck_rank().empty()) {
    f.set_summary("waits in " + op + Fmt(" for %.0f s: ", secs) + detail.stuck_rank() +
                  " has not joined");
  } else {
    f.set_summary("waits in " + op + Fmt(" for %.0f s with ", secs) + peers +
                  " here; the rank that stopped joining is on another host");
  }
  f.set_straggler(detail.stuck_rank());
  *f.mutable_hang() = detail;
  return f;
}

// A job's members as the hang rule sees them: the first that waits in a collective, those that
// are not in one (they stopped joining), and whether every member has stalled long enough.
struct JobStall {
  const Stalled* waiter = nullptr;
  std::vector<const Stalled*> stuck;
  bool all_stalled = true;
};

JobStall StallOf(const std::vector<const Stalled*>& members) {
  JobStall out;
  for (const Stalled* s : members) {
    out.all_stalled = out.all_stalled && s->threshold > 0 && s->seconds >= s->threshold;
    if (!s->recent.waiting) {
      out.stuck.push_back(s);
    } else if (out.waiter == nullptr) {
      out.waiter = s;
    }
  }
  return out;
}

}  // namespace

Recent RecentOf(const Snapshot& end, const Snapshot& previous, const RuntimeSample& now,
                const RuntimeSample& before, Nanos period, double in_flight) {
  Recent r;
  r.completed = Growth(now.executions.completed, before.executions.completed);
  std::uint64_t core_busy = 0;
  for (std::uint32_t c : now.cores) {
    if (c < end.cores.size() && c < previous.cores.size())
      core_busy += Growth(end.cores[c].busy_ns, previous.cores[c].busy_ns);
  }
  r.cpus = static_cast<double>(Growth(now.cpu_user_ns + now.cpu_system_ns,
                                      before.cpu_user_ns + before.cpu_system_ns)) /
           static_cast<double>(period.count());
  if (!now.cores.empty()) {
    r.utilization = 100 * static_cast<double>(core_busy) /
                    (static_cast<double>(period.count()) * static_cast<double>(now.cores.size()));
  }
  std::uint64_t ops = 0, busy = 0, top = 0;
  std::optional<CollectiveKind> op;
  for (std::size_t k = 0; k < now.collectives.size(); ++k) {
    ops += Growth(now.collectives[k].count, before.collectives[k].count);
    const std::uint64_t b = Growth(now.collectives[k].busy_ns, before.collectives[k].busy_ns);
    busy += b;
    if (b > top) top = b, op = now.collectives[k].kind;
  }
  r.in_flight = static_cast<double>(busy) / static_cast<double>(period.count());
  if (ops == 0 && r.in_flight >= in_flight) r.waiting = op;
  return r;
}

bool IsIdle(const RuntimeMetrics& m, const Recent& recent, const AnalyzerThresholds& t) {
  return recent.completed == 0 && recent.utilization < t.idle_percent &&
         recent.in_flight < t.hang_in_flight &&
         (!m.Has(Signal::kRuntimeCpu) || recent.cpus < t.host_busy_cpus);
}

double PauseSeconds(double steps, Nanos least, std::int64_t step_ns) {
  return 1e-9 * std::max(steps * static_cast<double>(step_ns), static_cast<double>(least.count()));
}

std::map<std::uint32_t, v1::Finding> Hangs(const std::vector<Stalled>& all,
                                           const AnalyzerThresholds& t) {
  std::map<std::uint32_t, v1::Finding> out;
  std::map<std::string, std::vector<const Stalled*>> jobs;
  for (const Stalled& s : all) {
    jobs[s.m->command.empty() ? "pid " + std::to_string(s.m->pid) : s.m->command].push_back(&s);
  }
  for (const auto& [command, members] : jobs) {
    const JobStall job = StallOf(members);
    if (!job.all_stalled || job.waiter == nullptr) continue;
    // What the waiting ranks say: the first stuck rank. A stuck rank speaks of itself.
    v1::HangDetail told;
    told.set_operation(CollectiveOpOf(*job.waiter->recent.waiting));
    if (!job.stuck.empty()) {
      told.set_stuck_rank(job.stuck.front()->m->tag);
      told.set_stuck_seconds(job.stuck.front()->seconds);
    }
    const std::size_t waiting = members.size() - job.stuck.size();
    const std::string peers = std::to_string(waiting) + (waiting == 1 ? " rank" : " ranks");
    for (const Stalled* s : members) {
      v1::HangDetail detail = told;
      if (!s->recent.waiting) {
        detail.set_stuck_rank(s->m->tag);
        detail.set_stuck_seconds(s->seconds);
      }
      out[s->m->pid] = HangFinding(*s, detail, peers, t);
    }
  }
  return out;
}

}  // namespace neuronmon::daemon::analysis_internal
