#include "daemon/core/analysis/summary.h"

#include "daemon/core/analysis/rules.h"
#include "daemon/core/analysis/runtime_metrics.h"

namespace neuronmon::daemon::analysis_internal {
namespace {

// The findings shown, counted by kind, and the one that names the instance.
struct Tally {
  std::map<int, int> counts;
  const v1::Finding* worst = nullptr;  // into the Analysis tallied
  int shown = 0;

  int Count(v1::FindingKind kind) const {
    const auto it = counts.find(kind);
    return it == counts.end() ? 0 : it->second;
  }
};

// Whether `f` names the instance rather than `worst` (null: none yet). A hang outranks
// everything, and its finding that names the stuck rank the others; else the more severe, and a
// straggler or memory pressure any other warning.
bool Outranks(const v1::Finding& f, const v1::Finding* worst) {
  const bool straggler = f.kind() == v1::FINDING_KIND_STRAGGLER && worst != nullptr &&
                         worst->kind() != v1::FINDING_KIND_MEMORY_PRESSURE;
  const bool pressure = f.kind() == v1::FINDING_KIND_MEMORY_PRESSURE && worst != nullptr &&
                        worst->kind() != v1::FINDING_KIND_MEMORY_PRESSURE;
  const bool hang = f.kind() == v1::FINDING_KIND_HANG;
  return worst == nullptr ||
         (hang ? worst->kind() != v1::FINDING_KIND_HANG ||
                     (f.straggler() == f.subject() && worst->straggler() != worst->subject())
               : worst->kind() != v1::FINDING_KIND_HANG &&
                     (f.severity() > worst->severity() ||
                      ((straggler || pressure) && worst->kind() != v1::FINDING_KIND_ERRORS)));
}

Tally TallyOf(const Analysis& a) {
  Tally t;
  for (const auto& [pid, findings] : a.runtimes) {
    for (const v1::Finding& f : findings) {
      ++t.shown;
      ++t.counts[f.kind()];
      if (Outranks(f, t.worst)) t.worst = &f;
    }
  }
  return t;
}

// Errors, stragglers, hangs and memory pressure name one culprit.
bool NamesCulprit(v1::FindingKind kind) {
  return kind == v1::FINDING_KIND_ERRORS || kind == v1::FINDING_KIND_STRAGGLER ||
         kind == v1::FINDING_KIND_HANG || kind == v1::FINDING_KIND_MEMORY_PRESSURE;
}

// The culprit's kind; otherwise the kind at least half of the applications share, else healthy.
v1::FindingKind InstanceKind(const Tally& t) {
  if (NamesCulprit(t.worst->kind())) return t.worst->kind();
  v1::FindingKind kind = v1::FINDING_KIND_HEALTHY;
  int best = 0;
  for (const auto& [k, n] : t.counts) {
    if (k != v1::FINDING_KIND_HEALTHY && n > best && 2 * n >= t.shown)
      best = n, kind = static_cast<v1::FindingKind>(k);
  }
  return kind;
}

// "no verdict for 2 applications: signals unavailable: collectives (...)"; empty when every
// application could be judged.
std::string Unjudged(const Gaps& gaps) {
  if (gaps.undetermined.empty()) return "";
  std::set<std::string> lacking;
  for (const auto& [pid, text] : gaps.undetermined) lacking.insert(text);
  std::string out = "no verdict for " + std::to_string(gaps.undetermined.size()) +
                    (gaps.undetermined.size() == 1 ? " application: " : " applications: ");
  for (auto it = lacking.begin(); it != lacking.end(); ++it)
    out += (it == lacking.begin() ? "" : "; ") + *it;
  return out;
}

std::string Joined(std::string text, const std::string& more) {
  return more.empty() ? text : text.empty() ? more : text + "; " + more;
}

// "3 of 4 applications: <the culprit's summary>", or how many are healthy and what the healthy
// ones were judged without (their own summaries are not shown).
std::string SummaryText(v1::FindingKind kind, const Tally& t, const Gaps& gaps) {
  if (kind != v1::FINDING_KIND_HEALTHY)
    return Fmt("%.0f of %.0f applications: ", t.Count(kind), t.shown) + t.worst->summary();
  std::string summary =
      Fmt("%.0f of %.0f applications healthy", t.Count(v1::FINDING_KIND_HEALTHY), t.shown);
  for (const std::string& lacking : gaps.lacking) summary = Joined(summary, lacking);
  return summary;
}

// Nothing judged yet: says why.
v1::Finding& NothingShown(v1::Finding& s, bool any_runtime, const std::string& unjudged) {
  s.set_kind(v1::FINDING_KIND_HEALTHY);
  s.set_severity(v1::SEVERITY_INFO);
  s.set_summary(!unjudged.empty() ? unjudged
                : any_runtime     ? "collecting data"
                                  : "no Neuron application is running");
  s.set_confidence(unjudged.empty() ? 1 : 0);
  return s;
}

// The first failed device; null when none is. (A degraded device keeps working: the instance
// may still read healthy above it; docs/health.md.)
const v1::DeviceHealth* FailedDevice(const std::vector<v1::DeviceHealth>& devices) {
  for (const v1::DeviceHealth& d : devices) {
    if (d.state() == v1::HEALTH_STATE_FAILED) return &d;
  }
  return nullptr;
}

// A healthy-looking instance over a failed device reads as the device: "ND1 failed: 2
// uncorrectable HBM errors ...; 3 of 3 applications healthy".
void FloorAtDeviceHealth(v1::Finding& s, const v1::DeviceHealth& d) {
  std::string text = "ND" + std::to_string(d.neuron_device_index()) + " failed";
  if (d.reasons_size() > 0) text += ": " + d.reasons(0).text();
  s.set_kind(v1::FINDING_KIND_ERRORS);
  s.set_severity(v1::SEVERITY_CRITICAL);
  s.set_confidence(1);
  s.set_summary(Joined(text, s.summary()));
  s.set_advice(d.advice());
}

}  // namespace

v1::Finding Summarize(const Analysis& a, bool any_runtime, std::int64_t now_ns, const Gaps& gaps,
                      const std::vector<v1::DeviceHealth>& devices) {
  v1::Finding s = SummarizeApplications(a, any_runtime, now_ns, gaps);
  const v1::DeviceHealth* device = FailedDevice(devices);
  if (device != nullptr && s.kind() == v1::FINDING_KIND_HEALTHY) FloorAtDeviceHealth(s, *device);
  return s;
}

v1::Finding SummarizeApplications(const Analysis& a, bool any_runtime, std::int64_t now_ns,
                                  const Gaps& gaps) {
  v1::Finding s;
  s.set_subject("instance");
  s.set_since_unix_ns(now_ns);
  const Tally tally = TallyOf(a);
  const std::string unjudged = Unjudged(gaps);
  if (tally.shown == 0) return NothingShown(s, any_runtime, unjudged);
  const v1::FindingKind kind = InstanceKind(tally);
  if (NamesCulprit(tally.worst->kind())) {
    s.set_straggler(tally.worst->straggler());
    if (tally.worst->has_hang()) *s.mutable_hang() = tally.worst->hang();
  }
  s.set_kind(kind);
  s.set_severity(SeverityOf(kind));
  s.set_confidence(static_cast<double>(tally.Count(kind)) / tally.shown);
  s.set_summary(Joined(SummaryText(kind, tally, gaps), unjudged));
  s.set_advice(Advice(kind));
  for (const v1::Evidence& e : tally.worst->evidence()) *s.add_evidence() = e;
  return s;
}

}  // namespace neuronmon::daemon::analysis_internal
