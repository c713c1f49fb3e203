#include "proto/common/execution_counters.h"

#include <gtest/gtest.h>

#include <string>

#include "neuronmon/v1/archive.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/wire/field_codec.h"

namespace neuronmon {
namespace {

// The names of `d`'s fields, in order.
std::vector<std::string> FieldNames(const google::protobuf::Descriptor* d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i) names.push_back(d->field(i)->name());
  return names;
}

std::vector<std::string> RowNames(bool outcomes, bool errors) {
  std::vector<std::string> names;
  for (const ExecutionField& f : kExecutionFields) {
    const bool outcome = f.part == ExecutionPart::kOutcome;
    if ((outcome && outcomes) || (!outcome && errors)) names.emplace_back(f.name);
  }
  return names;
}

// The table is the messages: the archive's sample has every row, the report's two summaries the
// rows of their part — so a counter added to one and not the others fails here.
TEST(ExecutionFields, AreTheFieldsOfTheMessages) {
  EXPECT_EQ(FieldNames(v1::ExecutionSample::descriptor()), RowNames(true, true));
  EXPECT_EQ(FieldNames(v1::ExecutionSummary::descriptor()), RowNames(true, false));
  EXPECT_EQ(FieldNames(v1::ErrorSummary::descriptor()), RowNames(false, true));
  for (const ExecutionField& f : kExecutionFields) {
    int rows = 0;  // member pointers have no order: count the rows naming this one
    for (const ExecutionField& g : kExecutionFields) rows += g.member == f.member ? 1 : 0;
    EXPECT_EQ(rows, 1) << f.name;
  }
}

TEST(ExecutionFields, RoundTripThroughTheMessages) {
  ExecutionCounters e;
  std::uint64_t n = 1;
  for (const ExecutionField& f : kExecutionFields) e.*f.member = n++;
  v1::ExecutionSample sample;
  wire::ExecutionsToProto(e, sample);
  EXPECT_EQ(sample.hardware(), 12u);
  EXPECT_EQ(wire::ExecutionsFromProto(sample), e);
  v1::ErrorSummary errors;
  v1::ExecutionSummary outcomes;
  wire::ExecutionSummariesToProto(e, errors, outcomes);
  EXPECT_EQ(outcomes.completed(), 1u);
  EXPECT_EQ(errors.generic(), 7u);
  EXPECT_EQ(wire::ExecutionSummariesFromProto(errors, outcomes), e);
}

TEST(ExecutionFields, FailedCountsTheFailedOutcomesAndHardwareErrors) {
  ExecutionCounters e;
  for (const ExecutionField& f : kExecutionFields) e.*f.member = 1;
  EXPECT_EQ(e.Failed(), 6u);  // completed_with_err .. failed_to_queue, and hardware
  ExecutionCounters sum = e;
  sum += e;
  EXPECT_EQ(sum.Minus(e), e);
  EXPECT_EQ(e.Minus(sum).completed, 1u);  // went backwards: restarted
}

}  // namespace
}  // namespace neuronmon
