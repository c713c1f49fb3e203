// Pure pieces of neuron-top: canvas, formatting, graphs, keymap and the model's merging.
#include <gtest/gtest.h>

#include "tests/tui/model_fixture.h"
#include "tui/canvas.h"
#include "tui/format.h"
#include "tui/graph.h"
#include "tui/keymap.h"
#include "tui/model.h"

namespace neuronmon::tui {
namespace {

TEST(TextCanvas, ClipsAndKeepsUtf8Glyphs) {
  TextCanvas c(6, 2);
  c.Put(-2, 0, "abcdefgh", Role::kValue);
  c.Put(4, 1, "─●◀", Role::kWarning);
  EXPECT_EQ(c.Text(), "cdefgh\n    ─●\n");
  EXPECT_EQ(c.Styles(), "vvvvvv\n....WW\n");
  c.Put(0, 5, "off canvas", Role::kNormal);
  c.Paint(1, 0, 2, Role::kSelected);
  EXPECT_EQ(c.RoleAt(2, 0), Role::kSelected);
  EXPECT_EQ(TextWidth("ND◀ x"), 5);
  EXPECT_EQ(TakeColumns("a─b", 2), "a─");
}

TEST(TextCanvas, FoldToAsciiKeepsOneColumnPerCodePoint) {
  const std::string text =
      "idle 61% \u2014 feed \u201cfaster\u201d \u25cf ND5\u25c0 5\u00b5s \u2801\u2588 \u4e2d";
  const std::string folded = FoldToAscii(text);
  EXPECT_EQ(folded, "idle 61% - feed \"faster\" * ND5< 5us :# ?");
  EXPECT_EQ(static_cast<int>(folded.size()), TextWidth(text));
  EXPECT_EQ(FoldToAscii("plain [12.34%]"), "plain [12.34%]");
  EXPECT_EQ(FoldToAscii("\xff\x80x"), "??x");  // stray bytes, not a crash
}

TEST(Format, AsAwsNeuronTopShowsThem) {
  EXPECT_EQ(Percent(56.814), "56.81%");
  EXPECT_EQ(Percent(100), "  100%");
  EXPECT_EQ(Percent(0), " 0.00%");
  EXPECT_EQ(Tflops(10.004e12), "  10.004TF");
  EXPECT_EQ(Tflops(1e8), "       0TF");
  EXPECT_EQ(Bytes(0), "0.0B");
  EXPECT_EQ(Bytes(256 * 1024), "256.0KB");
  EXPECT_EQ(Bytes(17.5 * 1024 * 1024 * 1024), "17.5GB");
  EXPECT_EQ(BytesPerSecond(1.21e12), "1.2TB/s");
  EXPECT_EQ(Latency(612e-6), "612us");
  EXPECT_EQ(Latency(0.0043), "4.3ms");
  EXPECT_EQ(Latency(0), "-");
  EXPECT_EQ(Count(120), "120/s");
  EXPECT_EQ(Count(4500), "4.5k/s");
}

TEST(Format, DimensionsFromTheEnvironment) {
  EXPECT_EQ(DimensionFromEnv(nullptr, 120, 20, 1000), 120);
  EXPECT_EQ(DimensionFromEnv("80", 120, 20, 1000), 80);
  for (const char* bad : {"", "abc", "0", "-5", "80x", " 80"})
    EXPECT_EQ(DimensionFromEnv(bad, 120, 20, 1000), 120) << bad;
  EXPECT_EQ(DimensionFromEnv("5", 120, 20, 1000), 20);
  EXPECT_EQ(DimensionFromEnv("100000", 120, 20, 1000), 1000);
  EXPECT_EQ(DimensionFromEnv("99999999999999999999", 120, 20, 1000), 1000);
}

TEST(Graph, BrailleBlocksAndAscii) {
  const std::vector<double> ramp = {0, 25, 50, 75, 100, 100};
  const auto braille = RenderGraph(ramp, 100, 3, 1, GraphStyle::kBraille);
  ASSERT_EQ(braille.size(), 1u);
  EXPECT_EQ(TextWidth(braille[0]), 3);
  EXPECT_EQ(braille[0], "⢀⣴⣿");  // 25 | 0, 75 | 50, 100 | 100 in 2x4 dots
  EXPECT_EQ(RenderGraph(ramp, 100, 6, 1, GraphStyle::kBlocks)[0], " ▂▄▆██");
  EXPECT_EQ(RenderGraph(ramp, 100, 6, 1, GraphStyle::kAscii)[0], " :=*##");
  // Two rows: the top row only fills above half.
  const std::vector<double> two_values = {100, 40};
  const auto two = RenderGraph(two_values, 100, 2, 2, GraphStyle::kBlocks);
  EXPECT_EQ(two[0], "█ ");
  EXPECT_EQ(two[1], "█▆");
  // Short history leaves the left blank; the newest sample is at the right.
  const std::vector<double> one = {100};
  EXPECT_EQ(RenderGraph(one, 100, 4, 1, GraphStyle::kAscii)[0], "   #");
  EXPECT_EQ(NextGraphStyle(GraphStyle::kBraille, true), GraphStyle::kBlocks);
  EXPECT_EQ(NextGraphStyle(GraphStyle::kBraille, false), GraphStyle::kAscii);
}

TEST(Keymap, AwsKeysAndOurs) {
  auto act = [](Key k) { return Translate({k}, false).action; };
  EXPECT_EQ(act(CharKey('q')), Action::kQuit);
  EXPECT_EQ(act(Key::kCtrlC), Action::kQuit);
  EXPECT_EQ(act(Key::kUp), Action::kUp);
  EXPECT_EQ(act(Key::kEnter), Action::kToggleItem);
  EXPECT_EQ(act(CharKey('x')), Action::kToggleTree);
  EXPECT_EQ(act(CharKey('a')), Action::kPrevTab);
  EXPECT_EQ(act(CharKey('d')), Action::kNextTab);
  EXPECT_EQ(act(CharKey('f')), Action::kToggleFlops);
  EXPECT_EQ(act(CharKey('F')), Action::kToggleFlops);
  EXPECT_EQ(act(CharKey('h')), Action::kHelp);
  EXPECT_EQ(act(CharKey('?')), Action::kHelp);
  EXPECT_EQ(act(Key::kF1), Action::kHelp);
  EXPECT_EQ(act(CharKey('+')), Action::kSlower);
  EXPECT_EQ(act(CharKey('-')), Action::kFaster);
  EXPECT_EQ(act(CharKey(' ')), Action::kPause);
  EXPECT_EQ(act(CharKey('g')), Action::kNextGraph);
  EXPECT_EQ(act(Key::kCtrlL), Action::kRepaint);
  EXPECT_EQ(act(Key::kResize), Action::kResize);
  const Command tab = Translate({CharKey('3')}, false);
  EXPECT_EQ(tab.action, Action::kSelectTab);
  EXPECT_EQ(tab.tab, 3);
  const Command click = Translate({Key::kMouseClick, 7, 9}, false);
  EXPECT_EQ(click.action, Action::kClick);
  EXPECT_EQ(click.x, 7);
  EXPECT_EQ(click.y, 9);
  // While help is open any key closes it, but quit still quits.
  EXPECT_EQ(Translate({CharKey('f')}, true).action, Action::kCloseOverlay);
  EXPECT_EQ(Translate({CharKey('q')}, true).action, Action::kQuit);
  EXPECT_EQ(act(CharKey('z')), Action::kNone);
}

v1::Report RuntimeReport(std::uint64_t seq, std::vector<std::uint32_t> pids) {
  v1::Report r;
  r.set_seq(seq);
  r.add_groups(v1::GROUP_NEURONCORE_COUNTERS);
  for (std::uint32_t pid : pids) {
    v1::RuntimeReport* rt = r.add_runtimes();
    rt->set_pid(pid);
    rt->set_tag("t" + std::to_string(pid));
    v1::CoreCounters* c = rt->mutable_neuroncore_counters()->add_cores();
    c->set_index(pid % 2);
    c->set_utilization_percent(60);
  }
  return r;
}

TEST(Model, MergesGroupsDropsExitedRuntimesSumsTheAllTab) {
  Model m;
  v1::Welcome w;
  w.mutable_inventory()->mutable_hardware_info()->set_neuroncore_per_device_count(2);
  w.mutable_inventory()->add_devices();
  m.SetWelcome(w);
  m.Apply(RuntimeReport(1, {10, 12}));
  ASSERT_EQ(m.runtimes().size(), 2u);
  // pids 10 and 12 both use core 0: the "all" tab sums and caps at 100.
  EXPECT_DOUBLE_EQ(m.CoreUtilization(0)[0], 100);
  EXPECT_DOUBLE_EQ(m.CoreUtilization(10)[0], 60);
  // A report with only memory_info keeps the runtimes' groups.
  v1::Report memory;
  memory.set_seq(2);
  memory.add_groups(v1::GROUP_MEMORY_INFO);
  memory.mutable_system()->mutable_memory_info()->set_memory_total_bytes(42);
  m.Apply(memory);
  EXPECT_EQ(m.runtimes().size(), 2u);
  EXPECT_EQ(m.system().memory_info().memory_total_bytes(), 42u);
  // A runtime missing from a report with runtime groups has exited.
  m.Apply(RuntimeReport(3, {12}));
  ASSERT_EQ(m.runtimes().size(), 1u);
  EXPECT_EQ(m.runtimes().begin()->first, 12u);
  // Every report adds a history point per device.
  EXPECT_EQ(m.device_utilization()[0].values().size(), 3u);
  v1::Report none = RuntimeReport(4, {});
  m.Apply(none);
  EXPECT_TRUE(m.runtimes().empty());
}

TEST(Model, FromARealDaemonStream) {
  const Model m = testing::BuildModel("sim:trn1.32xlarge", "healthy-training", 60);
  EXPECT_EQ(m.runtimes().size(), 16u);
  EXPECT_EQ(m.device_utilization().size(), 16u);
  EXPECT_EQ(m.device_utilization()[0].values().size(), 61u);
  EXPECT_GT(m.device_utilization()[0].values().back(), 80);
  EXPECT_TRUE(m.system().has_hbm_stats());
}

}  // namespace
}  // namespace neuronmon::tui
