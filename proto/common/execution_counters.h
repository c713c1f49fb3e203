// ExecutionCounters: a runtime's executions by outcome and its errors by category, cumulative, as
// neuron-monitor names them — and the field table every layer iterates: Minus, += and Failed()
// here, the archive's ExecutionSample and the reports' ExecutionSummary and ErrorSummary
// (proto/wire/field_codec.h, by the row's name), neuron-monitor's execution_summary and
// error_summary (what neurondev reads from AWS's tool and what neuron-monitor prints), and
// /metrics' execution_status_total and execution_errors_total. A counter is a member, a row, and a
// field of the row's name in those messages (a test holds them to the table). Plain values;
// thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace neuronmon {

struct ExecutionCounters {
  std::uint64_t completed = 0;
  std::uint64_t completed_with_err = 0;
  std::uint64_t completed_with_num_err = 0;
  std::uint64_t timed_out = 0;
  std::uint64_t incorrect_input = 0;
  std::uint64_t failed_to_queue = 0;
  std::uint64_t generic = 0;
  std::uint64_t numerical = 0;
  std::uint64_t transient = 0;
  std::uint64_t model = 0;
  std::uint64_t runtime = 0;
  std::uint64_t hardware = 0;
  // What each counter grew by since `earlier`; one that went backwards restarted, and counts its
  // own value (as LatencyHistogram::Minus).
  ExecutionCounters Minus(const ExecutionCounters& earlier) const;
  ExecutionCounters& operator+=(const ExecutionCounters& more);
  // Executions that failed, and hardware errors: what the analyzer calls failed executions.
  std::uint64_t Failed() const;
  bool operator==(const ExecutionCounters&) const = default;
};

// The summary a counter is reported in.
enum class ExecutionPart : std::uint8_t {
  kOutcome,  // execution_summary (status_type): how executions ended
  kError,    // error_summary (error_type): errors by category
};

struct ExecutionField {
  // neuron-monitor's key; the field of v1.ExecutionSample and of v1.ExecutionSummary or
  // v1.ErrorSummary; the label value on /metrics.
  std::string_view name;
  std::uint64_t ExecutionCounters::*member;
  ExecutionPart part;
  bool failed = false;  // counted by Failed()
};

// In neuron-monitor's order, which is the messages' order.
inline constexpr std::array<ExecutionField, 12> kExecutionFields = {{
    {"completed", &ExecutionCounters::completed, ExecutionPart::kOutcome},
    {"completed_with_err", &ExecutionCounters::completed_with_err, ExecutionPart::kOutcome, true},
    {"completed_with_num_err", &ExecutionCounters::completed_with_num_err, ExecutionPart::kOutcome,
     true},
    {"timed_out", &ExecutionCounters::timed_out, ExecutionPart::kOutcome, true},
    {"incorrect_input", &ExecutionCounters::incorrect_input, ExecutionPart::kOutcome, true},
    {"failed_to_queue", &ExecutionCounters::failed_to_queue, ExecutionPart::kOutcome, true},
    {"generic", &ExecutionCounters::generic, ExecutionPart::kError},
    {"numerical", &ExecutionCounters::numerical, ExecutionPart::kError},
    {"transient", &ExecutionCounters::transient, ExecutionPart::kError},
    {"model", &ExecutionCounters::model, ExecutionPart::kError},
    {"runtime", &ExecutionCounters::runtime, ExecutionPart::kError},
    {"hardware", &ExecutionCounters::hardware, ExecutionPart::kError, true},
}};

// Every member has a row: a counter added to the struct without one does not compile.
static_assert(sizeof(ExecutionCounters) == kExecutionFields.size() * sizeof(std::uint64_t));

}  // namespace neuronmon
