// neuron-top's cluster view drawn onto a TextCanvas: the cluster verdict on top naming the node,
// hosts grouped by job, down hosts with their reason and retry, sorting, selection and keys.
#include "tui/cluster_view.h"

#include <gtest/gtest.h>

namespace neuronmon::tui {
namespace {

using client::ClusterHost;
using client::HostState;

ClusterHost Up(const std::string& name, double util, double share, const std::string& job,
               v1::FindingKind kind = v1::FINDING_KIND_COLLECTIVE_BOUND) {
  ClusterHost h;
  h.address = name + ":9414";
  h.name = name;
  h.state = HostState::kUp;
  h.instance_type = "trn1.32xlarge";
  h.devices = 16;
  h.has_summary = true;
  h.summary.set_utilization_percent(util);
  h.summary.set_collective_time_share(share);
  h.summary.set_hbm_used_percent(40);
  h.summary.set_collective_p99_seconds(0.0021);
  h.summary.set_job(job);
  h.verdict.set_kind(kind);
  h.verdict.set_severity(v1::SEVERITY_WARNING);
  h.verdict.set_summary("waits in all_reduce");
  return h;
}

std::vector<ClusterHost> Hosts() {
  std::vector<ClusterHost> hosts = {
      Up("ip-10-0-0-4", 52, 0.42, "python train.py"),
      Up("ip-10-0-0-5", 53, 0.41, "python train.py"),
      Up("ip-10-0-0-6", 78, 0.08, "python train.py"),
      Up("ip-10-0-0-7", 51, 0.43, "python train.py"),
      Up("infer-1", 35, 0.0, "python serve.py", v1::FINDING_KIND_HEALTHY)};
  ClusterHost down;
  down.address = down.name = "10.0.9.9:9414";
  down.state = HostState::kDown;
  down.error = "connection refused";
  down.retry_in_seconds = 4;
  hosts.push_back(down);
  return hosts;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

// The host row starting with `name`, or "".
std::string RowOf(const std::string& text, const std::string& name) {
  for (const std::string& l : Lines(text)) {
    if (l.rfind(name, 0) == 0) return l;
  }
  return "";
}

TEST(ClusterView, VerdictOnTopJobsGroupedDownHostsLast) {
  const std::vector<ClusterHost> hosts = Hosts();
  const client::ClusterAnalysis a = client::AnalyzeCluster(hosts);
  ClusterViewState state;
  state.version = "0.1.0";
  TextCanvas c(140, 20);
  RenderCluster(hosts, a, ClusterOrder(hosts, a, state.sort), state, c);
  const std::vector<std::string> lines = Lines(c.Text());
  EXPECT_NE(lines[0].find("cluster: 6 hosts, 5 up, 1 down  sort: name"), std::string::npos)
      << c.Text();
  EXPECT_EQ(lines[1].rfind(" straggler node ip-10-0-0-6: NeuronCores 78% busy", 0), 0u) << c.Text();
  // The summary goes on over the next line, at a word.
  EXPECT_NE(lines[2].find("1 of 6 hosts not reporting"), std::string::npos) << c.Text();
  EXPECT_EQ(lines[3].rfind("HOST", 0), 0u);
  EXPECT_EQ(lines[4].rfind("job: python train.py", 0), 0u) << c.Text();
  EXPECT_NE(lines[4].find("(4 hosts, median 52% busy, 42% in collectives)"), std::string::npos);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(lines[5 + i].rfind("ip-10-0-0-" + std::to_string(4 + i), 0), 0u) << c.Text();
  }
  EXPECT_EQ(lines[9].rfind("job: python serve.py", 0), 0u);
  EXPECT_EQ(lines[10].rfind("infer-1", 0), 0u);
  EXPECT_EQ(lines[11].rfind("not reporting yet", 0), 0u);
  EXPECT_EQ(lines[12].rfind("10.0.9.9:9414", 0), 0u);
  EXPECT_NE(lines[12].find("down   connection refused, retry in 4s"), std::string::npos)
      << lines[12];

  const std::string slow = RowOf(c.Text(), "ip-10-0-0-6");
  EXPECT_NE(slow.find("trn1.32xlarge"), std::string::npos) << slow;
  EXPECT_NE(slow.find("78%"), std::string::npos) << slow;
  EXPECT_NE(slow.find("straggler NeuronCores 78% busy"), std::string::npos) << slow;
  EXPECT_NE(RowOf(c.Text(), "ip-10-0-0-4").find("collective_bound waits in all_reduce"),
            std::string::npos);
  EXPECT_NE(c.Text().find("s sort: name/utilization/verdict"), std::string::npos);
}

TEST(ClusterView, SortsWithinJobs) {
  const std::vector<ClusterHost> hosts = Hosts();
  const client::ClusterAnalysis a = client::AnalyzeCluster(hosts);
  // By utilization, lowest first, within each job; the down host stays last.
  EXPECT_EQ(ClusterOrder(hosts, a, ClusterSort::kUtilization),
            (std::vector<std::size_t>{3, 0, 1, 2, 4, 5}));
  // By verdict, worst first: the straggler before the collective-bound ones.
  EXPECT_EQ(ClusterOrder(hosts, a, ClusterSort::kVerdict),
            (std::vector<std::size_t>{2, 0, 1, 3, 4, 5}));
  EXPECT_EQ(ClusterOrder(hosts, a, ClusterSort::kName),
            (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
}

TEST(ClusterView, NamesSortAsAPersonReadsThem) {
  std::vector<ClusterHost> hosts;
  for (const char* name : {"ip-10-0-0-10", "ip-10-0-0-9", "ip-10-0-1-4", "ip-10-0-0-04x", "b"})
    hosts.push_back(Up(name, 50, 0.1, "train"));
  const client::ClusterAnalysis a = client::AnalyzeCluster(hosts);
  std::vector<std::string> names;
  for (std::size_t i : ClusterOrder(hosts, a, ClusterSort::kName)) names.push_back(hosts[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"b", "ip-10-0-0-04x", "ip-10-0-0-9", "ip-10-0-0-10",
                                             "ip-10-0-1-4"}));
}

TEST(ClusterView, KeysSelectSortAndOpen) {
  ClusterViewState state;
  ClusterCommand down = ApplyClusterKey({Key::kDown}, 6, 10, state);
  EXPECT_EQ(down.effect, Effect::kNone);
  EXPECT_FALSE(down.open);
  EXPECT_EQ(state.selected, 1u);
  ApplyClusterKey({Key::kEnd}, 6, 10, state);
  EXPECT_EQ(state.selected, 5u);
  ApplyClusterKey({Key::kDown}, 6, 10, state);
  EXPECT_EQ(state.selected, 5u) << "stays on the last row";
  ApplyClusterKey({CharKey('k')}, 6, 10, state);
  EXPECT_EQ(state.selected, 4u);
  ApplyClusterKey({Key::kPageUp}, 6, 10, state);
  EXPECT_EQ(state.selected, 0u);
  ApplyClusterKey({CharKey('s')}, 6, 10, state);
  EXPECT_EQ(state.sort, ClusterSort::kUtilization);
  ApplyClusterKey({CharKey('s')}, 6, 10, state);
  EXPECT_EQ(state.sort, ClusterSort::kVerdict);
  ApplyClusterKey({CharKey('s')}, 6, 10, state);
  EXPECT_EQ(state.sort, ClusterSort::kName);
  EXPECT_TRUE(ApplyClusterKey({Key::kEnter}, 6, 10, state).open);
  EXPECT_TRUE(ApplyClusterKey({CharKey('\r')}, 6, 10, state).open);
  const ClusterCommand nothing = ApplyClusterKey({Key::kEnter}, 0, 10, state);
  EXPECT_FALSE(nothing.open);
  EXPECT_EQ(nothing.effect, Effect::kNone);
  EXPECT_EQ(ApplyClusterKey({CharKey('q')}, 6, 10, state).effect, Effect::kQuit);
  EXPECT_EQ(ApplyClusterKey({Key::kCtrlL}, 6, 10, state).effect, Effect::kRepaint);
}

TEST(ClusterView, SelectedRowStaysOnScreenAndIsHighlighted) {
  std::vector<ClusterHost> hosts;
  for (int i = 0; i < 40; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "node%02d", i);
    hosts.push_back(Up(name, 50, 0.3, "train"));
  }
  const client::ClusterAnalysis a = client::AnalyzeCluster(hosts);
  ClusterViewState state;
  state.selected = 30;
  TextCanvas c(120, 15);
  RenderCluster(hosts, a, ClusterOrder(hosts, a, state.sort), state, c);
  EXPECT_GT(state.top, 0);
  const std::vector<std::string> lines = Lines(c.Text());
  int row = -1;
  for (int y = 0; y < static_cast<int>(lines.size()); ++y) {
    if (lines[static_cast<std::size_t>(y)].rfind("node30", 0) == 0) row = y;
  }
  ASSERT_GE(row, 4) << c.Text();
  EXPECT_LT(row, 14);
  EXPECT_EQ(c.RoleAt(0, row), Role::kSelected);
  EXPECT_NE(c.RoleAt(0, row == 4 ? 5 : 4), Role::kSelected);
}

TEST(ClusterView, HostStringsCannotMoveTheCursor) {
  // Names and verdicts come from other machines; the follower sanitizes them, and the canvas
  // draws what it is given cell by cell: a control character never reaches the terminal.
  std::vector<ClusterHost> hosts = {Up("evil", 50, 0.3, "train")};
  hosts[0].verdict.set_summary("x\x1b[2Jy");
  const client::ClusterAnalysis a = client::AnalyzeCluster(hosts);
  ClusterViewState state;
  TextCanvas c(120, 10);
  RenderCluster(hosts, a, ClusterOrder(hosts, a, state.sort), state, c);
  EXPECT_EQ(c.Text().find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace neuronmon::tui
