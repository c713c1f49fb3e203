// The Analyzer's hysteresis (docs/diagnosis.md, "Hysteresis"): its members VoteLimit,
// ChangeIsDue, Decide and Forget (analyzer.h), which turn a runtime's candidate verdicts into its
// verdict.
#include <algorithm>
#include <string>

#include "daemon/core/analysis/analyzer.h"
#include "daemon/core/analysis/rules.h"

namespace neuronmon::daemon {
namespace {

using analysis_internal::Advice;
using analysis_internal::SeverityOf;

// Votes for `kind` among `votes`.
auto VotesFor(const std::deque<int>& votes, int kind) {
  return std::count(votes.begin(), votes.end(), kind);
}

// Makes `candidate` the verdict; it keeps its start when it is of the same kind.
void Adopt(v1::Finding& verdict, const v1::Finding& candidate, std::int64_t now_ns) {
  const bool same = verdict.kind() == candidate.kind();
  const std::int64_t since = same ? verdict.since_unix_ns() : now_ns;
  verdict = candidate;
  verdict.set_since_unix_ns(since);
}

}  // namespace

std::uint32_t Analyzer::VoteLimit(Nanos period) const {
  return static_cast<std::uint32_t>(
      std::max<std::int64_t>(3, thresholds_.memory / std::max(Nanos(1), period)));
}

bool Analyzer::ChangeIsDue(const Track& track, const v1::Finding& candidate, std::uint32_t limit,
                           const std::function<bool(v1::FindingKind)>& confirms) const {
  const bool have = track.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED;
  // A first verdict needs a few agreeing evaluations; a change needs most of the remembered ones.
  double needed = have ? thresholds_.majority * limit : std::min<double>(limit, 3);
  const bool straggler_change = candidate.kind() == v1::FINDING_KIND_STRAGGLER ||
                                (have && track.verdict.kind() == v1::FINDING_KIND_STRAGGLER &&
                                 candidate.kind() == v1::FINDING_KIND_HEALTHY) ||
                                (have && track.verdict.kind() == v1::FINDING_KIND_HANG);
  if (straggler_change) needed = std::min<double>(needed, thresholds_.straggler_votes);
  // The fast way: the last few candidates agree, and the newest metrics alone bear them out.
  std::size_t run = 0;
  for (auto it = track.votes.rbegin(); it != track.votes.rend() && *it == candidate.kind(); ++it)
    ++run;
  const std::uint32_t votes = candidate.kind() == v1::FINDING_KIND_HEALTHY
                                  ? thresholds_.healthy_votes
                                  : thresholds_.fast_votes;
  const bool fast = have && !straggler_change && run >= votes && confirms(candidate.kind());
  return !(static_cast<double>(VotesFor(track.votes, candidate.kind())) < needed && !fast);
}

void Analyzer::Decide(Track& track, const v1::Finding& candidate, bool waited, std::int64_t now_ns,
                      Nanos period, const std::function<bool(v1::FindingKind)>& confirms) {
  const std::uint32_t limit = VoteLimit(period);
  track.votes.push_back(candidate.kind());
  while (track.votes.size() > limit) track.votes.pop_front();
  const bool have = track.verdict.kind() != v1::FINDING_KIND_UNSPECIFIED;
  if (waited) {
    Adopt(track.verdict, candidate, now_ns);
  } else if (candidate.kind() == v1::FINDING_KIND_ERRORS) {
    track.last_error_ns = now_ns;
    Adopt(track.verdict, candidate, now_ns);
  } else if (have && track.verdict.kind() == v1::FINDING_KIND_ERRORS) {
    if (now_ns - track.last_error_ns < thresholds_.errors_clear.count()) return;
    if (candidate.kind() != v1::FINDING_KIND_UNSPECIFIED) Adopt(track.verdict, candidate, now_ns);
  } else if (candidate.kind() == v1::FINDING_KIND_UNSPECIFIED) {
    return;
  } else if (have && candidate.kind() == track.verdict.kind()) {
    Adopt(track.verdict, candidate, now_ns);  // fresh evidence for the same verdict
  } else {
    if (!ChangeIsDue(track, candidate, limit, confirms)) return;
    Adopt(track.verdict, candidate, now_ns);
    // A new verdict starts the count afresh: going back takes as many votes as coming.
    std::erase_if(track.votes, [&](int k) { return k != candidate.kind(); });
  }
  track.verdict.set_severity(SeverityOf(track.verdict.kind()));
  track.verdict.set_advice(Advice(track.verdict.kind()));
  track.verdict.set_confidence(static_cast<double>(VotesFor(track.votes, track.verdict.kind())) /
                               static_cast<double>(track.votes.size()));
}

void Analyzer::Forget(Track& track, std::int64_t now_ns) const {
  // An errors verdict stands its time; any other rested on signals no longer measured.
  const bool errors = track.verdict.kind() == v1::FINDING_KIND_ERRORS &&
                      now_ns - track.last_error_ns < thresholds_.errors_clear.count();
  if (!errors) {
    track.votes.clear();
    track.verdict = v1::Finding{};
  }
}

}  // namespace neuronmon::daemon
