// neuron-top's view: golden frames per preset, size and glyph set; a layout sweep over every size;
// and behaviour a user sees (tabs filter, FLOPS mode, folding, the tree).
#include "tui/view.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/tui/model_fixture.h"
#include "tui/format.h"

namespace neuronmon::tui {
namespace {

const Model& Trn2Mixed() {
  static const Model m = testing::BuildModel("sim:trn2.48xlarge", "mixed");
  return m;
}
const Model& Trn1Large() {
  static const Model m = testing::BuildModel("sim:trn1.32xlarge", "healthy-training");
  return m;
}
const Model& Trn1Small() {
  static const Model m = testing::BuildModel("sim:trn1.2xlarge", "healthy-training");
  return m;
}

ViewState Plain(bool utf8 = true) {
  ViewState v;
  v.version = "0.1.0";
  v.utf8 = utf8;
  v.glyphs = utf8 ? GraphStyle::kBraille : GraphStyle::kAscii;
  return v;
}

std::string Golden(const std::string& name) {
  return std::string(NEURONMON_TESTDATA_DIR) + "/tui/" + name;
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::string path = Golden(name);
  if (std::getenv("NEURONMON_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden " << path << " (run with NEURONMON_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "frame differs from " << path;
}

struct Case {
  const char* name;
  const Model& (*model)();
};

TEST(ViewGolden, FramesPerPresetSizeAndGlyphs) {
  const Case cases[] = {
      {"trn1.2xlarge", Trn1Small}, {"trn1.32xlarge", Trn1Large}, {"trn2.48xlarge", Trn2Mixed}};
  const std::pair<int, int> sizes[] = {{80, 24}, {120, 40}, {200, 60}};
  for (const Case& c : cases) {
    for (auto [w, h] : sizes) {
      for (bool utf8 : {true, false}) {
        TextCanvas canvas(w, h);
        const Frame f = Render(c.model(), Plain(utf8), canvas);
        EXPECT_EQ(f.overflow, 0);
        const std::string base =
            std::string(c.name) + "_" + std::to_string(w) + "x" + std::to_string(h);
        ExpectGolden(base + (utf8 ? "" : "_ascii") + ".txt", canvas.Text());
        if (utf8 && w == 120) ExpectGolden(base + "_styles.txt", canvas.Styles());
      }
    }
  }
}

TEST(ViewLayout, EverySizeFromTwentyBySixToTwoFiftyByEighty) {
  const Model& m = Trn2Mixed();
  ViewState v = Plain();
  v.expanded = {"d0", "d0/c0"};
  int renders = 0;
  for (int w = 20; w <= 250; ++w) {
    for (int h = 6; h <= 80; ++h) {
      TextCanvas canvas(w, h);
      const Frame f = Render(m, v, canvas);
      ASSERT_EQ(f.overflow, 0) << w << "x" << h;
      // The title and the help bar are always there.
      ASSERT_EQ(canvas.RoleAt(w / 2, 0), Role::kTitle) << w << "x" << h;
      ASSERT_EQ(canvas.RoleAt(0, h - 1), Role::kHelp) << w << "x" << h;
      ++renders;
    }
  }
  EXPECT_EQ(renders, 231 * 75);
}

TEST(ViewLayout, SmallWindowsFoldSectionsAndSayWhatIsHidden) {
  TextCanvas small(40, 12);
  const Frame f = Render(Trn2Mixed(), Plain(), small);
  EXPECT_FALSE(f.hidden.empty());
  EXPECT_NE(small.Text().find("hidden (window too small):"), std::string::npos) << small.Text();
  EXPECT_NE(small.Text().find("NeuronCore v3d Utilization"), std::string::npos);
  TextCanvas big(200, 80);
  EXPECT_TRUE(Render(Trn1Small(), Plain(), big).hidden.empty());
}

TEST(View, TitleSaysWhyPerApplicationFiguresAreUnavailable) {
  Model m = Trn2Mixed();
  v1::Welcome welcome;
  *welcome.mutable_inventory() = m.inventory();
  welcome.mutable_inventory()->set_runtime_status(
      "per-application figures unavailable: neuron-monitor: not found: "
      "/opt/aws/neuron/bin/neuron-monitor — install aws-neuronx-tools");
  m.SetWelcome(welcome);
  TextCanvas c(250, 40);
  Render(m, Plain(), c);
  const std::string title = c.Text().substr(0, c.Text().find('\n'));
  EXPECT_NE(title.find("| per-application figures unavailable"), std::string::npos) << title;
  EXPECT_NE(title.find("install aws-neuronx-tools"), std::string::npos) << title;
  // The simulator's inventory says nothing of the kind.
  TextCanvas plain(250, 40);
  Render(Trn2Mixed(), Plain(), plain);
  EXPECT_EQ(plain.Text().substr(0, plain.Text().find('\n')).find("per-application"),
            std::string::npos);
}

TEST(View, TitleNamesInstanceAndConnection) {
  TextCanvas c(120, 40);
  Render(Trn2Mixed(), Plain(), c);
  const std::string text = c.Text();
  EXPECT_NE(text.find("neuron-top 0.1.0 running on i-sim"), std::string::npos);
  EXPECT_NE(text.find("(trn2.48xlarge)"), std::string::npos);
  EXPECT_NE(text.find("live unix:/run/neuron-monitor/neuron-monitord.sock"), std::string::npos);
  ViewState paused = Plain();
  paused.paused = true;
  Render(Trn2Mixed(), paused, c);
  EXPECT_NE(c.Text().find("PAUSED"), std::string::npos);
  // However narrow, the title keeps the connection state; the instance is cut first.
  for (int width : {80, 60, 40, 24}) {
    TextCanvas narrow(width, 24);
    Model reconnecting = Trn2Mixed();
    reconnecting.connection = ConnectionState::kReconnecting;
    reconnecting.reconnect_in_seconds = 2;
    Render(reconnecting, Plain(), narrow);
    const std::string title = narrow.Text().substr(0, narrow.Text().find('\n'));
    EXPECT_NE(title.find("reconnecting in 2s"), std::string::npos) << width << ": " << title;
    Render(Trn2Mixed(), paused, narrow);
    const std::string paused_title = narrow.Text().substr(0, narrow.Text().find('\n'));
    EXPECT_NE(paused_title.find("PAUSED | live"), std::string::npos)
        << width << ": " << paused_title;
  }
  ViewState slow = Plain();
  slow.refresh_seconds = 16;
  TextCanvas standard(120, 40);
  Render(Trn2Mixed(), slow, standard);
  EXPECT_NE(standard.Text().find("| every 16s"), std::string::npos) << "+ / - give feedback";
  // While reconnecting the figures are stale, and drawn dim: no green value is left in the body.
  {
    TextCanvas live(120, 40), stale(120, 40);
    Model lost = Trn2Mixed();
    lost.connection = ConnectionState::kReconnecting;
    Render(Trn2Mixed(), Plain(), live);
    Render(lost, Plain(), stale);
    const std::string live_styles = live.Styles(), stale_styles = stale.Styles();
    const std::string live_body = live_styles.substr(live_styles.find('\n'));
    const std::string stale_body = stale_styles.substr(stale_styles.find('\n'));
    EXPECT_NE(live_body.find('v'), std::string::npos);
    EXPECT_EQ(stale_body.find('v'), std::string::npos) << stale_styles;
    EXPECT_EQ(live.Text(), stale.Text().replace(0, stale.Text().find('\n'),
                                                live.Text().substr(0, live.Text().find('\n'))))
        << "the same figures, only dimmed";
  }
  TextCanvas wide(200, 40);
  Model reconnecting = Trn2Mixed();
  reconnecting.connection = ConnectionState::kReconnecting;
  reconnecting.reconnect_in_seconds = 3;
  Render(reconnecting, Plain(), wide);
  EXPECT_NE(wide.Text().find("reconnecting to unix:/run/neuron-monitor/neuron-monitord.sock in 3s"),
            std::string::npos);
}

// A runtime's tab says who runs it in the diagnosis title: the mixed scenario's training job is
// Slurm job 4242 of user mlteam, its vLLM replicas run in a pod.
TEST(View, ARuntimesTabSaysWhoRunsIt) {
  static const Model m = testing::BuildModel("sim:trn2.48xlarge", "mixed", 60);
  ViewState v = Plain();
  std::string training, serving;
  for (std::size_t i = 0; i < m.runtimes().size(); ++i) {
    v.tab = static_cast<int>(i) + 1;
    TextCanvas c(200, 80);
    Render(m, v, c);
    const std::string text = c.Text();
    const std::string& tag = m.runtimes()[i].report.tag();
    const std::string pid = std::to_string(m.runtimes()[i].report.pid());
    if (tag.starts_with("llama3") && training.empty()) {
      training = text;
      EXPECT_NE(text.find("— pid " + pid + ", user mlteam, slurm job 4242"), std::string::npos);
    }
    if (tag.starts_with("vllm") && serving.empty()) {
      serving = text;
      EXPECT_NE(text.find("— pid " + pid +
                          ", user serving, pod inference/vllm-llama2-7b-0 (container vllm)"),
                std::string::npos);
    }
  }
  EXPECT_FALSE(training.empty());
  EXPECT_FALSE(serving.empty());
}

// A failed device is marked on its grid row and comes first in the Diagnosis with what to do; every
// HBM row ends with the device's power.
TEST(View, UnhealthyDevicesAreMarkedAndExplained) {
  static const Model m = testing::BuildModel("sim:trn2.48xlarge", "ecc-degradation", 200);
  TextCanvas c(200, 80);
  Render(m, Plain(), c);
  const std::string text = c.Text();
  EXPECT_NE(text.find("\nND3X "), std::string::npos) << text;
  EXPECT_EQ(text.find("\nND2X"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nND2!"), std::string::npos) << text;
  const std::size_t diagnosis = text.find("\nDiagnosis");
  ASSERT_NE(diagnosis, std::string::npos) << text;
  const std::size_t line = text.find("\nND3 failed: ", diagnosis);
  ASSERT_NE(line, std::string::npos) << text;
  EXPECT_EQ(text.find('\n', diagnosis + 1), line) << "the device's line comes first";
  EXPECT_NE(text.find("uncorrectable HBM ECC errors since the driver loaded", line),
            std::string::npos);
  EXPECT_NE(text.find("— replace: drain it and replace the hardware", line), std::string::npos);
  EXPECT_NE(text.find(" pwr "), std::string::npos) << text;
  // A healthy instance has no mark and no device line.
  TextCanvas healthy(200, 80);
  Render(Trn1Large(), Plain(), healthy);
  EXPECT_EQ(healthy.Text().find(" failed: "), std::string::npos);
  EXPECT_EQ(healthy.Text().find(" degraded: "), std::string::npos);
}

TEST(Format, AttributionSaysWhatIsKnown) {
  v1::Attribution a;
  EXPECT_EQ(AttributionText(a), "");
  a.set_uid(1001);
  EXPECT_EQ(AttributionText(a), "uid 1001");
  a.set_container_id(std::string(64, 'f'));
  EXPECT_EQ(AttributionText(a), "uid 1001, container ffffffffffff");
  a.set_pod_uid("1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b");
  a.set_user("bob\x1b[2J");
  a.set_slurm_job_id("4249");
  a.set_slurm_array_job_id("4242");
  a.set_slurm_array_task_id("7");
  a.set_slurm_step("batch");
  EXPECT_EQ(AttributionText(a),
            "user bob, pod uid 1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b, slurm job 4249 (array 4242 "
            "task 7) step batch");
}

// A long finding (input-bound: summary, advice, evidence) wraps at word boundaries when the panel
// has the rows, and says it was cut ("…") when it has not.
TEST(View, DiagnosisWrapsFindingsAtWords) {
  static const Model m = testing::BuildModel("sim:trn1.2xlarge", "input-bound", 90);
  ASSERT_FALSE(m.instance_findings().empty());
  TextCanvas c(80, 60);
  Render(m, Plain(), c);
  const std::string text = c.Text();
  const std::size_t at = text.find("\nDiagnosis (instance: input_bound)");
  ASSERT_NE(at, std::string::npos) << text;
  std::stringstream in(text.substr(at + 1));
  std::string line, panel;
  std::getline(in, line);
  int lines = 0;
  while (std::getline(in, line) && (line.rfind("● ", 0) == 0 || line.rfind("    ", 0) == 0)) {
    EXPECT_LE(TextWidth(line), 80) << line;
    panel += line.substr(line.rfind("● ", 0) == 0 ? 0 : 4) + " ";
    ++lines;
  }
  EXPECT_GE(lines, 4) << "summary, advice and evidence over several lines:\n" << panel;
  EXPECT_NE(panel.find("feed the cores faster"), std::string::npos) << panel;
  EXPECT_NE(panel.find("idle_between_executions_percent"), std::string::npos) << panel;
  EXPECT_EQ(panel.find("…"), std::string::npos) << "nothing cut with room to spare";
  // Squeezed: each finding keeps its first line, ending in "…".
  TextCanvas small(80, 24);
  Render(m, Plain(), small);
  EXPECT_NE(small.Text().find("● input_bound"), std::string::npos) << small.Text();
  const std::string squeezed = small.Text();
  const std::size_t bullet = squeezed.find("● input_bound");
  const std::string first = squeezed.substr(bullet, squeezed.find('\n', bullet) - bullet);
  EXPECT_EQ(first.substr(first.size() - std::string(" …").size()), " …") << first;
}

TEST(View, TabsFilterEverySection) {
  const Model& m = Trn2Mixed();
  ASSERT_EQ(TabCount(m), 13);  // all + 6 training workers + 6 inference replicas
  ViewState v = Plain();
  v.tab = 7;  // the 7th runtime, the first inference replica (training 412xx, then 881xx): tab [8]
  TextCanvas c(200, 60);
  Render(m, v, c);
  const std::string text = c.Text();
  EXPECT_NE(text.find(">[8]:vllm-replica0<"), std::string::npos) << text;
  // Only the replica's device (6) appears in the grid.
  EXPECT_NE(text.find("ND6 "), std::string::npos);
  EXPECT_EQ(text.find("ND0 "), std::string::npos);
}

TEST(View, FlopsModeShowsTeraflops) {
  ViewState v = Plain();
  v.flops = true;
  TextCanvas c(120, 40);
  Render(Trn1Large(), v, c);
  EXPECT_NE(c.Text().find("Utilization (Avg:"), std::string::npos);
  EXPECT_NE(c.Text().find("TF | Total:"), std::string::npos);
  EXPECT_NE(c.Text().find("TF]"), std::string::npos);
}

TEST(View, TreeExpandsDeviceCoreModel) {
  const Model& m = Trn1Small();
  ViewState v = Plain();
  std::vector<TreeRow> rows = BuildTree(m, v);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].label, "ND 0");
  v.expanded.insert("d0");
  rows = BuildTree(m, v);
  ASSERT_EQ(rows.size(), 3u);  // ND 0, NC 0, NC 1
  EXPECT_EQ(rows[1].label, "NC 0");
  v.expanded.insert("d0/c0");
  rows = BuildTree(m, v);
  EXPECT_EQ(rows[2].depth, 2);
  EXPECT_TRUE(rows[2].expandable);  // the model on NC 0
  EXPECT_EQ(rows[2].model_id, "10001");
  EXPECT_EQ(AllTreeNodes(m, v).size(), 1u + 2u + 2u);
  // Parent rows are sums of their children.
  double cores = 0;
  for (const TreeRow& r : rows) {
    if (r.depth == 1) cores += r.device_bytes;
  }
  EXPECT_DOUBLE_EQ(rows[0].device_bytes, cores);
}

TEST(View, HelpOverlayListsEveryKey) {
  ViewState v = Plain();
  v.help = true;
  TextCanvas c(100, 40);
  Render(Trn1Small(), v, c);
  const std::string text = c.Text();
  for (const char* key : {"q, Ctrl-C", "Enter", "x ", "a/d", "1-9", "f ", "+ / -", "Space", "g ",
                          "Ctrl-L", "mouse"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key;
  }
  // A framed box; at 80 columns it spans the width, so nothing behind shows at its edges.
  TextCanvas narrow(80, 24);
  Render(Trn1Small(), v, narrow);
  std::stringstream rows(narrow.Text());
  std::vector<std::string> lines;
  for (std::string line; std::getline(rows, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 24u);
  EXPECT_EQ(lines.front().rfind("┌─", 0), 0u) << lines.front();
  EXPECT_EQ(lines.back().rfind("└─", 0), 0u) << lines.back();
  for (std::size_t r = 1; r + 1 < lines.size(); ++r) {
    EXPECT_EQ(lines[r].rfind("│", 0), 0u) << r << ": " << lines[r];
    EXPECT_EQ(TextWidth(lines[r]), 80) << r << ": " << lines[r];
  }
  v.utf8 = false;
  Render(Trn1Small(), v, narrow);
  EXPECT_EQ(narrow.Text().rfind("+--", 0), 0u) << narrow.Text();
}

v1::Event DeviceEvent(std::uint64_t seq, const std::string& before, const std::string& after,
                      const std::string& summary) {
  v1::Event e;
  e.set_seq(seq);
  e.set_unix_ns(1796000000'000000000 + static_cast<std::int64_t>(seq) * 1'000'000'000);
  e.set_kind(v1::EVENT_KIND_DEVICE_HEALTH);
  e.mutable_subject()->set_neuron_device_index(3);
  e.set_before(before);
  e.set_after(after);
  e.set_summary(summary);
  return e;
}

TEST(View, TheEventListShowsTheNewestFirstAndTheNewestOnTheNoticeRow) {
  Model m = Trn1Small();
  v1::Welcome w;
  *w.mutable_inventory() = m.inventory();
  w.set_newest_event_seq(1);  // kept by the daemon before neuron-top connected
  m.SetWelcome(w);
  m.AddEvent(DeviceEvent(1, "", "ok", "kept from before"));
  EXPECT_EQ(m.last_notice, "") << "an event from before connecting is no news";
  m.AddEvent(DeviceEvent(2, "ok", "failed", "device 3 failed: uncorrectable HBM errors\x1b[2J"));
  EXPECT_EQ(m.last_notice, "device 3 failed: uncorrectable HBM errors") << "terminal-safe";
  ViewState v = Plain();
  v.events = true;
  TextCanvas c(120, 30);
  Render(m, v, c);
  const std::string text = c.Text();
  const auto newest = text.find("device_health  device 3  ok -> failed  device 3 failed");
  const auto older = text.find("device_health  device 3  ok  kept from before");
  ASSERT_NE(newest, std::string::npos) << text;
  ASSERT_NE(older, std::string::npos) << text;
  EXPECT_LT(newest, older) << "newest first";
  EXPECT_NE(text.find("recent events, newest first"), std::string::npos);
  for (std::uint64_t s = 3; s < 3 + Model::kMaxEvents; ++s)
    m.AddEvent(DeviceEvent(s, "a", "b", "x"));
  EXPECT_EQ(m.events().size(), Model::kMaxEvents);
  EXPECT_EQ(m.events().front().seq(), 3u);
}

// Every terminal-hostile form at once: OSC title, clear screen, CR, C1 CSI, bidi override.
const std::string kEvil =
    "ok\x1b]0;pwned\x07\x1b[2J\r\xc2\x9b"
    "31m\xe2\x80\xae"
    "end";

bool HasEscapes(const std::string& text) {
  for (const std::string_view bad : {"\x1b", "\x07", "\r", "\xc2\x9b", "\xe2\x80\xae"}) {
    if (text.find(bad) != std::string::npos) return true;
  }
  return false;
}

// A daemon's strings (on a real host: other users' runtime tags, model names, errors) in the
// Welcome and in reports are drawn without their escape sequences and control characters, in every
// section: title, tabs, diagnosis, collectives, the expanded memory tree.
TEST(View, DaemonTextIsDrawnWithoutEscapes) {
  Model m = Trn1Small();
  v1::Welcome welcome;
  *welcome.mutable_inventory() = m.inventory();
  welcome.mutable_inventory()->mutable_instance_info()->set_instance_type(kEvil);
  welcome.mutable_inventory()->mutable_instance_info()->set_instance_id(kEvil);
  m.SetWelcome(welcome);
  ASSERT_FALSE(m.runtimes().empty());
  v1::Report report;
  report.set_seq(m.last_seq() + 1);
  report.set_period_ns(1'000'000'000);
  for (int g = v1::GROUP_NEURONCORE_COUNTERS; g <= v1::GROUP_BOTTLENECK_ANALYSIS; ++g) {
    report.add_groups(static_cast<v1::Group>(g));
  }
  v1::RuntimeReport& r = *report.add_runtimes();
  r = m.runtimes().begin()->report;
  r.set_tag(kEvil);
  r.set_error(kEvil);
  for (v1::LoadedModel& model : *r.mutable_memory_used()->mutable_loaded_models()) {
    model.set_name(kEvil);
  }
  r.mutable_collectives_stats()->set_error(kEvil);
  v1::Finding& finding = *r.add_findings();
  finding.set_kind(v1::FINDING_KIND_ERRORS);
  finding.set_subject(kEvil);
  finding.set_summary(kEvil);
  finding.set_advice(kEvil);
  *report.add_findings() = finding;
  m.Apply(report);
  for (int tab : {0, 1}) {
    ViewState v = Plain();
    v.tab = tab;
    v.expanded = {};
    for (const std::string& id : AllTreeNodes(m, v)) v.expanded.insert(id);
    TextCanvas c(200, 100);
    Render(m, v, c);
    const std::string text = c.Text();
    EXPECT_NE(text.find("running on ok"), std::string::npos) << text;
    EXPECT_NE(text.find("]:ok"), std::string::npos) << "the tab names the runtime:\n" << text;
    EXPECT_FALSE(HasEscapes(text)) << text;
  }
}

}  // namespace
}  // namespace neuronmon::tui
