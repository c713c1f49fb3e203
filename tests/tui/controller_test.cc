// neuron-top's controller: what each key does to the screen's state, how client events change the
// model, and how --once trims a rendered frame.
#include "tui/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/tui/model_fixture.h"

namespace neuronmon::tui {
namespace {

// One device, two NeuronCores, one training runtime: a tree of ND 0 > NC 0, NC 1 > the model.
const Model& OneDevice() {
  static const Model m = testing::BuildModel("sim:trn1.2xlarge", "healthy-training", 5);
  return m;
}
// Sixteen devices and sixteen runtimes: sixteen tree rows, seventeen tabs.
const Model& SixteenDevices() {
  static const Model m = testing::BuildModel("sim:trn1.32xlarge", "healthy-training", 5);
  return m;
}

TopState StateOf(const Model& model) {
  TopState s;
  s.live = model;
  s.view.version = "0.1.0";
  return s;
}

Command Do(Action action) {
  Command c;
  c.action = action;
  return c;
}

Command SelectTab(int tab) {
  Command c;
  c.action = Action::kSelectTab;
  c.tab = tab;
  return c;
}

Command ClickAt(int x, int y) {
  Command c;
  c.action = Action::kClick;
  c.x = x;
  c.y = y;
  return c;
}

std::set<std::string> AllNodes(const TopState& s) {
  const std::vector<std::string> all = AllTreeNodes(ShownModel(s), s.view);
  return {all.begin(), all.end()};
}

int TreeRows(const TopState& s) {
  return static_cast<int>(BuildTree(ShownModel(s), s.view).size());
}

TEST(ControllerApply, QuitRepaintAndResizeAreLeftToTheLoop) {
  TopState s = StateOf(OneDevice());
  EXPECT_EQ(Apply(Do(Action::kQuit), s), Effect::kQuit);
  EXPECT_EQ(Apply(Do(Action::kRepaint), s), Effect::kRepaint);
  EXPECT_EQ(Apply(Do(Action::kResize), s), Effect::kResize);
  for (const Command& c :
       {Do(Action::kNone), Do(Action::kUp), Do(Action::kDown), Do(Action::kPageUp),
        Do(Action::kPageDown), Do(Action::kToggleItem), Do(Action::kToggleTree),
        Do(Action::kPrevTab), Do(Action::kNextTab), SelectTab(1), Do(Action::kToggleFlops),
        Do(Action::kHelp), Do(Action::kFaster), Do(Action::kSlower), Do(Action::kPause),
        Do(Action::kNextGraph), Do(Action::kNextGlyphs), ClickAt(0, 0),
        Do(Action::kCloseOverlay)}) {
    EXPECT_EQ(Apply(c, s), Effect::kNone) << static_cast<int>(c.action);
  }
  // Quit, repaint and resize leave what the screen shows alone.
  TopState t = StateOf(OneDevice());
  for (Action a : {Action::kQuit, Action::kRepaint, Action::kResize}) Apply(Do(a), t);
  EXPECT_EQ(t.view.tab, 0);
  EXPECT_FALSE(t.view.paused);
  EXPECT_TRUE(t.view.expanded.empty());
  EXPECT_DOUBLE_EQ(t.view.refresh_seconds, 1);
}

TEST(ControllerApply, UpAndDownStayOnTheVisibleTreeRows) {
  TopState s = StateOf(OneDevice());
  ASSERT_EQ(TreeRows(s), 1);  // ND 0, collapsed
  Apply(Do(Action::kDown), s);
  EXPECT_EQ(s.view.tree_cursor, 0) << "a one-row tree has nowhere to go";
  Apply(Do(Action::kUp), s);
  EXPECT_EQ(s.view.tree_cursor, 0);
  s.view.expanded.insert("d0");
  ASSERT_EQ(TreeRows(s), 3);  // ND 0, NC 0, NC 1
  for (int i = 0; i < 5; ++i) Apply(Do(Action::kDown), s);
  EXPECT_EQ(s.view.tree_cursor, 2);
  Apply(Do(Action::kUp), s);
  EXPECT_EQ(s.view.tree_cursor, 1);
  for (int i = 0; i < 5; ++i) Apply(Do(Action::kUp), s);
  EXPECT_EQ(s.view.tree_cursor, 0);
}

TEST(ControllerApply, PagesMoveByTheRowsTheLastFrameShowed) {
  TopState s = StateOf(SixteenDevices());
  ASSERT_EQ(TreeRows(s), 16);
  s.frame.tree_page = 6;
  std::vector<int> down;
  for (int i = 0; i < 4; ++i) {
    Apply(Do(Action::kPageDown), s);
    down.push_back(s.view.tree_cursor);
  }
  EXPECT_EQ(down, (std::vector<int>{6, 12, 15, 15}));
  std::vector<int> up;
  for (int i = 0; i < 4; ++i) {
    Apply(Do(Action::kPageUp), s);
    up.push_back(s.view.tree_cursor);
  }
  EXPECT_EQ(up, (std::vector<int>{9, 3, 0, 0}));
}

TEST(ControllerApply, EnterTogglesOnlyAnExpandableSelectedRow) {
  TopState s = StateOf(OneDevice());
  Apply(Do(Action::kToggleItem), s);
  EXPECT_EQ(s.view.expanded, (std::set<std::string>{"d0"}));
  Apply(Do(Action::kDown), s);  // NC 0
  Apply(Do(Action::kToggleItem), s);
  EXPECT_EQ(s.view.expanded, (std::set<std::string>{"d0", "d0/c0"}));
  Apply(Do(Action::kToggleItem), s);
  EXPECT_EQ(s.view.expanded, (std::set<std::string>{"d0"}));
  // A leaf (everything open: the last row is a category of the model's memory) does nothing.
  s.view.expanded = AllNodes(s);
  const std::vector<TreeRow> rows = BuildTree(ShownModel(s), s.view);
  ASSERT_FALSE(rows.back().expandable) << rows.back().id;
  s.view.tree_cursor = static_cast<int>(rows.size()) - 1;
  const std::set<std::string> open = s.view.expanded;
  Apply(Do(Action::kToggleItem), s);
  EXPECT_EQ(s.view.expanded, open);
  // A cursor past the rows (the tree shrank under it) does nothing either.
  s.view.tree_cursor = 99;
  Apply(Do(Action::kToggleItem), s);
  EXPECT_EQ(s.view.expanded, open);
}

TEST(ControllerApply, XOpensTheWholeTreeThenClosesIt) {
  TopState s = StateOf(OneDevice());
  const std::set<std::string> all = AllNodes(s);
  ASSERT_GE(all.size(), 3u);
  s.view.expanded = {"d0"};
  s.view.tree_cursor = 2;
  Apply(Do(Action::kToggleTree), s);
  EXPECT_EQ(s.view.expanded, all);
  EXPECT_EQ(s.view.tree_cursor, 0);
  s.view.tree_cursor = 2;
  Apply(Do(Action::kToggleTree), s);
  EXPECT_TRUE(s.view.expanded.empty());
  EXPECT_EQ(s.view.tree_cursor, 0);
}

TEST(ControllerApply, TabsWrapAndResetTheTreeCursor) {
  TopState s = StateOf(SixteenDevices());
  const int tabs = TabCount(ShownModel(s));
  ASSERT_EQ(tabs, 17);
  s.view.tree_cursor = 3;
  Apply(Do(Action::kPrevTab), s);
  EXPECT_EQ(s.view.tab, tabs - 1) << "a from the first tab goes to the last";
  EXPECT_EQ(s.view.tree_cursor, 0);
  s.view.tree_cursor = 3;
  Apply(Do(Action::kNextTab), s);
  EXPECT_EQ(s.view.tab, 0) << "d from the last tab goes to the first";
  EXPECT_EQ(s.view.tree_cursor, 0);
  Apply(Do(Action::kNextTab), s);
  Apply(Do(Action::kNextTab), s);
  EXPECT_EQ(s.view.tab, 2);
  Apply(Do(Action::kPrevTab), s);
  EXPECT_EQ(s.view.tab, 1);
}

TEST(ControllerApply, NumberKeysSelectOnlyATabThatExists) {
  TopState s = StateOf(OneDevice());
  ASSERT_EQ(TabCount(ShownModel(s)), 2);  // all, and the one runtime
  Apply(SelectTab(2), s);
  EXPECT_EQ(s.view.tab, 1);
  s.view.tree_cursor = 2;
  Apply(SelectTab(3), s);
  EXPECT_EQ(s.view.tab, 1) << "no third tab: stays";
  EXPECT_EQ(s.view.tree_cursor, 0);
  Apply(SelectTab(1), s);
  EXPECT_EQ(s.view.tab, 0);
}

TEST(ControllerApply, ClicksHitTabsAndTreeRowsOfTheLastFrame) {
  TopState s = StateOf(OneDevice());
  s.view.expanded = {"d0"};  // ND 0, NC 0 (expandable), NC 1
  s.frame.hits = {{Hit::Kind::kTab, 1, 10, 20, 2}, {Hit::Kind::kTreeRow, 30, 0, 50, 1}};
  Apply(ClickAt(25, 30), s);
  EXPECT_EQ(s.view.tree_cursor, 1) << "a click on a tree row selects it";
  EXPECT_EQ(s.view.expanded, (std::set<std::string>{"d0", "d0/c0"})) << "and toggles it";
  Apply(ClickAt(0, 30), s);
  EXPECT_EQ(s.view.expanded, (std::set<std::string>{"d0"}));
  // Outside every hit: nothing happens (x1 is exclusive).
  s.view.tree_cursor = 2;
  const std::pair<int, int> misses[] = {{50, 30}, {5, 31}, {9, 1}, {20, 1}, {15, 2}};
  for (auto [x, y] : misses) {
    Apply(ClickAt(x, y), s);
    EXPECT_EQ(s.view.tree_cursor, 2) << x << "," << y;
    EXPECT_EQ(s.view.tab, 0) << x << "," << y;
    EXPECT_EQ(s.view.expanded, (std::set<std::string>{"d0"})) << x << "," << y;
  }
  Apply(ClickAt(19, 1), s);
  EXPECT_EQ(s.view.tab, 1) << "tab hits are 1-based";
  EXPECT_EQ(s.view.tree_cursor, 0);
}

TEST(ControllerApply, ClicksFollowWhereARealFrameDrewTheTabs) {
  TopState s = StateOf(SixteenDevices());
  TextCanvas canvas(200, 60);
  s.frame = Render(ShownModel(s), s.view, canvas);
  const auto tab = std::find_if(s.frame.hits.begin(), s.frame.hits.end(), [](const Hit& h) {
    return h.kind == Hit::Kind::kTab && h.index == 5;
  });
  ASSERT_NE(tab, s.frame.hits.end());
  Apply(ClickAt(tab->x0, tab->y), s);
  EXPECT_EQ(s.view.tab, 4);
  canvas.Clear();
  Render(ShownModel(s), s.view, canvas);
  EXPECT_NE(canvas.Text().find(">[5]:"), std::string::npos) << canvas.Text();
}

TEST(ControllerApply, PauseFreezesACopyOfTheLiveModel) {
  TopState s = StateOf(OneDevice());
  s.view.expanded = {"d0"};
  Apply(Do(Action::kPause), s);
  ASSERT_TRUE(s.view.paused);
  s.live = Model();  // whatever arrives while paused
  EXPECT_EQ(&ShownModel(s), &s.frozen);
  EXPECT_TRUE(s.frozen.has_data());
  EXPECT_EQ(TabCount(ShownModel(s)), 2);
  // Keys act on what is shown: the frozen tree still has its three rows.
  Apply(Do(Action::kDown), s);
  Apply(Do(Action::kDown), s);
  EXPECT_EQ(s.view.tree_cursor, 2);
  Apply(Do(Action::kPause), s);
  EXPECT_FALSE(s.view.paused);
  EXPECT_EQ(&ShownModel(s), &s.live);
  EXPECT_EQ(TabCount(ShownModel(s)), 1);
  // Pausing again freezes the live model as it is now.
  Apply(Do(Action::kPause), s);
  EXPECT_FALSE(s.frozen.has_data());
}

TEST(ControllerApply, RefreshHalvesAndDoublesBetweenATenthAndAMinute) {
  TopState s = StateOf(OneDevice());
  std::vector<double> faster;
  for (int i = 0; i < 5; ++i) {
    Apply(Do(Action::kFaster), s);
    faster.push_back(s.view.refresh_seconds);
  }
  EXPECT_EQ(faster, (std::vector<double>{0.5, 0.25, 0.125, 0.1, 0.1}));
  for (int i = 0; i < 9; ++i) Apply(Do(Action::kSlower), s);
  EXPECT_DOUBLE_EQ(s.view.refresh_seconds, 51.2);
  Apply(Do(Action::kSlower), s);
  EXPECT_DOUBLE_EQ(s.view.refresh_seconds, 60);
  Apply(Do(Action::kSlower), s);
  EXPECT_DOUBLE_EQ(s.view.refresh_seconds, 60);
  Apply(Do(Action::kFaster), s);
  EXPECT_DOUBLE_EQ(s.view.refresh_seconds, 30);
}

TEST(ControllerApply, FlopsHelpGraphsAndGlyphs) {
  TopState s = StateOf(OneDevice());
  Apply(Do(Action::kToggleFlops), s);
  EXPECT_TRUE(s.view.flops);
  Apply(Do(Action::kToggleFlops), s);
  EXPECT_FALSE(s.view.flops);
  Apply(Do(Action::kHelp), s);
  EXPECT_TRUE(s.view.help);
  Apply(Do(Action::kHelp), s);
  EXPECT_TRUE(s.view.help) << "h again keeps the overlay";
  Apply(Do(Action::kCloseOverlay), s);
  EXPECT_FALSE(s.view.help);
  Apply(Do(Action::kEvents), s);
  EXPECT_TRUE(s.view.events);
  EXPECT_TRUE(KeysFor(s).help_open) << "any key closes the event list";
  Apply(Do(Action::kCloseOverlay), s);
  EXPECT_FALSE(s.view.events);
  client::Event told;
  told.kind = client::Event::Kind::kEvent;
  told.event.set_seq(5);
  told.event.set_summary("device 0 degraded");
  EXPECT_TRUE(Absorb(told, false, "test", s.live));
  EXPECT_EQ(s.live.events().size(), 1u);
  EXPECT_EQ(s.live.last_notice, "device 0 degraded");
  std::vector<GraphView> graphs;
  for (int i = 0; i < 3; ++i) {
    Apply(Do(Action::kNextGraph), s);
    graphs.push_back(s.view.graph);
  }
  EXPECT_EQ(graphs, (std::vector<GraphView>{GraphView::kHbm, GraphView::kCollectiveP99,
                                            GraphView::kUtilization}));
  s.view.utf8 = true;
  s.view.glyphs = GraphStyle::kBraille;
  std::vector<GraphStyle> glyphs;
  for (int i = 0; i < 3; ++i) {
    Apply(Do(Action::kNextGlyphs), s);
    glyphs.push_back(s.view.glyphs);
  }
  EXPECT_EQ(glyphs, (std::vector<GraphStyle>{GraphStyle::kBlocks, GraphStyle::kAscii,
                                             GraphStyle::kBraille}));
  s.view.utf8 = false;
  Apply(Do(Action::kNextGlyphs), s);
  EXPECT_EQ(s.view.glyphs, GraphStyle::kAscii) << "an ASCII terminal only has ASCII graphs";
}

client::Event EventOf(client::Event::Kind kind, const std::string& text = "") {
  client::Event e;
  e.kind = kind;
  e.text = text;
  return e;
}

client::Event Connected() {
  client::Event e = EventOf(client::Event::Kind::kConnected);
  e.welcome.mutable_inventory()->mutable_hardware_info()->set_neuroncore_per_device_count(2);
  e.welcome.mutable_inventory()->add_devices();
  return e;
}

// An OSC retitle, a clear screen and a line break: what a hostile daemon's text could hold.
const char kHostile[] = "lost\x1b]0;pwned\x07 the\x1b[2J daemon\r\n";
const char kHostileSanitized[] = "lost the daemon  ";

TEST(ControllerAbsorb, ConnectedIsLiveOrEmbedded) {
  Model m;
  EXPECT_TRUE(Absorb(Connected(), false, "unix:/run/n.sock", m));
  EXPECT_TRUE(m.has_inventory());
  EXPECT_EQ(m.connection, ConnectionState::kLive);
  EXPECT_EQ(m.endpoint, "unix:/run/n.sock");
  Model embedded;
  EXPECT_TRUE(Absorb(Connected(), true, "embedded simulator", embedded));
  EXPECT_EQ(embedded.connection, ConnectionState::kEmbedded);
  EXPECT_EQ(embedded.endpoint, "embedded simulator");
}

TEST(ControllerAbsorb, ReportsAreMerged) {
  Model m;
  client::Event e = EventOf(client::Event::Kind::kReport);
  e.report.set_seq(1);
  EXPECT_TRUE(Absorb(e, false, "unix:/run/n.sock", m));
  EXPECT_TRUE(m.has_data());
}

TEST(ControllerAbsorb, DisconnectedIsReconnectingWithASanitizedNotice) {
  Model m;
  Absorb(Connected(), false, "unix:/run/n.sock", m);
  EXPECT_TRUE(Absorb(EventOf(client::Event::Kind::kDisconnected, kHostile), false, "ignored", m));
  EXPECT_EQ(m.connection, ConnectionState::kReconnecting);
  EXPECT_EQ(m.last_notice, kHostileSanitized);
  EXPECT_EQ(m.endpoint, "unix:/run/n.sock");
}

TEST(ControllerAbsorb, ShutdownNoticeStopsOtherNoticesOnlySay) {
  Model m;
  Absorb(Connected(), false, "unix:/run/n.sock", m);
  client::Event reloaded = EventOf(client::Event::Kind::kNotice);
  reloaded.notice.set_kind(v1::NOTICE_KIND_RELOADED);
  reloaded.notice.set_text("configuration reloaded");
  EXPECT_TRUE(Absorb(reloaded, false, "unix:/run/n.sock", m));
  EXPECT_EQ(m.connection, ConnectionState::kLive);
  EXPECT_EQ(m.last_notice, "configuration reloaded");
  client::Event shutdown = EventOf(client::Event::Kind::kNotice);
  shutdown.notice.set_kind(v1::NOTICE_KIND_SHUTDOWN);
  shutdown.notice.set_text(kHostile);
  EXPECT_TRUE(Absorb(shutdown, false, "unix:/run/n.sock", m));
  EXPECT_EQ(m.connection, ConnectionState::kStopped);
  EXPECT_EQ(m.last_notice, kHostileSanitized);
}

TEST(ControllerAbsorb, ASubscriptionsConfirmationIsNotANotice) {
  Model m;
  Absorb(Connected(), false, "unix:/run/n.sock", m);
  client::Event subscribed = EventOf(client::Event::Kind::kNotice);
  subscribed.notice.set_kind(v1::NOTICE_KIND_SUBSCRIBED);
  subscribed.notice.set_text("subscribed: every group every 1s");
  EXPECT_FALSE(Absorb(subscribed, false, "unix:/run/n.sock", m));
  EXPECT_EQ(m.last_notice, "");
}

// A notice takes the key-help row for a while: an incident's a minute, others 10 s.
TEST(NoticeBar, ShowsTheLatestNoticeForAWhile) {
  using std::chrono::seconds;
  const NoticeBar::Time t0{};
  Model m;
  ViewState v;
  NoticeBar bar;
  EXPECT_FALSE(bar.Update(m, v, t0));
  m.last_notice = "configuration reloaded";
  EXPECT_TRUE(bar.Update(m, v, t0));
  EXPECT_EQ(v.notice, "configuration reloaded");
  EXPECT_FALSE(bar.Update(m, v, t0 + seconds(9)));
  EXPECT_TRUE(bar.Update(m, v, t0 + seconds(10)));
  EXPECT_EQ(v.notice, "");
  m.last_notice = "incident saved: /var/lib/neuron-monitor/incidents/x.nmrec (hang for 10s)";
  EXPECT_TRUE(bar.Update(m, v, t0 + seconds(20)));
  EXPECT_FALSE(bar.Update(m, v, t0 + seconds(79)));
  EXPECT_EQ(v.notice, m.last_notice);
  EXPECT_TRUE(bar.Update(m, v, t0 + seconds(80)));
  EXPECT_EQ(v.notice, "");

  // On the screen it replaces the key help.
  TextCanvas canvas(120, 40);
  v.notice = "incident saved: /x.nmrec";
  Render(m, v, canvas);
  const std::string text = canvas.Text();
  EXPECT_NE(text.find(" incident saved: /x.nmrec"), std::string::npos);
  EXPECT_EQ(text.find("h: help"), std::string::npos);
}

TEST(ControllerAbsorb, InfoIsSanitizedAndDoesNotRedraw) {
  Model m;
  Absorb(Connected(), true, "embedded simulator", m);
  EXPECT_FALSE(Absorb(EventOf(client::Event::Kind::kInfo, kHostile), true, "x", m));
  EXPECT_EQ(m.info, kHostileSanitized);
  EXPECT_EQ(m.connection, ConnectionState::kEmbedded);
  EXPECT_EQ(m.last_notice, "");
}

TEST(ControllerAbsorb, GapsAndErrorsChangeNothingShown) {
  Model m;
  Absorb(Connected(), false, "unix:/run/n.sock", m);
  client::Event gap = EventOf(client::Event::Kind::kGap, "gap");
  gap.notice.set_kind(v1::NOTICE_KIND_GAP);
  gap.notice.set_text("reports 3..9 dropped");
  EXPECT_FALSE(Absorb(gap, false, "unix:/run/n.sock", m));
  client::Event error = EventOf(client::Event::Kind::kError, "refused");
  EXPECT_FALSE(Absorb(error, false, "unix:/run/n.sock", m));
  EXPECT_EQ(m.connection, ConnectionState::kLive);
  EXPECT_EQ(m.last_notice, "");
  EXPECT_FALSE(m.has_data());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ControllerOnce, WithoutAHeightDropsTheBlankTailAndTheKeyHelp) {
  EXPECT_EQ(TrimOnceFrame("title\nbody 1\n\nbody 2\n\n\n\ntabs\nq: quit\n", 0),
            "title\nbody 1\n\nbody 2\ntabs\n")
      << "blank rows inside the body stay";
  EXPECT_EQ(TrimOnceFrame("title\ntabs\nq: quit\n", -1), "title\ntabs\n");
  // A real frame on a tall canvas: the title first, the tab bar last, nothing else trailing.
  TextCanvas canvas(100, 400);
  ViewState v;
  v.version = "0.1.0";
  Render(SixteenDevices(), v, canvas);
  const std::vector<std::string> rendered = Lines(canvas.Text());
  const std::vector<std::string> lines = Lines(TrimOnceFrame(canvas.Text(), 0));
  ASSERT_GT(lines.size(), 20u);
  ASSERT_LT(lines.size(), rendered.size());
  EXPECT_NE(lines.front().find("neuron-top 0.1.0 running on i-sim"), std::string::npos);
  EXPECT_EQ(lines.back(), rendered[rendered.size() - 2]);
  EXPECT_EQ(lines.back().rfind("Neuron Apps", 0), 0u) << lines.back();
  EXPECT_FALSE(lines[lines.size() - 2].empty()) << "no blank rows before the tab bar";
  EXPECT_EQ(std::vector<std::string>(rendered.begin(), rendered.begin() + lines.size() - 1),
            std::vector<std::string>(lines.begin(), lines.end() - 1))
      << "the body is the frame's, row for row";
  for (const std::string& line : lines) EXPECT_EQ(line.find("q: quit"), std::string::npos) << line;
}

TEST(ControllerOnce, WithAHeightKeepsItAndBlanksTheLastRow) {
  EXPECT_EQ(TrimOnceFrame("title\nbody\ntabs\nq: quit\n", 4), "title\nbody\ntabs\n\n");
  EXPECT_EQ(TrimOnceFrame("title\n\ntabs\nq: quit\n", 4), "title\n\ntabs\n\n")
      << "blank rows stay: the frame keeps its height";
  EXPECT_EQ(TrimOnceFrame("title\ntabs\nq: quit\n", 3), "title\ntabs\nq: quit\n")
      << "under 4 rows: as rendered";
  TextCanvas canvas(90, 30);
  ViewState v;
  v.version = "0.1.0";
  Render(OneDevice(), v, canvas);
  const std::vector<std::string> rendered = Lines(canvas.Text());
  ASSERT_NE(rendered.back().find("q: quit"), std::string::npos) << rendered.back();
  const std::vector<std::string> lines = Lines(TrimOnceFrame(canvas.Text(), 30));
  ASSERT_EQ(lines.size(), 30u);
  EXPECT_EQ(lines.back(), "");
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.end() - 1),
            std::vector<std::string>(rendered.begin(), rendered.end() - 1));
}

}  // namespace
}  // namespace neuronmon::tui
