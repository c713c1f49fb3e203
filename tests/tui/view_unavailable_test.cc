// neuron-top when the backend cannot measure some signals (a real host): each section names the
// reason where its bars and figures would be — never a 0 % bar or a flat history — and keeps
// what is measured (HBM in use, memory). The simulator's golden frames (view_test.cc) pin that
// nothing changes when every signal is measured.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/daemon/unmeasured_backend.h"
#include "tests/tui/model_fixture.h"
#include "tui/canvas.h"
#include "tui/view.h"

namespace neuronmon::tui {
namespace {

using daemon::testing::RealHost;
using daemon::testing::RealHostReason;

ViewState Plain(bool utf8 = true) {
  ViewState v;
  v.version = "0.1.0";
  v.utf8 = utf8;
  v.glyphs = utf8 ? GraphStyle::kBraille : GraphStyle::kAscii;
  return v;
}

const Model& WithoutHbmTraffic() {
  static const Unmeasured u = RealHost({Signal::kHbmTraffic});
  static const Model m = testing::BuildModel("sim:trn1.2xlarge", "healthy-training", 60, &u);
  return m;
}

const Model& OnlyMemory() {
  static const Unmeasured u = daemon::testing::NothingButMemory();
  static const Model m = testing::BuildModel("sim:trn1.2xlarge", "healthy-training", 60, &u);
  return m;
}

// The section starting with the line that begins with `header`, up to the next section header
// (a line the section bar fills: it begins with one of the known titles).
std::string Section(const std::string& text, const std::string& header) {
  const std::size_t at = text.find("\n" + header);
  if (at == std::string::npos) return "";
  std::stringstream in(text.substr(at + 1));
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  while (std::getline(in, line)) {
    for (const char* next : {"NeuronCore ", "HBM ", "Collectives", "Diagnosis",
                             "History:", "vCPU Utilization", "Memory Usage", "Neuron Apps"}) {
      if (line.rfind(next, 0) == 0) return out;
    }
    out += line + "\n";
  }
  return out;
}

TEST(ViewUnavailable, HbmWithoutBandwidthSaysWhyAndKeepsMemoryInUse) {
  TextCanvas c(200, 60);
  Render(WithoutHbmTraffic(), Plain(), c);
  const std::string hbm = Section(c.Text(), "HBM ");
  ASSERT_FALSE(hbm.empty()) << c.Text();
  EXPECT_EQ(hbm.rfind("HBM Memory (bandwidth unavailable)", 0), 0u) << hbm;
  EXPECT_NE(hbm.find("HBM bandwidth: unavailable — " + RealHostReason(Signal::kHbmTraffic)),
            std::string::npos)
      << hbm;
  EXPECT_EQ(hbm.find("/s"), std::string::npos) << "no bandwidth figure:\n" << hbm;
  EXPECT_EQ(hbm.find("peak"), std::string::npos) << hbm;
  EXPECT_NE(hbm.find("ND0"), std::string::npos) << hbm;
  EXPECT_NE(hbm.find("GB/"), std::string::npos) << "memory in use against capacity:\n" << hbm;
  // Its history: the reason, not a flat line at 0 %.
  EXPECT_TRUE(WithoutHbmTraffic().device_hbm().empty() ||
              WithoutHbmTraffic().device_hbm().front().empty());
  ViewState v = Plain();
  v.graph = GraphView::kHbm;
  Render(WithoutHbmTraffic(), v, c);
  const std::string history = Section(c.Text(), "History:");
  EXPECT_NE(history.find("HBM bandwidth: unavailable — " + RealHostReason(Signal::kHbmTraffic)),
            std::string::npos)
      << history;
  // The other sections still have their figures.
  EXPECT_NE(Section(c.Text(), "NeuronCore ").find("%]"), std::string::npos) << c.Text();
}

TEST(ViewUnavailable, RuntimeSectionsSayUnavailableInsteadOfZeroBars) {
  TextCanvas c(200, 60);
  Render(OnlyMemory(), Plain(), c);
  const std::string text = c.Text();
  const std::string grid = Section(text, "NeuronCore ");
  EXPECT_EQ(grid.rfind("NeuronCore v2 Utilization (unavailable)", 0), 0u) << grid;
  EXPECT_NE(grid.find("unavailable: " + RealHostReason(Signal::kCoreActivity)), std::string::npos)
      << grid;
  EXPECT_EQ(grid.find("%]"), std::string::npos) << "no 0 % bars:\n" << grid;
  const std::string vcpu = Section(text, "vCPU Utilization");
  EXPECT_NE(vcpu.find("Runtime vCPU Usage unavailable: " + RealHostReason(Signal::kRuntimeCpu)),
            std::string::npos)
      << vcpu;
  EXPECT_NE(vcpu.find("System vCPU Usage"), std::string::npos) << vcpu;
  const std::string collectives = Section(text, "Collectives");
  EXPECT_NE(collectives.find("unavailable: " + RealHostReason(Signal::kCollectives)),
            std::string::npos)
      << collectives;
  EXPECT_EQ(collectives.find("no collective operations"), std::string::npos) << collectives;
  const std::string diagnosis = Section(text, "Diagnosis");
  EXPECT_NE(diagnosis.find("no verdict for 1 application: signals unavailable: "),
            std::string::npos)
      << diagnosis;
  EXPECT_NE(diagnosis.find("core_activity (" + RealHostReason(Signal::kCoreActivity) + ")"),
            std::string::npos)
      << diagnosis;
  // The runtime's own tab: the reason it has no verdict, not "no findings yet".
  {
    ViewState v = Plain();
    v.tab = 1;
    TextCanvas tab(200, 60);
    Render(OnlyMemory(), v, tab);
    EXPECT_NE(Section(tab.Text(), "Diagnosis").find("no verdict for 1 application: "),
              std::string::npos)
        << tab.Text();
  }
  // Memory is measured.
  EXPECT_NE(Section(text, "Memory Usage Summary").find("Device Used Memory"), std::string::npos);
  // History of utilization and of collective latency: the reason, and no points recorded.
  for (GraphView graph : {GraphView::kUtilization, GraphView::kCollectiveP99}) {
    ViewState v = Plain();
    v.graph = graph;
    Render(OnlyMemory(), v, c);
    const std::string history = Section(c.Text(), "History:");
    EXPECT_NE(history.find("unavailable: "), std::string::npos) << history;
  }
  for (const Series& s : OnlyMemory().device_utilization()) EXPECT_TRUE(s.empty());
  for (const RuntimeView& r : OnlyMemory().runtimes())
    EXPECT_TRUE(OnlyMemory().collective_p99(r.report.pid()).empty());
}

// FLOPs unmeasured while busy time is (a driver before 2.30.2): the utilization grid is as
// always; TFLOPS mode says why instead of 0TF, and keeps each core's utilization bar.
TEST(ViewUnavailable, TflopsModeWithoutFlopsSaysWhyInsteadOfZero) {
  static const Unmeasured u = RealHost({Signal::kFlops});
  const Model m = testing::BuildModel("sim:trn1.2xlarge", "healthy-training", 60, &u);
  TextCanvas c(200, 60);
  Render(m, Plain(), c);
  const std::string util = Section(c.Text(), "NeuronCore ");
  EXPECT_EQ(util.rfind("NeuronCore v2 Utilization (Avg:", 0), 0u) << util;
  EXPECT_NE(util.find("%]"), std::string::npos) << util;
  EXPECT_EQ(util.find("unavailable"), std::string::npos) << util;
  ViewState v = Plain();
  v.flops = true;
  Render(m, v, c);
  const std::string grid = Section(c.Text(), "NeuronCore ");
  EXPECT_EQ(grid.rfind("NeuronCore v2 Utilization (TFLOPS unavailable)", 0), 0u) << grid;
  EXPECT_NE(grid.find("TFLOPS unavailable: " + RealHostReason(Signal::kFlops)), std::string::npos)
      << grid;
  EXPECT_NE(grid.find("       n/a]"), std::string::npos) << grid;
  EXPECT_EQ(grid.find("TF]"), std::string::npos) << "no 0TF cells:\n" << grid;
  EXPECT_NE(grid.find("ND0"), std::string::npos) << "the utilization bars stay:\n" << grid;
}

TEST(ViewUnavailable, EveryWindowSizeAndGlyphSetStaysInside) {
  for (bool utf8 : {true, false}) {
    for (const auto& [w, h] : {std::pair{80, 24}, std::pair{120, 40}, std::pair{40, 12}}) {
      TextCanvas c(w, h);
      const Frame f = Render(OnlyMemory(), Plain(utf8), c);
      EXPECT_EQ(f.overflow, 0) << w << "x" << h;
      Render(WithoutHbmTraffic(), Plain(utf8), c);
    }
  }
  TextCanvas ascii(200, 60);
  Render(WithoutHbmTraffic(), Plain(false), ascii);
  EXPECT_NE(
      ascii.Text().find("HBM bandwidth: unavailable - " + RealHostReason(Signal::kHbmTraffic)),
      std::string::npos)
      << ascii.Text();
}

// A reason comes from the daemon: on screen without its escape sequences.
TEST(ViewUnavailable, ReasonsAreDrawnWithoutEscapes) {
  Unmeasured u = daemon::testing::NothingButMemory();
  for (Signal s :
       {Signal::kHbmTraffic, Signal::kCoreActivity, Signal::kRuntimeCpu, Signal::kCollectives}) {
    u.Set(s,
          "ok\x1b]0;pwned\x07\x1b[2J\r\xc2\x9b"
          "31m\xe2\x80\xae"
          "end");
  }
  const Model m = testing::BuildModel("sim:trn1.2xlarge", "healthy-training", 20, &u);
  TextCanvas c(200, 60);
  Render(m, Plain(), c);
  const std::string text = c.Text();
  EXPECT_NE(text.find("HBM bandwidth: unavailable — ok"), std::string::npos) << text;
  for (const std::string_view bad : {"\x1b", "\x07", "\r", "\xc2\x9b", "\xe2\x80\xae"}) {
    EXPECT_EQ(text.find(bad), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace neuronmon::tui
