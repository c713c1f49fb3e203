#include "daemon/core/jobs/job_book.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "proto/common/duration.h"
#include "proto/common/tag_filter.h"
#include "proto/common/text.h"
#include "proto/names/names.h"
#include "proto/wire/field_codec.h"

namespace neuronmon::daemon {
namespace {

constexpr std::size_t kMaxMembers = 256;       // JobMember entries kept per job
constexpr std::size_t kMaxJobEvents = 32;      // JobEvent entries kept per job
constexpr std::size_t kTracePoints = 64;       // sparkline points
constexpr std::size_t kHistogramBins = 101;    // whole percent 0..100
constexpr std::size_t kMaxIdBytes = 100;       // a job id, after sanitizing
constexpr std::size_t kMaxSubjects = 64;       // devices or ranks a verdict's time is kept for
constexpr std::size_t kMaxCommandBytes = 512;  // a job's command line as kept

// A job id from attribution strings (which a process may claim): printable, short, and free of
// anything a label value, a path or a terminal would take for syntax.
std::string SafeId(std::string_view prefix, std::string_view raw) {
  std::string out(prefix);
  for (char c : raw.substr(0, kMaxIdBytes)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@' ||
                    c == '+';
    out += ok ? c : '_';
  }
  return out;
}

double Seconds(Nanos d) { return std::chrono::duration<double>(d).count(); }

// The verdict a runtime had at this sample (the analyzer's first finding for it), if any.
const v1::Finding* VerdictOf(const Analysis* analysis, std::uint32_t pid) {
  if (analysis == nullptr) return nullptr;
  auto it = analysis->runtimes.find(pid);
  if (it == analysis->runtimes.end() || it->second.empty()) return nullptr;
  const v1::Finding& f = it->second.front();
  return f.kind() == v1::FINDING_KIND_UNSPECIFIED ? nullptr : &f;
}

// Who a straggler or a hang names: the slow device or rank.
std::string VerdictSubject(const v1::Finding& f) {
  if (f.kind() == v1::FINDING_KIND_HANG && !f.hang().stuck_rank().empty()) {
    return f.hang().stuck_rank();
  }
  if (f.kind() == v1::FINDING_KIND_STRAGGLER || f.kind() == v1::FINDING_KIND_HANG) {
    return f.straggler();
  }
  return "";
}

void InsertSorted(google::protobuf::RepeatedField<std::uint32_t>& list, std::uint32_t value) {
  auto it = std::lower_bound(list.begin(), list.end(), value);
  if (it != list.end() && *it == value) return;
  const auto at = static_cast<int>(it - list.begin());
  list.Add(value);
  for (int i = list.size() - 1; i > at; --i) list.Set(i, list.Get(i - 1));
  list.Set(at, value);
}

// What one sample adds to one job, before it is folded in.
struct SampleTotals {
  double held = 0;           // core-seconds
  double held_measured = 0;  // of which in windows whose busy time was measured
  double busy = 0;
  double flops = 0;
  double effective_flops = 0;
  double runtime_seconds = 0;
  double collective_seconds = 0;
  ExecutionCounters executions;
  std::uint64_t hbm = 0;
  std::uint64_t host = 0;
  std::uint32_t ranks = 0;
  bool accounted = false;  // a member ran through the whole window
  const v1::Finding* verdict = nullptr;
};

void AddTrace(v1::JobReport& r, double busy, double held, Nanos dt) {
  const auto ns = static_cast<std::uint64_t>(dt.count());
  if (r.trace_span_ns() == 0) r.set_trace_span_ns(std::max<std::uint64_t>(ns, 1));
  if (r.trace_busy_size() == 0 || r.trace_tail_ns() >= r.trace_span_ns()) {
    if (static_cast<std::size_t>(r.trace_busy_size()) == kTracePoints) {
      // Every point is full: halve the resolution.
      for (int i = 0; i < r.trace_busy_size() / 2; ++i) {
        r.set_trace_busy(i, r.trace_busy(2 * i) + r.trace_busy(2 * i + 1));
        r.set_trace_held(i, r.trace_held(2 * i) + r.trace_held(2 * i + 1));
      }
      r.mutable_trace_busy()->Truncate(r.trace_busy_size() / 2);
      r.mutable_trace_held()->Truncate(r.trace_held_size() / 2);
      r.set_trace_span_ns(r.trace_span_ns() * 2);
    }
    r.add_trace_busy(0);
    r.add_trace_held(0);
    r.set_trace_tail_ns(0);
  }
  const int last = r.trace_busy_size() - 1;
  r.set_trace_busy(last, r.trace_busy(last) + static_cast<float>(busy));
  r.set_trace_held(last, r.trace_held(last) + static_cast<float>(held));
  r.set_trace_tail_ns(r.trace_tail_ns() + ns);
}

// The figures that follow from the accumulated ones.
void Derive(v1::JobReport& r) {
  const double held = r.core_seconds_held_measured();
  r.set_utilization_mean_percent(held > 0 ? 100.0 * r.core_seconds_busy() / held : 0);
  std::uint64_t total = 0;
  for (std::uint32_t n : r.utilization_histogram()) total += n;
  double p10 = 0;
  if (total > 0) {
    // The lowest whole percent at or under which a tenth of the samples lie.
    const auto rank = static_cast<std::uint64_t>(std::ceil(0.1 * static_cast<double>(total)));
    std::uint64_t seen = 0;
    for (int i = 0; i < r.utilization_histogram_size(); ++i) {
      seen += r.utilization_histogram(i);
      if (seen >= std::max<std::uint64_t>(rank, 1)) {
        p10 = i;
        break;
      }
    }
  }
  r.set_utilization_p10_percent(p10);
  r.set_flops_per_second(r.accounted_seconds() > 0 ? r.flops() / r.accounted_seconds() : 0);
  const double capacity = r.core_seconds_held() * r.peak_flops_per_core();
  r.set_hardware_flops_utilization(capacity > 0 ? r.flops() / capacity : 0);
  r.set_model_flops_utilization(capacity > 0 ? r.effective_flops() / capacity : 0);
  r.set_collective_share(r.runtime_seconds() > 0 ? r.collective_seconds() / r.runtime_seconds()
                                                 : 0);
}

std::string Unavailable(const Snapshot& s) {
  std::string out;
  const auto add = [&](const char* what, Signal signal) {
    const std::string& reason = s.UnmeasuredReason(signal);
    if (reason.empty()) return;
    out += (out.empty() ? "" : "; ") + std::string(what) + ": " + CutForMessage(reason, 160);
  };
  add("utilization", Signal::kCoreActivity);
  add("flops", Signal::kFlops);
  add("collectives", Signal::kCollectives);
  add("executions", Signal::kExecutions);
  return out;
}

v1::Event JobEventOf(const v1::JobReport& r, std::uint64_t sample_seq, const char* after) {
  v1::Event e;
  e.set_kind(v1::EVENT_KIND_JOB);
  e.set_sample_seq(sample_seq);
  e.mutable_subject()->set_job(r.id());
  e.set_before(std::string(after) == "started" ? "" : "live");
  e.set_after(after);
  return e;
}

}  // namespace

JobIdentity IdentifyJob(const v1::Attribution& a) {
  if (!a.slurm_job_id().empty()) return {"slurm", SafeId("slurm-", JobOf(a))};
  if (!a.pod().empty()) return {"pod", SafeId("pod-", JobOf(a))};
  if (!a.container_id().empty()) return {"container", SafeId("ctr-", JobOf(a))};
  return {};
}

JobBook::Live& JobBook::Open(const std::string& key, const v1::Process* process, WallTime wall,
                             bool marked) {
  Live l;
  l.key = key;
  l.first_seen = wall;
  v1::JobReport& r = l.report;
  r.set_number(next_number_++);
  r.set_live(true);
  r.set_start_unix_ns(ToUnixNanos(wall));
  r.set_last_seen_unix_ns(ToUnixNanos(wall));
  r.set_start_marked(marked);
  if (process != nullptr) {
    *r.mutable_attribution() = process->attribution();
    r.set_command(process->command().substr(0, kMaxCommandBytes));
  }
  live_.push_back(std::move(l));
  dirty_ = true;
  return live_.back();
}

void JobBook::Close(std::size_t index, WallTime wall, bool marked, std::vector<v1::Event>& out) {
  Live& l = live_[index];
  v1::JobReport& r = l.report;
  r.set_live(false);
  r.set_stop_marked(marked);
  const std::int64_t end = marked ? ToUnixNanos(wall) : r.last_seen_unix_ns();
  r.set_end_unix_ns(std::max(end, r.start_unix_ns()));
  r.set_wall_seconds(static_cast<double>(r.end_unix_ns() - r.start_unix_ns()) / 1e9);
  Derive(r);
  if (marked) {
    // Its processes may outlive the stop: for the grace period they are nobody's.
    for (const auto& [pid, ticks] : l.present) stopped_[pid] = {ticks, wall + options_.grace};
    for (const v1::JobMember& m : r.members()) {
      stopped_[m.pid()] = {m.start_time_ticks(), wall + options_.grace};
    }
  }
  ++ended_;
  v1::Event e = JobEventOf(r, 0, "ended");
  e.set_summary("job " + r.id() + " ended after " +
                FormatElapsed(Nanos(static_cast<std::int64_t>(r.wall_seconds() * 1e9))) + ": " +
                FormatFixed(r.core_seconds_held(), 0) + " NeuronCore-seconds held, " +
                (r.unavailable().find("utilization") == std::string::npos
                     ? FormatFixed(r.utilization_mean_percent(), 1) + "% busy"
                     : "utilization unavailable"));
  AddEvidence(e, "wall_seconds", r.wall_seconds(), "seconds");
  AddEvidence(e, "core_seconds_held", r.core_seconds_held(), "seconds");
  AddEvidence(e, "core_seconds_busy", r.core_seconds_busy(), "seconds");
  out.push_back(std::move(e));
  finished_.push_front(std::move(r));
  live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(index));
  dirty_ = true;
  Trim(wall);
}

void JobBook::Trim(WallTime wall) {
  const std::int64_t oldest = ToUnixNanos(wall) - options_.max_age.count();
  while (!finished_.empty() &&
         (finished_.size() > options_.max_finished || finished_.back().end_unix_ns() < oldest)) {
    finished_.pop_back();
    dirty_ = true;
  }
}

std::vector<v1::Event> JobBook::Update(const Snapshot* prev, const Snapshot& now,
                                       const v1::Inventory& inventory, const Analysis* analysis,
                                       const std::vector<v1::Event>& events) {
  std::vector<v1::Event> out;
  const WallTime wall = now.wall;
  // The device's clock, as every report's period: a simulation or a replay run faster than real
  // time counts its own seconds.
  const Nanos dt = prev != nullptr ? now.device_time - prev->device_time : Nanos(0);
  const bool window = prev != nullptr && dt > Nanos(0) && prev->epoch == now.epoch &&
                      prev->error.empty() && now.error.empty();
  // A window is measured when both its ends are: a counter that starts being read is not growth.
  const auto measured = [&](Signal s) {
    return now.UnmeasuredReason(s).empty() &&
           (prev == nullptr || prev->UnmeasuredReason(s).empty());
  };
  const bool busy_measured = measured(Signal::kCoreActivity);
  const bool flops_measured = measured(Signal::kFlops);
  std::unordered_map<std::uint32_t, const v1::Process*> processes;
  processes.reserve(static_cast<std::size_t>(inventory.processes_size()));
  for (const v1::Process& p : inventory.processes()) processes.emplace(p.pid(), &p);
  double peak_per_core = 0;
  if (inventory.devices_size() > 0 && inventory.devices(0).core_count() > 0) {
    peak_per_core = inventory.devices(0).peak_flops().bf16() / inventory.devices(0).core_count();
  }
  std::vector<SampleTotals> totals(live_.size());
  const auto totals_of = [&](std::size_t index) -> SampleTotals& {
    if (totals.size() <= index) totals.resize(index + 1);
    return totals[index];
  };

  for (const RuntimeSample& r : now.runtimes) {
    auto pit = processes.find(r.pid);
    const v1::Process* process = pit != processes.end() ? pit->second : nullptr;
    const std::uint64_t ticks = process != nullptr ? process->start_time_ticks() : 0;
    // Processes that outlive their job's explicit stop are not a new job.
    if (auto s = stopped_.find(r.pid); s != stopped_.end() && s->second.first == ticks) continue;
    // A member of a live job stays in it (matched by pid and, when known, start time): the
    // processes it had at the previous sample, then those it lists.
    std::size_t index = live_.size();
    for (std::size_t i = 0; i < live_.size() && index == live_.size(); ++i) {
      if (auto p = live_[i].present.find(r.pid);
          p != live_[i].present.end() && (p->second == ticks || ticks == 0)) {
        index = i;
      }
    }
    for (std::size_t i = 0; i < live_.size() && index == live_.size(); ++i) {
      for (const v1::JobMember& m : live_[i].report.members()) {
        if (m.pid() == r.pid && (m.start_time_ticks() == ticks || ticks == 0)) {
          index = i;
          break;
        }
      }
    }
    if (index == live_.size()) {
      const v1::Attribution none;
      const v1::Attribution& attribution = process != nullptr ? process->attribution() : none;
      const JobIdentity id = IdentifyJob(attribution);
      // The uid is part of what a process claims: a claimed Slurm job, or a command line, joins
      // only the processes of the same user.
      const std::string uid =
          attribution.has_uid() ? std::to_string(attribution.uid()) : std::string("?");
      std::string key;
      if (!id.kind.empty()) {
        key = attribution.slurm_claimed() ? id.id + "@" + uid : id.id;
      } else {
        const std::string& command = process != nullptr ? process->command() : r.tag;
        key = "launch:" + uid + ":" + command.substr(0, kMaxCommandBytes);
      }
      for (std::size_t i = 0; i < live_.size(); ++i) {
        const bool launch = id.kind.empty();
        if (live_[i].key == key &&
            (!launch || wall - live_[i].first_seen <= options_.launch_window)) {
          index = i;
          break;
        }
      }
      if (index == live_.size()) {
        if (live_.size() >= options_.max_live) {
          ++untracked_;
          continue;
        }
        Live& l = Open(key, process, wall, false);
        l.report.set_id(id.kind.empty() ? "run-" + std::to_string(r.pid) : id.id);
        l.report.set_kind(id.kind.empty() ? "process" : id.kind);
        if (process == nullptr) l.report.set_command(r.tag.substr(0, kMaxCommandBytes));
        // A job running when the daemon started is learnt, not a change (as the other events'
        // subjects' first states).
        if (prev != nullptr) {
          v1::Event e = JobEventOf(l.report, now.seq, "started");
          e.set_summary("job " + l.report.id() + " started" +
                        (l.report.command().empty()
                             ? std::string()
                             : ": " + CutForMessage(l.report.command(), 120)));
          out.push_back(std::move(e));
        }
      }
      v1::JobReport& jr = live_[index].report;
      if (jr.member_count() == 0 && process != nullptr) {
        // A job opened by a mark learns its owner and command from its first process.
        jr.mutable_attribution()->MergeFrom(process->attribution());
        jr.set_command(process->command().substr(0, kMaxCommandBytes));
      }
      jr.set_member_count(jr.member_count() + 1);
      if (static_cast<std::size_t>(jr.members_size()) < kMaxMembers) {
        v1::JobMember* m = jr.add_members();
        m->set_pid(r.pid);
        m->set_tag(r.tag.substr(0, 128));
        m->set_start_time_ticks(ticks);
      }
      if (jr.kind() == "process" && jr.member_count() > 1) jr.set_kind("launch");
      dirty_ = true;
    }
    Live& job = live_[index];
    job.seen_now.emplace(r.pid, ticks);
    v1::JobReport& jr = job.report;
    jr.set_last_seen_unix_ns(ToUnixNanos(wall));
    SampleTotals& t = totals_of(index);
    ++t.ranks;
    for (std::uint32_t c : r.cores) InsertSorted(*jr.mutable_core_ids(), c);
    if (process != nullptr) {
      for (std::uint32_t d : process->device_indices())
        InsertSorted(*jr.mutable_device_indices(), d);
    }
    t.hbm += r.memory->device_unavailable.empty() ? r.memory->DeviceTotal() : 0;
    t.host += r.memory->host.Total();
    if (const v1::Finding* v = VerdictOf(analysis, r.pid)) {
      if (t.verdict == nullptr || VerdictRank(v->kind()) > VerdictRank(t.verdict->kind())) {
        t.verdict = v;
      }
    }
    const RuntimeSample* p = window ? FindRuntime(*prev, r.pid) : nullptr;
    if (p == nullptr) continue;
    t.accounted = true;
    const double seconds = Seconds(dt);
    t.held += static_cast<double>(r.cores.size()) * seconds;
    if (busy_measured) t.held_measured += static_cast<double>(r.cores.size()) * seconds;
    t.runtime_seconds += seconds;
    for (std::uint32_t c : r.cores) {
      if (c >= now.cores.size() || c >= prev->cores.size()) continue;
      const CoreCounters& a = prev->cores[c];
      const CoreCounters& b = now.cores[c];
      if (busy_measured && b.busy_ns >= a.busy_ns)
        t.busy += static_cast<double>(b.busy_ns - a.busy_ns) / 1e9;
      if (flops_measured && b.flops >= a.flops) t.flops += b.flops - a.flops;
      if (flops_measured && b.effective_flops >= a.effective_flops) {
        t.effective_flops += b.effective_flops - a.effective_flops;
      }
    }
    std::uint64_t collective_ns = 0;
    if (r.collective_time_ns && p->collective_time_ns) {
      collective_ns = *r.collective_time_ns >= *p->collective_time_ns
                          ? *r.collective_time_ns - *p->collective_time_ns
                          : 0;
    } else {
      for (std::size_t k = 0; k < r.collectives.size(); ++k) {
        const std::uint64_t b = r.collectives[k].busy_ns, a = p->collectives[k].busy_ns;
        collective_ns += b >= a ? b - a : 0;
      }
    }
    // In flight longer than the window only when operations overlap: a share stays within 1.
    t.collective_seconds += std::min(seconds, static_cast<double>(collective_ns) / 1e9);
    t.executions += r.executions.Minus(p->executions);
  }

  for (Live& l : live_) {
    l.present.swap(l.seen_now);
    l.seen_now.clear();
  }
  for (auto it = stopped_.begin(); it != stopped_.end();) {
    it = wall >= it->second.second ? stopped_.erase(it) : std::next(it);
  }
  const std::string unavailable = Unavailable(now);
  for (std::size_t i = 0; i < totals.size() && i < live_.size(); ++i) {
    const SampleTotals& t = totals[i];
    Live& job = live_[i];
    v1::JobReport& r = job.report;
    if (t.ranks == 0) continue;
    r.set_max_ranks(std::max(r.max_ranks(), t.ranks));
    r.set_hbm_peak_bytes(std::max(r.hbm_peak_bytes(), t.hbm));
    r.set_host_memory_peak_bytes(std::max(r.host_memory_peak_bytes(), t.host));
    if (!t.accounted) continue;
    r.set_samples(r.samples() + 1);
    r.set_accounted_seconds(r.accounted_seconds() + Seconds(dt));
    r.set_core_seconds_held(r.core_seconds_held() + t.held);
    r.set_core_seconds_held_measured(r.core_seconds_held_measured() + t.held_measured);
    r.set_core_seconds_busy(r.core_seconds_busy() + t.busy);
    r.set_flops(r.flops() + t.flops);
    r.set_effective_flops(r.effective_flops() + t.effective_flops);
    r.set_runtime_seconds(r.runtime_seconds() + t.runtime_seconds);
    r.set_collective_seconds(r.collective_seconds() + t.collective_seconds);
    if (peak_per_core > 0) r.set_peak_flops_per_core(peak_per_core);
    // What could not be measured at any time of the job, not only now.
    if (!unavailable.empty() && r.unavailable().find(unavailable) == std::string::npos &&
        r.unavailable().size() < 1024) {
      r.set_unavailable(r.unavailable().empty() ? unavailable
                                                : r.unavailable() + "; " + unavailable);
    }
    ExecutionCounters sum = wire::ExecutionSummariesFromProto(r.errors(), r.executions());
    sum += t.executions;
    wire::ExecutionSummariesToProto(sum, *r.mutable_errors(), *r.mutable_executions());
    if (t.held > 0 && busy_measured) {
      if (static_cast<std::size_t>(r.utilization_histogram_size()) != kHistogramBins) {
        r.mutable_utilization_histogram()->Resize(static_cast<int>(kHistogramBins), 0);
      }
      const auto bin =
          static_cast<int>(std::lround(std::clamp(100.0 * t.busy / t.held, 0.0, 100.0)));
      r.set_utilization_histogram(bin, r.utilization_histogram(bin) + 1);
      AddTrace(r, t.busy, t.held, dt);
    }
    if (t.verdict != nullptr) {
      const v1::FindingKind kind = t.verdict->kind();
      v1::VerdictTime* vt = nullptr;
      for (v1::VerdictTime& v : *r.mutable_verdicts()) {
        if (v.kind() == kind) vt = &v;
      }
      if (vt == nullptr) {
        vt = r.add_verdicts();
        vt->set_kind(kind);
        std::sort(
            r.mutable_verdicts()->begin(), r.mutable_verdicts()->end(),
            [](const v1::VerdictTime& a, const v1::VerdictTime& b) { return a.kind() < b.kind(); });
        for (v1::VerdictTime& v : *r.mutable_verdicts()) {
          if (v.kind() == kind) vt = &v;
        }
      }
      vt->set_seconds(vt->seconds() + Seconds(dt));
      // Windows without a verdict (the analyzer's first seconds, after a restart too) do not
      // split an episode.
      if (r.last_verdict() != kind) vt->set_episodes(vt->episodes() + 1);
      r.set_last_verdict(kind);
      const std::string subject = VerdictSubject(*t.verdict).substr(0, 128);
      if (!subject.empty()) {
        v1::SubjectTime* found = nullptr;
        for (v1::SubjectTime& s : *vt->mutable_subjects()) {
          if (s.subject() == subject) found = &s;
        }
        if (found == nullptr && static_cast<std::size_t>(vt->subjects_size()) < kMaxSubjects) {
          found = vt->add_subjects();
          found->set_subject(subject);
        }
        if (found != nullptr) found->set_seconds(found->seconds() + Seconds(dt));
        const auto top = std::max_element(vt->subjects().begin(), vt->subjects().end(),
                                          [](const v1::SubjectTime& a, const v1::SubjectTime& b) {
                                            return a.seconds() < b.seconds();
                                          });
        if (top != vt->subjects().end()) vt->set_subject(top->subject());
      }
    }
    Derive(r);
    dirty_ = true;
  }

  // Hardware and health events on a live job's devices are the job's too.
  for (const v1::Event& e : events) {
    if ((e.kind() != v1::EVENT_KIND_HARDWARE_ERROR && e.kind() != v1::EVENT_KIND_DEVICE_HEALTH) ||
        !e.subject().has_neuron_device_index()) {
      continue;
    }
    const std::uint32_t device = e.subject().neuron_device_index();
    for (Live& l : live_) {
      const auto& devices = l.report.device_indices();
      if (!std::binary_search(devices.begin(), devices.end(), device)) continue;
      v1::JobReport& r = l.report;
      r.set_hardware_event_count(r.hardware_event_count() + 1);
      if (static_cast<std::size_t>(r.events_size()) < kMaxJobEvents) {
        v1::JobEvent* je = r.add_events();
        je->set_unix_ns(e.unix_ns() != 0 ? e.unix_ns() : ToUnixNanos(wall));
        je->set_kind(EventKindName(e.kind()));
        je->set_neuron_device_index(device);
        je->set_summary(CutForMessage(e.summary(), 200));
      }
      dirty_ = true;
    }
  }

  // A job ends when its last process has been gone for the grace period (a job started by a
  // mark and not yet joined by any process waits for its stop).
  for (std::size_t i = live_.size(); i-- > 0;) {
    const v1::JobReport& r = live_[i].report;
    if (r.start_marked() && r.member_count() == 0) continue;
    if (ToUnixNanos(wall) - r.last_seen_unix_ns() >= options_.grace.count()) {
      Close(i, wall, false, out);
      out.back().set_sample_seq(now.seq);
    }
  }
  for (Live& l : live_) {
    l.report.set_wall_seconds(static_cast<double>(ToUnixNanos(wall) - l.report.start_unix_ns()) /
                              1e9);
  }
  Trim(wall);
  return out;
}

Status JobBook::Mark(const JobMark& mark, WallTime wall, std::vector<v1::Event>& out) {
  if (mark.job.empty() || mark.job.size() > kMaxIdBytes) {
    return Status::InvalidArgument("a job id of 1 to " + std::to_string(kMaxIdBytes) +
                                   " characters is needed");
  }
  // A job's id ("slurm-4242", "run-41200") or a Slurm job id ("4242", "4242_7"); never its
  // number, which could be another user's Slurm job id.
  const std::string slurm_id =
      mark.job.starts_with("slurm-") ? SafeId("", mark.job) : SafeId("slurm-", mark.job);
  // The user's own job of that id first (claimed ids may repeat), one with processes first (a
  // Prolog's mark may have opened an empty one); then any of that id, for the refusal below.
  std::size_t index = live_.size();
  for (int pass = 0; pass < 3 && index == live_.size(); ++pass) {
    for (std::size_t i = 0; i < live_.size() && index == live_.size(); ++i) {
      const v1::JobReport& r = live_[i].report;
      const bool theirs =
          !mark.uid || (r.attribution().has_uid() && r.attribution().uid() == *mark.uid);
      const bool wanted = pass == 0 ? theirs && r.member_count() > 0 : pass == 1 ? theirs : true;
      if ((r.id() == mark.job || r.id() == slurm_id) && wanted) index = i;
    }
  }
  if (index < live_.size() && mark.uid.has_value()) {
    const v1::Attribution& a = live_[index].report.attribution();
    if (!a.has_uid() || a.uid() != *mark.uid) {
      return Status::FailedPrecondition("job " + live_[index].report.id() +
                                        " is not yours: only root or its owner may mark it");
    }
  }
  if (mark.stop) {
    if (index == live_.size())
      return Status::NotFound("no live job " + CutForMessage(mark.job, 100));
    Close(index, wall, true, out);
    return Status::Ok();
  }
  if (index < live_.size()) {
    live_[index].report.set_start_marked(true);
    dirty_ = true;
    return Status::Ok();
  }
  if (mark.uid.has_value()) {
    return Status::FailedPrecondition("only root may start a job that has no processes yet");
  }
  if (live_.size() >= options_.max_live) {
    return Status::Unavailable("jobs.max_live (" + std::to_string(options_.max_live) +
                               ") jobs are live");
  }
  Live& l = Open(slurm_id, nullptr, wall, true);
  l.report.set_id(slurm_id);
  l.report.set_kind("slurm");
  l.report.mutable_attribution()->set_slurm_job_id(slurm_id.substr(6));
  v1::Event e = JobEventOf(l.report, 0, "started");
  e.set_summary("job " + slurm_id + " started (marked)");
  out.push_back(std::move(e));
  return Status::Ok();
}

void JobBook::Fill(google::protobuf::RepeatedPtrField<v1::JobReport>& out) const {
  out.Reserve(static_cast<int>(live_.size() + finished_.size()));
  for (const Live& l : live_) *out.Add() = l.report;
  for (const v1::JobReport& r : finished_) *out.Add() = r;
}

std::string JobBook::Serialize() const {
  v1::JobArchive archive;
  archive.set_next_number(next_number_);
  Fill(*archive.mutable_jobs());
  return archive.SerializeAsString();
}

Status JobBook::Restore(const std::string& bytes, WallTime now) {
  v1::JobArchive archive;
  if (!archive.ParseFromString(bytes)) return Status::InvalidArgument("not a job archive");
  live_.clear();
  finished_.clear();
  stopped_.clear();
  next_number_ = std::max<std::uint64_t>(archive.next_number(), 1);
  for (v1::JobReport& r : *archive.mutable_jobs()) {
    if (r.id().empty() || r.id().size() > kMaxIdBytes + 16) continue;
    if (r.number() >= next_number_) next_number_ = r.number() + 1;
    // Arrays the accounting indexes must be whole: a damaged file loses them, not the daemon.
    if (r.trace_busy_size() != r.trace_held_size() ||
        static_cast<std::size_t>(r.trace_busy_size()) > kTracePoints) {
      r.clear_trace_busy();
      r.clear_trace_held();
      r.clear_trace_span_ns();
      r.clear_trace_tail_ns();
    }
    if (r.utilization_histogram_size() != 0 &&
        static_cast<std::size_t>(r.utilization_histogram_size()) != kHistogramBins) {
      r.clear_utilization_histogram();
    }
    if (r.live() && live_.size() < options_.max_live) {
      Live l;
      l.first_seen = FromUnixNanos(r.start_unix_ns());
      const v1::Attribution& a = r.attribution();
      const std::string uid = a.has_uid() ? std::to_string(a.uid()) : std::string("?");
      l.key = r.kind() == "process" || r.kind() == "launch" ? "launch:" + uid + ":" + r.command()
              : a.slurm_claimed()                           ? r.id() + "@" + uid
                                                            : r.id();
      for (const v1::JobMember& m : r.members()) l.present.emplace(m.pid(), m.start_time_ticks());
      l.report = std::move(r);
      live_.push_back(std::move(l));
    } else if (!r.live()) {
      // A job stopped by a mark keeps its processes nobody's for the rest of the grace period,
      // across a restart too.
      const WallTime until = FromUnixNanos(r.end_unix_ns()) + options_.grace;
      if (r.stop_marked() && until > now) {
        for (const v1::JobMember& m : r.members())
          stopped_[m.pid()] = {m.start_time_ticks(), until};
      }
      finished_.push_back(std::move(r));
    }
  }
  std::sort(finished_.begin(), finished_.end(), [](const v1::JobReport& a, const v1::JobReport& b) {
    return a.end_unix_ns() > b.end_unix_ns();
  });
  Trim(now);
  dirty_ = false;
  return Status::Ok();
}

}  // namespace neuronmon::daemon
