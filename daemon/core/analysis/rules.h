// Internals of the Analyzer (analyzer.h): the rules that give one runtime's window its candidate
// verdict (docs/diagnosis.md, "How a verdict is reached", rules 1 to 7 — the hang rule, 0, is
// hangs.h's), the straggler detection they consult, and each verdict's severity and advice. A
// rule never reads an unmeasured signal's 0. Not part of the daemon's API. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/analysis/analysis.h"
#include "daemon/core/analysis/runtime_metrics.h"

namespace neuronmon::daemon::analysis_internal {

// The candidate verdict for one runtime and window — the first rule that applies — and in
// `lacking` the signals the rules it went through could not read ("signals unavailable: ...";
// empty: none); a verdict reached without one says so at the end of its summary. `straggler`:
// the slow device Stragglers named for this runtime ("": none). Kind UNSPECIFIED: no verdict —
// the model is loading (`lacking` untouched), or no rule could decide for want of signals.
v1::Finding Classify(const RuntimeMetrics& m, const AnalyzerThresholds& t,
                     const std::string& straggler, std::string* lacking);

// Straggler detection: in each job (processes sharing a command line) with at least three
// members using collectives, one member much busier than the median while the others spend a
// large share in collectives; within one runtime over several devices, one device much busier.
// Returns, by pid, the slow devices ("nd3" or "nd3,nd4") every member of such a job is told.
std::map<std::uint32_t, std::string> Stragglers(const std::vector<RuntimeMetrics>& all,
                                                const AnalyzerThresholds& t);

// What to do about a verdict of `kind` ("" for healthy and unknown kinds).
const char* Advice(v1::FindingKind kind);
// info for healthy, critical for errors and hang, else warning.
v1::Severity SeverityOf(v1::FindingKind kind);

}  // namespace neuronmon::daemon::analysis_internal
