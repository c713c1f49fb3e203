// The lower-case names of protocol enums as every output spells them — JSON (neuron-monitor's
// bottleneck_analysis and collectives_stats), Prometheus labels and neuron-top's screen:
// "input_bound", "warning", "all_reduce". Values this build does not know are "unspecified".
// Pure; thread-safe.
#pragma once

#include "neuronmon/v1/report.pb.h"

namespace neuronmon {

const char* FindingKindName(v1::FindingKind kind);
const char* SeverityName(v1::Severity severity);
const char* CollectiveOpName(v1::CollectiveOp op);

}  // namespace neuronmon
