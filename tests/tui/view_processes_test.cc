// The Processes view as drawn: columns and rows, unavailable figures, the sort mark, grouping by
// job, the prompts, the key help, narrow terminals, and a sweep of sizes on the mixed scenario.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tui/model_fixture.h"
#include "tests/tui/process_model_fixture.h"
#include "tui/view.h"

namespace neuronmon::tui {
namespace {

ViewState ProcessesShown() {
  ViewState v;
  v.version = "0.1.0";
  v.procs.shown = true;
  return v;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The screen's line containing `needle`, or "".
std::string LineWith(const std::string& text, const std::string& needle) {
  for (const std::string& l : Lines(text)) {
    if (l.find(needle) != std::string::npos) return l;
  }
  return "";
}

std::string Draw(const Model& m, const ViewState& v, int w = 140, int h = 20) {
  TextCanvas canvas(w, h);
  const Frame f = Render(m, v, canvas);
  EXPECT_EQ(f.overflow, 0);
  return canvas.Text();
}

TEST(ProcessesView, EveryColumnAndOneRowPerApplication) {
  const std::string screen = Draw(testing::ProcessModel(false), ProcessesShown());
  const std::string headings = LineWith(screen, "COMMAND");
  for (const char* column :
       {"PID", "USER", "JOB", "DEVICES", "CORES", "DEVICE MEM", "HOST MEM", "UTIL▼", "VERDICT"}) {
    EXPECT_NE(headings.find(column), std::string::npos) << column << "\n" << screen;
  }
  const std::string train = LineWith(screen, "python train.py");
  for (const char* cell : {"100", "alice", "70_3", "0-3", "2.0GB", "1.0GB", "25.0%", "input_bound"})
    EXPECT_NE(train.find(cell), std::string::npos) << cell << "\n" << screen;
  const std::string serve = LineWith(screen, "vllm serve");
  EXPECT_NE(serve.find("inference/vllm-0"), std::string::npos) << screen;
  EXPECT_NE(serve.find("n/a"), std::string::npos) << screen;
  EXPECT_EQ(serve.find("0.0B"), std::string::npos) << "unavailable shown as zero\n" << screen;
  EXPECT_NE(LineWith(screen, "late").find("60.0%"), std::string::npos) << screen;
  EXPECT_NE(screen.find("3 of 3 shown"), std::string::npos) << screen;
  EXPECT_NE(screen.find("Processes: 3 Neuron applications, by UTIL (descending)"),
            std::string::npos);
  EXPECT_NE(screen.find("k/F9: signal"), std::string::npos) << screen;
  // Sorted by utilization, descending: late (60 %) above train (25 %) above serve (n/a).
  EXPECT_LT(screen.find("late"), screen.find("python train.py"));
  EXPECT_LT(screen.find("python train.py"), screen.find("vllm serve"));
}

TEST(ProcessesView, TheSelectedRowIsHighlighted) {
  ViewState v = ProcessesShown();
  v.procs.selected = 200;
  TextCanvas canvas(140, 20);
  const Frame f = Render(testing::ProcessModel(false), v, canvas);
  bool found = false;
  for (const Hit& h : f.hits) {
    if (h.kind != Hit::Kind::kProcess || h.index != 200) continue;
    found = true;
    EXPECT_EQ(canvas.RoleAt(0, h.y), Role::kSelected);
    EXPECT_EQ(canvas.RoleAt(139, h.y), Role::kSelected);
  }
  EXPECT_TRUE(found);
}

TEST(ProcessesView, GroupedByJobWithATotalsLine) {
  ViewState v = ProcessesShown();
  v.procs.tree = true;
  const std::string screen = Draw(testing::ProcessModel(false), v);
  EXPECT_NE(screen.find("▾ job 70_3 (1 process): devices 0, 4 cores, device mem 2.0GB, host mem "
                        "1.0GB, util 25.0%, verdict input_bound"),
            std::string::npos)
      << screen;
  // Totals of what cannot be measured are unavailable too.
  EXPECT_NE(screen.find("device mem n/a, host mem n/a, util n/a, verdict -"), std::string::npos)
      << screen;
  EXPECT_NE(screen.find("▾ job inference/vllm-0 (1 process)"), std::string::npos) << screen;
  EXPECT_NE(screen.find("▾ no job (1 process)"), std::string::npos) << screen;
  EXPECT_NE(screen.find("grouped by job"), std::string::npos);
  EXPECT_LT(screen.find("job 70_3"), screen.find("python train.py"));
  EXPECT_LT(screen.find("python train.py"), screen.find("job inference"));
  // Without UTF-8, ASCII marks.
  v.utf8 = false;
  const std::string ascii = Draw(testing::ProcessModel(false), v);
  EXPECT_NE(ascii.find("- job 70_3 (1 process)"), std::string::npos) << ascii;
  EXPECT_NE(ascii.find("UTILv"), std::string::npos) << ascii;
  for (unsigned char ch : ascii) EXPECT_LT(ch, 0x80) << ascii;
}

TEST(ProcessesView, FilterPromptAndMatches) {
  ViewState v = ProcessesShown();
  v.procs.filter = "BOB";
  v.procs.filtering = true;
  const std::string screen = Draw(testing::ProcessModel(false), v);
  EXPECT_NE(screen.find("Filter: BOB_"), std::string::npos) << screen;
  EXPECT_NE(screen.find("vllm serve"), std::string::npos);
  EXPECT_EQ(screen.find("python train.py"), std::string::npos);
  v.procs.filtering = false;
  v.procs.filter = "nothing-matches";
  const std::string none = Draw(testing::ProcessModel(false), v);
  EXPECT_NE(none.find("no application matches the filter"), std::string::npos) << none;
  EXPECT_NE(none.find("0 of 3 shown (filter \"nothing-matches\""), std::string::npos) << none;
}

TEST(ProcessesView, TheConfirmationNamesSignalPidAndCommand) {
  ViewState v = ProcessesShown();
  v.procs.confirm_pid = 100;
  v.procs.confirm_command = "python train.py --lr 3e-4";
  v.procs.confirm_signal = SIGTERM;
  const std::string screen = Draw(testing::ProcessModel(false), v);
  EXPECT_NE(screen.find("Send SIGTERM to pid 100 (python train.py --lr 3e-4)?  y/Enter: send  "
                        "n/Esc: cancel  t:TERM i:INT h:HUP k:KILL"),
            std::string::npos)
      << screen;
  v.procs.confirm_command = "torchrun --nproc-per-node 6 train_llama.py --model llama3-8b --bf16";
  v.procs.confirm_signal = SIGKILL;
  const std::string cut = Draw(testing::ProcessModel(false), v);
  EXPECT_NE(cut.find("Send SIGKILL to pid 100 (torchrun --nproc-per-node 6 train_llama.…)?  "
                     "y/Enter: send"),
            std::string::npos)
      << cut;
}

TEST(ProcessesView, ThePickerListsEveryColumnAndMarksTheSortedOne) {
  ViewState v = ProcessesShown();
  v.procs.picking = true;
  v.procs.pick = ProcessColumn::kHostMemory;
  TextCanvas canvas(140, 20);
  Render(testing::ProcessModel(false), v, canvas);
  const std::string screen = canvas.Text();
  EXPECT_NE(screen.find("Sort by (Enter, Esc)"), std::string::npos) << screen;
  EXPECT_NE(screen.find("* UTIL"), std::string::npos) << screen;
  const std::size_t at = screen.find("Sort by");
  ASSERT_NE(at, std::string::npos);
  // The picked column's line, under the picker's title: highlighted.
  const int y = static_cast<int>(std::count(screen.begin(), screen.begin() + at, '\n')) + 1 +
                static_cast<int>(ProcessColumn::kHostMemory);
  EXPECT_EQ(canvas.Glyph(4, y), "H");
  EXPECT_EQ(canvas.RoleAt(4, y), Role::kSelected);
  EXPECT_EQ(canvas.RoleAt(4, y - 1), Role::kHelp);
}

TEST(ProcessesView, ANoticeTakesTheKeyHelpRow) {
  ViewState v = ProcessesShown();
  v.notice = "not sent: pid 300 is simulated, not a process on this host";
  const std::vector<std::string> lines = Lines(Draw(testing::ProcessModel(false), v));
  EXPECT_EQ(lines.back(), " not sent: pid 300 is simulated, not a process on this host");
}

TEST(ProcessesView, NarrowTerminalsKeepPidUtilizationVerdictAndSomeCommand) {
  const std::string screen = Draw(testing::ProcessModel(false), ProcessesShown(), 80, 12);
  const std::string headings = LineWith(screen, "PID");
  for (const char* column : {"USER", "JOB", "UTIL", "VERDICT", "DEVICE MEM", "COMMAND"})
    EXPECT_NE(headings.find(column), std::string::npos) << column << "\n" << screen;
  EXPECT_EQ(headings.find("CORES"), std::string::npos) << screen;
  EXPECT_NE(LineWith(screen, "input_bound").find("python"), std::string::npos) << screen;
  EXPECT_NE(LineWith(screen, "vllm serve").find("inference/v…"), std::string::npos) << screen;
  // Narrower still: user and job go too; the figures stay.
  const std::string narrow = Draw(testing::ProcessModel(false), ProcessesShown(), 56, 12);
  const std::string cols = LineWith(narrow, "PID");
  EXPECT_EQ(cols.find("USER"), std::string::npos) << narrow;
  EXPECT_NE(cols.find("UTIL"), std::string::npos) << narrow;
  EXPECT_NE(cols.find("VERDICT"), std::string::npos) << narrow;
}

TEST(ProcessesView, EverySizeOnTheMixedScenarioStaysInside) {
  static const Model m = testing::BuildModel("sim:trn2.48xlarge", "mixed", 30);
  for (bool tree : {false, true}) {
    ViewState v = ProcessesShown();
    v.procs.tree = tree;
    v.procs.picking = tree;
    for (int w = 1; w <= 200; w += 7) {
      for (int h = 1; h <= 40; h += 3) {
        TextCanvas canvas(w, h);
        EXPECT_EQ(Render(m, v, canvas).overflow, 0) << w << "x" << h;
      }
    }
  }
  const std::string screen = Draw(m, ProcessesShown(), 160, 30);
  EXPECT_NE(screen.find("Processes: 12 Neuron applications"), std::string::npos) << screen;
  EXPECT_NE(screen.find("mlteam"), std::string::npos) << screen;
  EXPECT_NE(LineWith(screen, "python3 -m vllm").find("inference/vllm-llam…"), std::string::npos)
      << screen;
  EXPECT_NE(LineWith(screen, "torchrun").find("4242"), std::string::npos) << screen;
}

TEST(ProcessesView, MainViewKeyHelpNamesP) {
  ViewState v;
  v.version = "0.1.0";
  const std::string screen = Draw(testing::ProcessModel(false), v, 140, 30);
  EXPECT_NE(screen.find("p: processes"), std::string::npos) << screen;
}

}  // namespace
}  // namespace neuronmon::tui
