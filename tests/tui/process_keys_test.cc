// The Processes view's keys, from the terminal key through Translate and Apply to the state:
// selection, sort picker, reverse, filter prompt, tree, Enter, and `k` with its confirmation —
// the signal sender is a fake, so no test sends a real signal.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "tests/tui/process_model_fixture.h"
#include "tui/controller.h"

namespace neuronmon::tui {
namespace {

struct Top {
  TopState state;
  std::vector<std::pair<std::uint32_t, int>> sent;
  int error = 0;

  explicit Top(bool simulated = false) {
    state.live = testing::ProcessModel(simulated);
    state.view.version = "0.1.0";
    state.signals.sender = [this](std::uint32_t pid, std::uint64_t, int signal) {
      sent.emplace_back(pid, signal);
      return error;
    };
  }
  // Presses `key` as the loop does: translated for the screen shown, then applied.
  Effect Press(Key key) { return Apply(Translate({key}, KeysFor(state)), state); }
  Effect Press(char c) { return Press(CharKey(c)); }
  void Type(const std::string& text) {
    for (char c : text) Press(c);
  }
  const ProcessesView& procs() const { return state.view.procs; }
  std::vector<std::uint32_t> Listed() const { return ListedPids(ShownModel(state), procs()); }
  std::uint32_t Selected() const { return SelectedPid(Listed(), procs()); }
};

TEST(ProcessKeys, POpensAndLeavesTheView) {
  Top top;
  top.Press('p');
  EXPECT_TRUE(top.procs().shown);
  top.Press('p');
  EXPECT_FALSE(top.procs().shown);
  top.Press('p');
  top.Press(Key::kEscape);  // no filter to clear: Esc leaves
  EXPECT_FALSE(top.procs().shown);
}

TEST(ProcessKeys, ArrowsSelectAndTheSelectionFollowsThePidThroughResorting) {
  Top top;
  top.Press('p');
  // By utilization, descending: 300 (60 %), 100 (25 %), 200 (n/a).
  EXPECT_EQ(top.Listed(), (std::vector<std::uint32_t>{300, 100, 200}));
  EXPECT_EQ(top.Selected(), 300u);
  top.Press(Key::kDown);
  EXPECT_EQ(top.Selected(), 100u);
  top.Press('r');  // ascending: 100, 300, 200 — still on 100
  EXPECT_EQ(top.Listed(), (std::vector<std::uint32_t>{100, 300, 200}));
  EXPECT_EQ(top.Selected(), 100u);
  top.Press(Key::kEnd);
  EXPECT_EQ(top.Selected(), 200u);
  top.Press(Key::kDown);  // stays on the last
  EXPECT_EQ(top.Selected(), 200u);
  top.Press(Key::kHome);
  EXPECT_EQ(top.Selected(), 100u);
  top.Press('j');
  EXPECT_EQ(top.Selected(), 300u);
}

TEST(ProcessKeys, PagesMoveByTheLinesTheLastFrameShowed) {
  Top top;
  top.Press('p');
  top.state.frame.process_page = 2;
  top.Press(Key::kPageDown);  // 300 -> two down: 200
  EXPECT_EQ(top.Selected(), 200u);
  top.Press(Key::kPageDown);  // stays on the last
  EXPECT_EQ(top.Selected(), 200u);
  top.Press(Key::kPageUp);
  EXPECT_EQ(top.Selected(), 300u);
}

TEST(ProcessKeys, SOpensThePickerAndEnterSortsByThePickedColumn) {
  Top top;
  top.Press('p');
  top.Press('s');
  EXPECT_TRUE(top.procs().picking);
  EXPECT_EQ(top.procs().pick, ProcessColumn::kUtilization);
  top.Press('q');  // the picker has the keys: q does not quit
  EXPECT_TRUE(top.procs().picking);
  top.Press(Key::kDown);  // VERDICT
  top.Press(Key::kEnter);
  EXPECT_FALSE(top.procs().picking);
  EXPECT_EQ(top.procs().sort, ProcessColumn::kVerdict);
  top.Press(Key::kF6);
  top.Press(Key::kUp);
  top.Press(Key::kEscape);  // cancelled: the sort stays
  EXPECT_EQ(top.procs().sort, ProcessColumn::kVerdict);
}

TEST(ProcessKeys, SlashTypesABoundedFilterEnterKeepsItEscClearsIt) {
  Top top;
  top.Press('p');
  top.Press('/');
  EXPECT_TRUE(KeysFor(top.state).prompt);
  top.Type("qBOB");
  EXPECT_EQ(top.Press(Key::kBackspace), Effect::kNone);
  EXPECT_EQ(top.procs().filter, "qBO");  // q typed, not quit
  top.Press(Key::kBackspace);
  top.Press(Key::kBackspace);
  top.Press(Key::kBackspace);
  top.Type("bob");
  top.Press(Key::kEnter);
  EXPECT_FALSE(top.procs().filtering);
  EXPECT_EQ(top.Listed(), (std::vector<std::uint32_t>{200}));
  top.Press(Key::kEscape);  // clears the filter, stays in the view
  EXPECT_TRUE(top.procs().shown);
  EXPECT_EQ(top.Listed().size(), 3u);
  top.Press('/');
  top.Type(std::string(200, 'x'));
  EXPECT_EQ(top.procs().filter.size(), kMaxFilterLength);
  top.Press(Key::kEscape);
  EXPECT_EQ(top.procs().filter, "");
  EXPECT_EQ(top.Press(Key::kCtrlC), Effect::kQuit);  // Ctrl-C always quits
}

TEST(ProcessKeys, EGroupsByJobAndTheSelectionMovesInListedOrder) {
  Top top;
  top.Press('p');
  top.Press('e');
  EXPECT_TRUE(top.procs().tree);
  // Groups in the order of their first member (300 has no job: last).
  EXPECT_EQ(top.Listed(), (std::vector<std::uint32_t>{100, 200, 300}));
  top.Press(Key::kF5);
  EXPECT_FALSE(top.procs().tree);
}

TEST(ProcessKeys, EnterOpensTheSelectedProcesssTab) {
  Top top;
  top.Press('p');
  top.Press(Key::kDown);  // pid 100: the first runtime, tab 2
  top.Press(Key::kEnter);
  EXPECT_FALSE(top.procs().shown);
  EXPECT_EQ(top.state.view.tab, 1);
}

TEST(ProcessKeys, KAsksThenSendsTheChosenSignalToTheSelectedPid) {
  Top top;
  top.Press('p');
  top.Press(Key::kDown);  // pid 100
  top.Press('k');
  ASSERT_TRUE(top.procs().confirm_pid.has_value());
  EXPECT_EQ(*top.procs().confirm_pid, 100u);
  EXPECT_EQ(top.procs().confirm_signal, SIGTERM);
  EXPECT_EQ(top.procs().confirm_command, "python train.py --lr 3e-4");
  EXPECT_TRUE(top.sent.empty());  // nothing before the confirmation
  top.Press('k');                 // SIGKILL
  EXPECT_EQ(top.procs().confirm_signal, SIGKILL);
  top.Press('q');  // not a quit, not a choice
  EXPECT_TRUE(top.procs().confirm_pid.has_value());
  top.Press('y');
  ASSERT_EQ(top.sent.size(), 1u);
  EXPECT_EQ(top.sent[0], std::make_pair(100u, SIGKILL));
  EXPECT_FALSE(top.procs().confirm_pid.has_value());
  EXPECT_EQ(top.state.live.last_notice, "sent SIGKILL to pid 100 (python train.py --lr 3e-4)");
}

TEST(ProcessKeys, CancelledSendsNothing) {
  Top top;
  top.Press('p');
  top.Press('k');
  top.Press('n');
  top.Press('k');
  top.Press(Key::kEscape);
  EXPECT_TRUE(top.sent.empty());
  EXPECT_TRUE(top.procs().shown);  // Esc closed the confirmation, not the view
  EXPECT_EQ(top.state.live.last_notice, "no signal sent");
}

TEST(ProcessKeys, SimulatedPidsAreRefusedWithoutAConfirmation) {
  Top top(/*simulated=*/true);
  top.Press('p');
  top.Press(Key::kF9);
  EXPECT_FALSE(top.procs().confirm_pid.has_value());
  EXPECT_EQ(top.state.live.last_notice,
            "not sent: pid 300 is simulated, not a process on this host");
  const std::uint64_t count = top.state.live.notice_count;
  top.Press('k');  // the same refusal again is a new notice
  EXPECT_EQ(top.state.live.notice_count, count + 1);
  top.Press('y');
  EXPECT_TRUE(top.sent.empty());
}

TEST(ProcessKeys, OverTcpTheRefusalIsShown) {
  Top top;
  top.state.signals.refusal = "neuron-top is connected over TCP (--connect)";
  top.Press('p');
  top.Press('k');
  EXPECT_FALSE(top.procs().confirm_pid.has_value());
  EXPECT_EQ(top.state.live.last_notice, "not sent: neuron-top is connected over TCP (--connect)");
  EXPECT_TRUE(top.sent.empty());
}

TEST(ProcessKeys, OnlyADaemonOnThisHostGetsASender) {
  client::Endpoint tcp;
  tcp.kind = client::Endpoint::Kind::kTcp;
  tcp.host = "10.0.0.7";
  tcp.port = 9414;
  const SignalTarget remote = SignalTargetFor(tcp);
  EXPECT_FALSE(remote.sender);
  EXPECT_EQ(remote.refusal,
            "neuron-top is connected over TCP (--connect): the pids shown may be another host's");
  for (client::Endpoint::Kind kind : {client::Endpoint::Kind::kUnix, client::Endpoint::Kind::kAuto,
                                      client::Endpoint::Kind::kStandalone}) {
    client::Endpoint local;
    local.kind = kind;
    const SignalTarget target = SignalTargetFor(local);
    EXPECT_TRUE(target.sender);  // not called: the real kill(2)
    EXPECT_EQ(target.refusal, "");
  }
}

TEST(ProcessKeys, AFailedKillShowsTheError) {
  Top top;
  top.error = EPERM;
  top.Press('p');
  top.Press('k');
  top.Press(Key::kEnter);
  ASSERT_EQ(top.sent.size(), 1u);
  EXPECT_EQ(top.state.live.last_notice, "SIGTERM to pid 300 failed: Operation not permitted");
}

TEST(ProcessKeys, AProcessThatLeftBeforeTheConfirmationIsNotSignalled) {
  Top top;
  top.Press('p');
  top.Press('k');
  // The application exits: the next report lists the others only.
  v1::Report report;
  report.set_seq(2);
  report.add_groups(v1::GROUP_NEURONCORE_COUNTERS);
  report.add_runtimes()->set_pid(100);
  report.add_runtimes()->set_pid(200);
  top.state.live.Apply(report);
  top.Press('y');
  EXPECT_TRUE(top.sent.empty());
  EXPECT_EQ(top.state.live.last_notice, "not sent: pid 300 is no longer a Neuron application");
}

TEST(ProcessKeys, MainViewKeysKeepTheirMeaningOutsideTheView) {
  Top top;
  EXPECT_EQ(Translate({CharKey('k')}, KeysFor(top.state)).action, Action::kUp);
  EXPECT_EQ(Translate({CharKey('s')}, KeysFor(top.state)).action, Action::kNone);
  top.Press('k');
  top.Press('/');
  EXPECT_FALSE(top.procs().shown);
  EXPECT_TRUE(top.sent.empty());
}

TEST(ProcessKeys, ClicksSelectTheProcessDrawnThere) {
  Top top;
  top.Press('p');
  Hit hit;
  hit.kind = Hit::Kind::kProcess;
  hit.y = 5;
  hit.x1 = 80;
  hit.index = 200;
  top.state.frame.hits.push_back(hit);
  Command click;
  click.action = Action::kClick;
  click.x = 10;
  click.y = 5;
  Apply(click, top.state);
  EXPECT_EQ(top.Selected(), 200u);
}

}  // namespace
}  // namespace neuronmon::tui
