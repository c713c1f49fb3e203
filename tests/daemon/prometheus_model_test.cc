// The new families of BuildMetrics and its helpers with literal inputs: the collective latency
// histogram's `le` buckets, findings, the daemon's own metrics, the rate window and the
// sampling-health check.
#include <gtest/gtest.h>

#include <cmath>

#include "daemon/core/metrics/exposition_text.h"
#include "daemon/core/metrics/openmetrics.h"
#include "daemon/core/metrics/prometheus.h"
#include "tests/daemon/prometheus_fixture.h"

namespace neuronmon::daemon {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Family;
using testing::LabelOf;
using testing::SimCore;
using testing::Value;

TEST(CollectiveHistogram, OctaveBucketsFrom1usTo16s) {
  const std::vector<double> bounds = CollectiveLatencyBounds();
  ASSERT_EQ(bounds.size(), 25u);
  EXPECT_EQ(bounds.front(), 1e-6);
  EXPECT_EQ(bounds[10], 1.024e-3);
  EXPECT_EQ(FormatTextFloat(bounds.back()), "16.777216");
}

TEST(CollectiveHistogram, CumulativeCountsAtEveryBound) {
  LatencyHistogram h;
  h.Add(0.5e-6);   // below 1 us: the lowest bucket, which ends at 1.09 us
  h.Add(1.5e-6);   // (1, 2] us
  h.Add(3e-6, 2);  // (2, 4] us
  h.Add(1.0e-3);   // (512, 1024] us
  h.Add(60.0);     // above the top: only +Inf may claim it
  const HistogramValue p = ToPrometheusHistogram(h, CollectiveLatencyBounds());
  ASSERT_EQ(p.buckets.size(), 26u);
  EXPECT_EQ(p.buckets[0].cumulative_count, 0u) << "le=1e-6 cannot claim the sub-1us bucket";
  EXPECT_EQ(p.buckets[1].cumulative_count, 2u) << "le=2e-6";
  EXPECT_EQ(p.buckets[2].cumulative_count, 4u) << "le=4e-6";
  EXPECT_EQ(p.buckets[9].cumulative_count, 4u) << "le=5.12e-4";
  EXPECT_EQ(p.buckets[10].cumulative_count, 5u) << "le=1.024e-3";
  EXPECT_EQ(p.buckets[24].cumulative_count, 5u) << "le=16.777216";
  EXPECT_TRUE(std::isinf(p.buckets[25].upper_bound));
  EXPECT_EQ(p.buckets[25].cumulative_count, 6u);
  EXPECT_EQ(p.count, 6u);
  EXPECT_DOUBLE_EQ(p.sum, h.sum_seconds());
}

TEST(CollectiveHistogram, SeriesMatchTheCumulativeHistogram) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  const Exposition e = sim.Build();
  const MetricFamily* f = Family(e, "neuron_collective_latency_seconds");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, MetricType::kHistogram);
  const RuntimeSample& r = sim.core().history().newest()->runtimes.at(0);
  const MetricSample& s = f->samples.at(0);
  EXPECT_EQ(LabelOf(s, "operation"), "all_reduce");
  EXPECT_EQ(s.histogram.count, r.collectives[0].latency.count());
  EXPECT_GT(s.histogram.count, 0u);
}

v1::Finding MakeFinding(std::uint32_t pid, v1::FindingKind kind, double confidence) {
  v1::Finding f;
  f.set_kind(kind);
  f.set_severity(v1::SEVERITY_WARNING);
  f.set_pid(pid);
  f.set_confidence(confidence);
  v1::Evidence* e = f.add_evidence();
  e->set_name("utilization_percent");
  e->set_value(42);
  e->set_unit("percent");
  return f;
}

TEST(Findings, OneGaugePerRuntimeAndKindWithEvidence) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  const RuntimeSample& r = sim.core().history().newest()->runtimes.at(0);
  FindingsByPid findings;
  findings[r.pid] = {MakeFinding(r.pid, v1::FINDING_KIND_INPUT_BOUND, 0.9),
                     MakeFinding(r.pid, v1::FINDING_KIND_INPUT_BOUND, 0.1)};  // first one wins
  findings[99999] = {MakeFinding(99999, v1::FINDING_KIND_ERRORS, 1)};         // not running
  const Exposition e = sim.Build(nullptr, &findings);
  const MetricFamily* f = Family(e, "neuron_finding");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->samples.size(), 1u);
  EXPECT_EQ(LabelOf(f->samples[0], "kind"), "input_bound");
  EXPECT_EQ(LabelOf(f->samples[0], "severity"), "warning");
  EXPECT_EQ(LabelOf(f->samples[0], "runtime_tag"), r.tag);
  EXPECT_EQ(Value(e, "neuron_finding_confidence_ratio", {{"kind", "input_bound"}}), 0.9);
  EXPECT_EQ(Value(e, "neuron_finding_evidence",
                  {{"evidence", "utilization_percent"}, {"unit", "percent"}}),
            42);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "bottleneck_analysis"}}), 1);
}

TEST(Findings, AbsentWithoutAnAnalyzer) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  const Exposition e = sim.Build();
  EXPECT_EQ(Family(e, "neuron_finding"), nullptr);
  EXPECT_TRUE(std::isnan(
      Value(e, "neuron_monitord_collector_success", {{"group", "bottleneck_analysis"}})));
}

TEST(SelfMetrics, DaemonStatsAndProcess) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  const Exposition e = sim.Build();
  EXPECT_EQ(Value(e, "neuron_monitord_clients", {{"transport", "tcp"}}), 1);
  EXPECT_EQ(Value(e, "neuron_monitord_client_disconnects_total", {{"reason", "slow"}}), 1);
  EXPECT_EQ(Value(e, "neuron_monitord_frames_dropped_total", {}), 3);
  EXPECT_EQ(Value(e, "neuron_monitord_sampler_missed_ticks_total", {}), 2);
  EXPECT_EQ(Value(e, "neuron_monitord_sample_duration_seconds", {}), 0.0015);
  EXPECT_EQ(Value(e, "neuron_monitord_last_sample_timestamp_seconds", {}), 1767225645);
  EXPECT_EQ(Value(e, "neuron_monitord_sample_period_seconds", {}), 1);
  EXPECT_EQ(Value(e, "neuron_monitord_http_responses_total", {{"code", "503"}}), 1);
  EXPECT_EQ(LabelOf(Family(e, "neuron_monitord_build_info")->samples.at(0), "version"), "test");
  EXPECT_EQ(Value(e, "process_open_fds", {}), 12);
  EXPECT_EQ(Value(e, "process_max_fds", {}), 524288);  // beside it, as client libraries export
  EXPECT_EQ(Value(e, "process_cpu_seconds_total", {}), 12.5);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "process"}}), 1);
}

TEST(SelfMetrics, UnreadableProcessFailsOnlyTheProcessGroup) {
  History history(4);
  v1::Inventory inventory;
  const Result<ProcessMetrics> process(Status::NotFound("open /proc/self/stat: no such file"));
  MetricsInput in;
  in.inventory = &inventory;
  in.process = &process;
  in.version = "test";
  const Exposition e = BuildMetrics(in);
  EXPECT_EQ(Family(e, "process_open_fds"), nullptr);
  EXPECT_EQ(Value(e, "neuron_monitord_collector_success", {{"group", "process"}}), 0);
  EXPECT_NE(Family(e, "neuron_monitord_build_info"), nullptr) << "no sample yet, still a scrape";
  EXPECT_EQ(Family(e, "instance_info"), nullptr);
}

TEST(OpenMetrics, RendersTheSameFamiliesAndEndsWithEof) {
  SimCore sim("trn1.2xlarge", "healthy-training", {40, 45});
  const std::string om = RenderOpenMetrics(sim.Build());
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_NE(om.find("# TYPE execution_errors counter\n"), std::string::npos);
  EXPECT_NE(om.find("# TYPE instance info\n"), std::string::npos);
  EXPECT_NE(om.find("# UNIT neuron_collective_latency_seconds seconds\n"), std::string::npos);
}

Snapshot At(std::uint64_t seq, MonoTime mono) {
  Snapshot s;
  s.seq = seq;
  s.mono = mono;
  return s;
}

TEST(SelectWindow, ReachesBackTheWindowOrToTheOldest) {
  History history(10);
  EXPECT_EQ(SelectWindow(history, seconds(5), seconds(1)).end, nullptr);
  const MonoTime t0(seconds(100));
  history.Append(At(1, t0));
  MetricsWindow w = SelectWindow(history, seconds(5), seconds(1));
  EXPECT_EQ(w.start, w.end) << "one snapshot: no window";
  for (std::uint64_t seq = 2; seq <= 8; ++seq) history.Append(At(seq, t0 + seconds(seq)));
  w = SelectWindow(history, seconds(5), seconds(1));
  EXPECT_EQ(w.end->seq, 8u);
  EXPECT_EQ(w.start->seq, 3u);
  w = SelectWindow(history, milliseconds(100), seconds(1));
  EXPECT_EQ(w.start->seq, 7u) << "at least one period";
  w = SelectWindow(history, std::chrono::minutes(1), seconds(1));
  EXPECT_EQ(w.start->seq, 1u) << "the oldest retained";
}

}  // namespace
}  // namespace neuronmon::daemon
