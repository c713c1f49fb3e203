// The cluster comparison of neuron-top's cluster view, without sockets: which node is the job's
// straggler, how a hang on one host becomes the job's verdict, what the cluster's verdict names;
// and the hosts file / --connect list parsing.
#include "client/cluster.h"

#include <gtest/gtest.h>

namespace neuronmon::client {
namespace {

// A reporting host of job `command`: `util` % busy, `share` of its time in collectives.
ClusterHost Host(const std::string& name, double util, double share,
                 const std::string& command = "python train.py",
                 v1::FindingKind own = v1::FINDING_KIND_COLLECTIVE_BOUND) {
  ClusterHost h;
  h.address = name + ":9414";
  h.name = name;
  h.state = HostState::kUp;
  h.has_summary = true;
  h.summary.set_utilization_percent(util);
  h.summary.set_collective_time_share(share);
  h.summary.set_job(command);
  h.verdict.set_kind(own);
  h.verdict.set_severity(own == v1::FINDING_KIND_HEALTHY ? v1::SEVERITY_INFO
                                                         : v1::SEVERITY_WARNING);
  h.verdict.set_summary("own verdict of " + name);
  return h;
}

// What a host's hang verdict carries about the rank that stopped joining (Finding.hang).
v1::HangDetail StuckRank(const std::string& rank, double seconds,
                         v1::CollectiveOp op = v1::COLLECTIVE_OP_ALL_REDUCE) {
  v1::HangDetail hang;
  hang.set_operation(op);
  hang.set_stuck_rank(rank);
  hang.set_stuck_seconds(seconds);
  return hang;
}

TEST(AnalyzeCluster, NamesTheNodeTheOthersWaitFor) {
  // cluster-straggler as the four daemons report it: node 2 computes longer; the others spend
  // that time waiting in all_reduce.
  std::vector<ClusterHost> hosts = {Host("node0", 52, 0.42), Host("node1", 53, 0.41),
                                    Host("node2", 78, 0.08), Host("node3", 51, 0.43)};
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  ASSERT_EQ(a.jobs.size(), 1u);
  EXPECT_EQ(a.jobs[0].hosts.size(), 4u);
  EXPECT_DOUBLE_EQ(a.jobs[0].median_utilization, 52.5);
  EXPECT_EQ(a.host_verdicts[2].kind(), v1::FINDING_KIND_STRAGGLER);
  EXPECT_EQ(a.host_verdicts[2].straggler(), "node2");
  for (int i : {0, 1, 3}) EXPECT_EQ(a.host_verdicts[i].kind(), v1::FINDING_KIND_COLLECTIVE_BOUND);
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_STRAGGLER);
  EXPECT_EQ(a.verdict.straggler(), "node2");
  EXPECT_EQ(a.verdict.summary().rfind("node node2: NeuronCores 78% busy", 0), 0u)
      << a.verdict.summary();
  ASSERT_EQ(a.verdict.evidence_size(), 2);
  EXPECT_EQ(a.verdict.evidence(1).name(), "job_median_collective_time_share_percent");
  EXPECT_EQ(a.verdict.evidence(0).name(), "utilization_gap_points");
  EXPECT_DOUBLE_EQ(a.verdict.evidence(0).value(), 78 - 52.5);
}

// 16 nodes whose all-reduces cross many EFA hops: every node, the slow one too, has collectives in
// flight nearly all the time (overlapped ones count), so only utilization sets node 2 apart.
TEST(AnalyzeCluster, BusierNodeIsTheStragglerEvenWhenEveryNodeShowsCollectives) {
  std::vector<ClusterHost> hosts;
  for (int k = 0; k < 16; ++k) {
    hosts.push_back(
        Host("ip-10-0-0-" + std::to_string(4 + k), k == 2 ? 57 : 35, k == 2 ? 0.98 : 0.99));
  }
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_STRAGGLER) << a.verdict.summary();
  EXPECT_EQ(a.verdict.straggler(), "ip-10-0-0-6");
  for (int k = 0; k < 16; ++k) {
    if (k != 2) {
      EXPECT_NE(a.host_verdicts[k].kind(), v1::FINDING_KIND_STRAGGLER) << k;
    }
  }
}

// A node less busy than the others is the straggler only when it is not itself waiting in
// collectives (it stalls elsewhere: input, host): a less busy node that waits more is a waiter.
TEST(AnalyzeCluster, LessBusyNodeIsTheStragglerOnlyWhenItIsNotWaiting) {
  std::vector<ClusterHost> hosts = {Host("a", 60, 0.4), Host("b", 61, 0.4), Host("c", 59, 0.4),
                                    Host("d", 30, 0.05)};
  ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.host_verdicts[3].kind(), v1::FINDING_KIND_STRAGGLER);
  EXPECT_EQ(a.verdict.straggler(), "d");
  hosts[3].summary.set_collective_time_share(0.6);
  a = AnalyzeCluster(hosts);
  EXPECT_NE(a.host_verdicts[3].kind(), v1::FINDING_KIND_STRAGGLER);
}

TEST(AnalyzeCluster, NoStragglerWhenNobodyWaitsOrTooFewHosts) {
  // Utilization apart, but the job spends little time in collectives: nobody waits for anybody.
  std::vector<ClusterHost> hosts = {Host("a", 50, 0.05), Host("b", 51, 0.04), Host("c", 80, 0.01)};
  EXPECT_NE(AnalyzeCluster(hosts).host_verdicts[2].kind(), v1::FINDING_KIND_STRAGGLER);
  // Two hosts cannot say which one stands apart.
  hosts = {Host("a", 50, 0.4), Host("c", 80, 0.05)};
  EXPECT_NE(AnalyzeCluster(hosts).host_verdicts[1].kind(), v1::FINDING_KIND_STRAGGLER);
  // Close to the median: no verdict of the comparison.
  hosts = {Host("a", 50, 0.4), Host("b", 51, 0.4), Host("c", 55, 0.2)};
  EXPECT_NE(AnalyzeCluster(hosts).host_verdicts[2].kind(), v1::FINDING_KIND_STRAGGLER);
}

TEST(AnalyzeCluster, JobsAreComparedSeparately) {
  // Two jobs of three nodes each; job B runs at a different utilization — no straggler in either.
  std::vector<ClusterHost> hosts = {Host("a0", 50, 0.4, "A"), Host("a1", 51, 0.4, "A"),
                                    Host("a2", 49, 0.4, "A"), Host("b0", 90, 0.2, "B"),
                                    Host("b1", 91, 0.2, "B"), Host("b2", 89, 0.2, "B")};
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  ASSERT_EQ(a.jobs.size(), 2u);
  EXPECT_EQ(a.jobs[0].command, "A");
  EXPECT_EQ(a.jobs[1].command, "B");
  EXPECT_DOUBLE_EQ(a.jobs[1].median_utilization, 90);
  for (const v1::Finding& f : a.host_verdicts) EXPECT_NE(f.kind(), v1::FINDING_KIND_STRAGGLER);
}

TEST(AnalyzeCluster, HangOnOneHostIsTheJobsHangAndNamesTheStuckRank) {
  std::vector<ClusterHost> hosts = {Host("n0", 0, 1), Host("n1", 0, 1), Host("n2", 0, 1),
                                    Host("ip-10-0-0-7", 5, 0.9), Host("other", 60, 0.1, "B")};
  // Node 0 says its ranks wait (no stuck rank here); node 3 names its stuck rank.
  hosts[0].verdict.set_kind(v1::FINDING_KIND_HANG);
  hosts[0].verdict.set_summary(
      "16 ranks wait in all_reduce for 12 s; the rank that stopped "
      "joining is on another host");
  hosts[0].verdict.mutable_hang()->set_operation(v1::COLLECTIVE_OP_ALL_REDUCE);
  hosts[3].verdict.set_kind(v1::FINDING_KIND_HANG);
  hosts[3].verdict.set_severity(v1::SEVERITY_CRITICAL);
  hosts[3].verdict.set_straggler("rank5");
  hosts[3].verdict.set_summary(
      "rank5 has not joined all_reduce for 41 s; 15 ranks here wait for "
      "it");
  *hosts[3].verdict.mutable_hang() = StuckRank("rank5", 41.2);
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  for (int i : {1, 2}) {
    EXPECT_EQ(a.host_verdicts[i].kind(), v1::FINDING_KIND_HANG);
    EXPECT_EQ(a.host_verdicts[i].summary(), "waits for node ip-10-0-0-7");
  }
  EXPECT_NE(a.host_verdicts[4].kind(), v1::FINDING_KIND_HANG);  // another job
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_HANG);
  EXPECT_EQ(a.verdict.straggler(), "ip-10-0-0-7");
  EXPECT_EQ(a.verdict.summary(), "node ip-10-0-0-7: rank5 has not joined all_reduce for 41 s");
}

// The cluster's words come from the hang's structure, not from the host's prose: a summary in
// other words (a newer daemon's, a translation) changes nothing.
TEST(AnalyzeCluster, HangVerdictIsReadFromItsStructureNotItsSummary) {
  std::vector<ClusterHost> hosts = {Host("n0", 0, 1), Host("n1", 0, 1), Host("n2", 0, 1)};
  hosts[1].verdict.set_kind(v1::FINDING_KIND_HANG);
  hosts[1].verdict.set_straggler("worker-3");
  hosts[1].verdict.set_summary("1 of 4 applications: worker-3 est bloqué");
  *hosts[1].verdict.mutable_hang() = StuckRank("worker-3", 7.9, v1::COLLECTIVE_OP_ALL_GATHER);
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.verdict.summary(), "node n1: worker-3 has not joined all_gather for 7 s");
  EXPECT_EQ(a.host_verdicts[0].summary(), "waits for node n1");
}

// A daemon older than Finding.hang names the stuck rank only in `straggler` (and in its prose,
// which is not read): the cluster verdict names node and rank without the collective's words.
TEST(AnalyzeCluster, HangFromADaemonWithoutTheStructureStillNamesNodeAndRank) {
  std::vector<ClusterHost> hosts = {Host("n0", 0, 1), Host("ip-10-0-0-7", 0, 1)};
  hosts[1].verdict.set_kind(v1::FINDING_KIND_HANG);
  hosts[1].verdict.set_straggler("rank5");
  hosts[1].verdict.set_summary("1 of 16 applications: rank5 has not joined all_reduce for 41 s");
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.verdict.straggler(), "ip-10-0-0-7");
  EXPECT_EQ(a.verdict.summary(), "node ip-10-0-0-7: rank5 stopped joining its collectives");
}

TEST(AnalyzeCluster, HangWhoseStuckRankIsOnAnUnreachableHost) {
  std::vector<ClusterHost> hosts = {Host("n0", 0, 1), Host("n1", 0, 1)};
  hosts[0].verdict.set_kind(v1::FINDING_KIND_HANG);
  ClusterHost down;
  down.address = down.name = "10.0.0.9:9414";
  down.state = HostState::kDown;
  hosts.push_back(down);
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_HANG);
  EXPECT_NE(a.verdict.summary().find("stopped joining is on a host not reporting"),
            std::string::npos)
      << a.verdict.summary();
  EXPECT_NE(a.verdict.summary().find("1 of 3 hosts not reporting"), std::string::npos);
}

TEST(AnalyzeCluster, HealthyAndEmptyClusters) {
  std::vector<ClusterHost> hosts = {
      Host("a", 90, 0.05, "A", v1::FINDING_KIND_HEALTHY),
      Host("b", 91, 0.05, "A", v1::FINDING_KIND_HEALTHY),
  };
  ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_HEALTHY);
  EXPECT_EQ(a.verdict.summary(), "2 of 2 hosts healthy");

  ClusterHost connecting;
  connecting.address = connecting.name = "h:1";
  a = AnalyzeCluster({connecting});
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_HEALTHY);
  EXPECT_EQ(a.verdict.summary(), "no host is reporting yet; 1 of 1 hosts not reporting");
  EXPECT_TRUE(a.jobs.empty());
}

TEST(AnalyzeCluster, ErrorsOutrankAStraggler) {
  std::vector<ClusterHost> hosts = {Host("n0", 52, 0.42), Host("n1", 53, 0.41),
                                    Host("n2", 78, 0.08), Host("n3", 51, 0.43)};
  hosts[1].verdict.set_kind(v1::FINDING_KIND_ERRORS);
  hosts[1].verdict.set_severity(v1::SEVERITY_CRITICAL);
  hosts[1].verdict.set_summary("nd0 reports 3 uncorrected ECC errors");
  const ClusterAnalysis a = AnalyzeCluster(hosts);
  EXPECT_EQ(a.verdict.kind(), v1::FINDING_KIND_ERRORS);
  EXPECT_EQ(a.verdict.summary(), "node n1: nd0 reports 3 uncorrected ECC errors");
  EXPECT_EQ(a.host_verdicts[2].kind(), v1::FINDING_KIND_STRAGGLER);
}

TEST(HostsFile, ParsesLinesCommentsAndIpv6) {
  Result<std::vector<HostsFileLine>> r = ParseHostsFile(
      "# training cluster\n10.0.0.1:9414\n\n  10.0.0.2:9414  # node 1\r\n[::1]:9414\nlast:1",
      "hosts", 16);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<std::string> addresses;
  for (const HostsFileLine& line : *r) addresses.push_back(line.address);
  EXPECT_EQ(addresses,
            (std::vector<std::string>{"10.0.0.1:9414", "10.0.0.2:9414", "[::1]:9414", "last:1"}));
}

TEST(HostsFile, ErrorsNameTheLine) {
  Result<std::vector<HostsFileLine>> r = ParseHostsFile("a:1\n# c\nnoport\n", "hosts.txt", 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("hosts.txt:3: ", 0), 0u) << r.status().message();

  r = ParseHostsFile("a:1\nb:2\nc:3\n", "h", 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "h:3: more than 2 hosts");

  r = ParseHostsFile("# only comments\n\n", "h", 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "h: no HOST:PORT lines");

  EXPECT_FALSE(ParseHostsFile("a:99999\n", "h", 2).ok());
}

TEST(HostList, SplitsAndRejectsEmptyItems) {
  Result<std::vector<std::string>> r = SplitHostList("a:1, b:2,c:3", 8);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<std::string>{"a:1", "b:2", "c:3"}));
  EXPECT_FALSE(SplitHostList("a:1,,b:2", 8).ok());
  EXPECT_FALSE(SplitHostList("a:1,", 8).ok());
  EXPECT_FALSE(SplitHostList("a:1,b", 8).ok());
  r = SplitHostList("a:1,b:2,c:3", 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--connect: more than 2 hosts");
}

}  // namespace
}  // namespace neuronmon::client
