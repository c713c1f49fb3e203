#include "daemon/core/events.h"

#include <utility>

#include "proto/names/names.h"

namespace neuronmon::daemon {
namespace {

v1::Event Make(v1::EventKind kind, std::uint64_t sample_seq) {
  v1::Event e;
  e.set_kind(kind);
  e.set_sample_seq(sample_seq);
  return e;
}

// The verdict a finding list names: its first finding's kind (the analyzer's verdict).
v1::FindingKind VerdictOf(const std::vector<v1::Finding>& findings) {
  return findings.empty() ? v1::FINDING_KIND_UNSPECIFIED : findings.front().kind();
}

void AddVerdict(std::vector<v1::Event>& out, std::uint64_t seq, v1::FindingKind before,
                const v1::Finding& now, const RuntimeSample* runtime) {
  v1::Event e = Make(v1::EVENT_KIND_VERDICT, seq);
  if (runtime != nullptr) {
    e.mutable_subject()->set_pid(runtime->pid);
    e.mutable_subject()->set_runtime_tag(runtime->tag);
  } else {
    e.mutable_subject()->set_instance(true);
  }
  e.set_before(before == v1::FINDING_KIND_UNSPECIFIED ? "" : FindingKindName(before));
  e.set_after(FindingKindName(now.kind()));
  e.set_summary(now.summary());
  *e.mutable_evidence() = now.evidence();
  out.push_back(std::move(e));
}

}  // namespace

EventLog::EventLog(EventLogOptions options) : options_(options) {}

const v1::Event& EventLog::Add(v1::Event event, MonoTime mono, WallTime wall) {
  event.set_seq(next_seq_++);
  event.set_unix_ns(ToUnixNanos(wall));
  events_.push_back(std::move(event));
  added_.push_back(mono);
  while (events_.size() > std::max<std::size_t>(1, options_.max_events)) {
    events_.pop_front();
    added_.pop_front();
  }
  return events_.back();
}

void EventLog::Expire(MonoTime now) {
  while (!events_.empty() && now - added_.front() > options_.retention) {
    events_.pop_front();
    added_.pop_front();
  }
}

std::vector<const v1::Event*> EventLog::After(std::uint64_t after, std::size_t limit) const {
  std::vector<const v1::Event*> out;
  // Seqs are consecutive: the first one after `after` is at a known place.
  const std::uint64_t first = events_.empty() ? 0 : events_.front().seq();
  std::size_t i = after + 1 > first ? static_cast<std::size_t>(after + 1 - first) : 0;
  for (; i < events_.size() && out.size() < limit; ++i) out.push_back(&events_[i]);
  return out;
}

std::vector<v1::Event> EventDetector::Detect(const Snapshot& end, const Analysis& analysis) {
  std::vector<v1::Event> out;
  // Verdicts: each runtime's, then the instance's.
  std::map<std::uint32_t, v1::FindingKind> verdicts;
  for (const RuntimeSample& r : end.runtimes) {
    const auto it = analysis.runtimes.find(r.pid);
    if (it == analysis.runtimes.end() || it->second.empty()) continue;
    const v1::FindingKind now = VerdictOf(it->second);
    verdicts[r.pid] = now;
    const auto before = verdicts_.find(r.pid);
    if (before != verdicts_.end() && now != before->second) {
      AddVerdict(out, end.seq, before->second, it->second.front(), &r);
    }
  }
  verdicts_ = std::move(verdicts);
  const v1::FindingKind instance = analysis.instance.kind();
  if (instance_ != v1::FINDING_KIND_UNSPECIFIED && instance != v1::FINDING_KIND_UNSPECIFIED &&
      instance != instance_) {
    AddVerdict(out, end.seq, instance_, analysis.instance, nullptr);
  }
  if (instance != v1::FINDING_KIND_UNSPECIFIED) instance_ = instance;
  // Device health states.
  if (!analysis.devices.empty()) {
    std::vector<v1::HealthState> health(analysis.devices.size(), v1::HEALTH_STATE_UNSPECIFIED);
    for (std::size_t d = 0; d < analysis.devices.size(); ++d) {
      const v1::DeviceHealth& h = analysis.devices[d];
      health[d] = h.state();
      const v1::HealthState was = d < health_.size() ? health_[d] : v1::HEALTH_STATE_UNSPECIFIED;
      if (was == v1::HEALTH_STATE_UNSPECIFIED || h.state() == v1::HEALTH_STATE_UNSPECIFIED ||
          was == h.state()) {
        continue;
      }
      v1::Event e = Make(v1::EVENT_KIND_DEVICE_HEALTH, end.seq);
      e.mutable_subject()->set_neuron_device_index(h.neuron_device_index());
      e.set_before(HealthStateName(was));
      e.set_after(HealthStateName(h.state()));
      e.set_summary("ND" + std::to_string(h.neuron_device_index()) + " " + e.after() +
                    (h.reasons().empty() ? "" : ": " + h.reasons(0).text()));
      *e.mutable_reasons() = h.reasons();
      out.push_back(std::move(e));
    }
    health_ = std::move(health);
  }
  // Hardware error counters: their growth within one counter epoch (a reset restarts them), told
  // at most once a kHardwareErrorEvery per device.
  if (!errors_seen_ || end.epoch != epoch_ || errors_.size() != end.devices.size()) {
    errors_.assign(end.devices.size(), {});
    for (std::size_t d = 0; d < end.devices.size(); ++d) {
      errors_[d].told = end.devices[d].errors;
      errors_[d].told_at = end.mono;
    }
    errors_seen_ = true;
    epoch_ = end.epoch;
    return out;
  }
  for (std::size_t d = 0; d < end.devices.size(); ++d) {
    DeviceErrors& state = errors_[d];
    if (!end.devices[d].present) continue;
    if (state.told_once && end.mono - state.told_at < kHardwareErrorEvery) continue;
    const HardwareErrors& now = end.devices[d].errors;
    v1::Event e = Make(v1::EVENT_KIND_HARDWARE_ERROR, end.seq);
    std::uint64_t total = 0;
    std::string names;
    for (const HardwareErrorField& f : kHardwareErrorFields) {
      const std::uint64_t is = now.*f.member, was = state.told.*f.member;
      if (is <= was) continue;
      AddEvidence(e, f.name, static_cast<double>(is - was), "count");
      total += is - was;
      names += (names.empty() ? "" : ", ") + std::string(f.name);
    }
    if (total == 0) continue;
    e.mutable_subject()->set_neuron_device_index(static_cast<std::uint32_t>(d));
    e.set_after(names);
    e.set_summary("ND" + std::to_string(d) + ": " + std::to_string(total) + " new hardware error" +
                  (total == 1 ? "" : "s") + " (" + names + ")");
    out.push_back(std::move(e));
    state = {now, end.mono, true};
  }
  return out;
}

namespace {

// An event about the instance, seen at no sample: the daemon's own, a saved incident.
v1::Event InstanceEvent(v1::EventKind kind, const std::string& after, const std::string& summary) {
  v1::Event e = Make(kind, 0);
  e.mutable_subject()->set_instance(true);
  e.set_after(after);
  e.set_summary(summary);
  return e;
}

}  // namespace

v1::Event DaemonEvent(const std::string& state, const std::string& summary) {
  return InstanceEvent(v1::EVENT_KIND_DAEMON, state, summary);
}

v1::Event IncidentEvent(const std::string& path, const std::string& summary) {
  return InstanceEvent(v1::EVENT_KIND_INCIDENT, path, summary);
}

}  // namespace neuronmon::daemon
