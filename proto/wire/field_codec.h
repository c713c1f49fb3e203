// Counter structs to and from their protobuf messages through their field tables: each row's
// `name` is the message's field, found once by reflection, so a counter added to a table needs
// no line here. A row whose name the message lacks is a programming error, caught at the first
// use (it aborts, naming both) and by the field-table tests. Thread-safe.
#pragma once

#include "neuronmon/v1/archive.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/common/execution_counters.h"
#include "proto/common/hardware_errors.h"

namespace neuronmon::wire {

void HardwareErrorsToProto(const HardwareErrors& errors, v1::HardwareErrorCounts& out);
HardwareErrors HardwareErrorsFromProto(const v1::HardwareErrorCounts& counts);

// Every counter (the archive's ExecutionSample).
void ExecutionsToProto(const ExecutionCounters& executions, v1::ExecutionSample& out);
ExecutionCounters ExecutionsFromProto(const v1::ExecutionSample& sample);

// The report's two summaries: the outcomes and the error categories.
void ExecutionSummariesToProto(const ExecutionCounters& executions, v1::ErrorSummary& errors,
                               v1::ExecutionSummary& outcomes);
ExecutionCounters ExecutionSummariesFromProto(const v1::ErrorSummary& errors,
                                              const v1::ExecutionSummary& outcomes);

}  // namespace neuronmon::wire
