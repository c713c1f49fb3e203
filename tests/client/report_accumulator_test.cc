// The client side's merging rules, as neuron-top and neuron-monitor both rely on them.
#include "client/report_accumulator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neuronmon::client {
namespace {

v1::RuntimeReport* AddRuntime(v1::Report& r, std::uint32_t pid, double utilization) {
  v1::RuntimeReport* rt = r.add_runtimes();
  rt->set_pid(pid);
  rt->set_tag("rt" + std::to_string(pid));
  rt->mutable_neuroncore_counters()->add_cores()->set_utilization_percent(utilization);
  return rt;
}

v1::Report Due(std::initializer_list<v1::Group> groups) {
  v1::Report r;
  for (v1::Group g : groups) r.add_groups(g);
  return r;
}

std::vector<std::uint32_t> Pids(const ReportAccumulator& a) {
  std::vector<std::uint32_t> out;
  for (const ReportAccumulator::Runtime& r : a.runtimes()) out.push_back(r.report.pid());
  return out;
}

// Hears what Apply did, as a string per call.
struct Recorder final : ReportAccumulator::Observer {
  void Stored(v1::Group g, v1::RuntimeReport& r) override {
    events.push_back("rt" + std::to_string(r.pid()) + ":" + std::to_string(g));
  }
  void Stored(v1::Group g, ReportAccumulator::System&) override {
    events.push_back("sys:" + std::to_string(g));
  }
  void Dropped(std::uint32_t pid) override { events.push_back("drop" + std::to_string(pid)); }
  std::vector<std::string> events;
};

TEST(ReportAccumulator, EachGroupKeepsItsLastValue) {
  ReportAccumulator a;
  v1::Report first = Due({v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_MEMORY_USED});
  AddRuntime(first, 7, 40)->mutable_memory_used()->set_device_bytes(100);
  a.Apply(first);
  // Only the core counters are due next: memory keeps its value, counters are replaced.
  v1::Report second = Due({v1::GROUP_NEURONCORE_COUNTERS});
  AddRuntime(second, 7, 60);
  a.Apply(second);
  ASSERT_EQ(Pids(a), (std::vector<std::uint32_t>{7}));
  const ReportAccumulator::Runtime* r = a.Find(7);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->report.neuroncore_counters().cores(0).utilization_percent(), 60);
  EXPECT_EQ(r->report.memory_used().device_bytes(), 100u);
  EXPECT_FALSE(r->report.has_execution_stats());  // never received: absent, not zero
  EXPECT_EQ(a.Find(8), nullptr);
  EXPECT_EQ(a.reports(), 2u);
}

TEST(ReportAccumulator, ARuntimeMissingFromAReportWithRuntimeGroupsHasExited) {
  ReportAccumulator a;
  v1::Report both = Due({v1::GROUP_NEURONCORE_COUNTERS});
  AddRuntime(both, 12, 10);
  AddRuntime(both, 3, 20);
  a.Apply(both);
  EXPECT_EQ(Pids(a), (std::vector<std::uint32_t>{3, 12}));  // ascending pid
  // A report with only system groups due says nothing about runtimes.
  v1::Report system = Due({v1::GROUP_HBM_STATS});
  system.mutable_system()->mutable_hbm_stats();
  a.Apply(system);
  EXPECT_EQ(Pids(a), (std::vector<std::uint32_t>{3, 12}));
  EXPECT_TRUE(a.system().groups.has_hbm_stats());
  EXPECT_FALSE(a.system().groups.has_vcpu_usage());  // never received: absent, not zero
  // One with runtime groups that lists only pid 12: pid 3 exited.
  v1::Report one = Due({v1::GROUP_EXECUTION_STATS});
  one.add_runtimes()->set_pid(12);
  Recorder heard;
  a.Apply(one, 0, &heard);
  EXPECT_EQ(Pids(a), (std::vector<std::uint32_t>{12}));
  EXPECT_EQ(heard.events, (std::vector<std::string>{"drop3"}));
  // Runtime groups due and no runtime at all: every application exited.
  a.Apply(Due({v1::GROUP_NEURONCORE_COUNTERS}));
  EXPECT_TRUE(a.runtimes().empty());
}

TEST(ReportAccumulator, WithoutAGroupListRuntimesAreDueWhenListedOrWhenNothingElseIs) {
  ReportAccumulator a;
  v1::Report r;
  AddRuntime(r, 1, 10);
  AddRuntime(r, 2, 10);
  a.Apply(r);
  v1::Report only_system;
  only_system.mutable_system()->mutable_vcpu_usage();
  a.Apply(only_system);  // system groups only: runtimes kept
  EXPECT_EQ(Pids(a), (std::vector<std::uint32_t>{1, 2}));
  v1::Report one;
  AddRuntime(one, 2, 10);
  a.Apply(one);
  EXPECT_EQ(Pids(a), (std::vector<std::uint32_t>{2}));
  a.Apply(v1::Report{});  // nothing at all: no runtime is running
  EXPECT_TRUE(a.runtimes().empty());
}

TEST(ReportAccumulator, ARuntimeIsDroppedOnlyWhenNoSubscriptionReportsIt) {
  ReportAccumulator a;
  v1::Report from0 = Due({v1::GROUP_NEURONCORE_COUNTERS});
  AddRuntime(from0, 5, 10);
  a.Apply(from0, 0);
  v1::Report from1 = Due({v1::GROUP_NEURONCORE_COUNTERS});
  AddRuntime(from1, 5, 10);
  a.Apply(from1, 1);
  a.Apply(Due({v1::GROUP_NEURONCORE_COUNTERS}), 0);  // subscription 0 no longer sees it
  EXPECT_EQ(Pids(a), (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(a.Find(5)->sources, 2u);
  a.Apply(Due({v1::GROUP_NEURONCORE_COUNTERS}), 1);
  EXPECT_TRUE(a.runtimes().empty());
}

TEST(ReportAccumulator, RuntimeAnalysisIsDueWhenItHasAPeriodOrFindings) {
  ReportAccumulator a;
  v1::Report r = Due({v1::GROUP_NEURONCORE_COUNTERS});
  AddRuntime(r, 4, 90);
  a.Apply(r);
  EXPECT_FALSE(a.Find(4)->has_analysis);
  v1::Report analysed = Due({v1::GROUP_BOTTLENECK_ANALYSIS});
  v1::RuntimeReport* rt = analysed.add_runtimes();
  rt->set_pid(4);
  rt->set_findings_period_ns(8'000'000'000);
  rt->add_findings()->set_summary("busy");
  a.Apply(analysed);
  ASSERT_TRUE(a.Find(4)->has_analysis);
  EXPECT_EQ(a.Find(4)->report.findings(0).summary(), "busy");
  // The counters received earlier stay.
  EXPECT_EQ(a.Find(4)->report.neuroncore_counters().cores(0).utilization_percent(), 90);
  // Due again with no finding (e.g. the analyzer restarted): the old finding goes.
  v1::Report empty = Due({v1::GROUP_BOTTLENECK_ANALYSIS});
  empty.add_runtimes()->set_pid(4);
  empty.mutable_runtimes(0)->set_findings_period_ns(8'000'000'000);
  a.Apply(empty);
  EXPECT_EQ(a.Find(4)->report.findings_size(), 0);
}

TEST(ReportAccumulator, InstanceFindingsAreReplacedOnlyWhenBottleneckAnalysisWasDue) {
  ReportAccumulator a;
  v1::Report r = Due({v1::GROUP_BOTTLENECK_ANALYSIS});
  r.set_period_ns(2'000'000'000);
  r.add_findings()->set_summary("2 of 2 applications healthy");
  a.Apply(r);
  ASSERT_TRUE(a.system().has_analysis);
  EXPECT_EQ(a.system().findings[0].summary(), "2 of 2 applications healthy");
  EXPECT_EQ(a.system().analysis_period_ns, 2'000'000'000u);  // no runtime analysed: the report's
  // A report where it was not due keeps them.
  a.Apply(Due({v1::GROUP_HBM_STATS}));
  EXPECT_EQ(a.system().findings.size(), 1);
  // Due with runtimes analysed over 8 s: their window is the summary's.
  v1::Report next = Due({v1::GROUP_BOTTLENECK_ANALYSIS});
  next.set_period_ns(1'000'000'000);
  next.add_runtimes()->set_findings_period_ns(8'000'000'000);
  next.add_findings()->set_summary("1 of 1 applications healthy");
  a.Apply(next);
  EXPECT_EQ(a.system().analysis_period_ns, 8'000'000'000u);
  // Due and empty (a new device: no evaluation yet): the stale summary goes.
  a.Apply(Due({v1::GROUP_BOTTLENECK_ANALYSIS}));
  EXPECT_EQ(a.system().findings.size(), 0);
  // Without a group list, findings in the report say it was due.
  v1::Report old;
  old.add_findings()->set_summary("from an older daemon");
  a.Apply(old);
  EXPECT_EQ(a.system().findings.size(), 1);
}

TEST(ReportAccumulator, TheObserverHearsEachGroupStored) {
  ReportAccumulator a;
  v1::Report r = Due({v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_COLLECTIVES_STATS,
                      v1::GROUP_VCPU_USAGE, v1::GROUP_BOTTLENECK_ANALYSIS});
  v1::RuntimeReport* rt = AddRuntime(r, 9, 50);
  rt->mutable_collectives_stats();
  rt->set_findings_period_ns(1);
  r.mutable_system()->mutable_vcpu_usage();
  Recorder heard;
  a.Apply(r, 0, &heard);
  EXPECT_EQ(heard.events,
            (std::vector<std::string>{"rt9:" + std::to_string(v1::GROUP_NEURONCORE_COUNTERS),
                                      "rt9:" + std::to_string(v1::GROUP_COLLECTIVES_STATS),
                                      "rt9:" + std::to_string(v1::GROUP_BOTTLENECK_ANALYSIS),
                                      "sys:" + std::to_string(v1::GROUP_VCPU_USAGE),
                                      "sys:" + std::to_string(v1::GROUP_BOTTLENECK_ANALYSIS)}));
}

}  // namespace
}  // namespace neuronmon::client
