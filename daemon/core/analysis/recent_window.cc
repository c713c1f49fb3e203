#include "daemon/core/analysis/recent_window.h"

#include <string>

#include "daemon/core/analysis/rules.h"

namespace neuronmon::daemon {
namespace analysis_internal {

RecentWindow::RecentWindow(const History& history, const Snapshot& end, Nanos period,
                           const v1::Inventory& inventory, const AnalyzerThresholds& t)
    : start_(WindowStart(history, end, t.recent, period)),
      end_(end),
      inventory_(inventory),
      t_(t) {}

bool RecentWindow::Confirms(const RuntimeMetrics& m, v1::FindingKind kind) {
  if (start_ == nullptr || start_->epoch != end_.epoch || start_ == &end_) return false;
  const RuntimeSample* now = FindRuntime(end_, m.pid);
  const RuntimeSample* before = FindRuntime(*start_, m.pid);
  if (now == nullptr || before == nullptr) return false;
  if (!report_) report_ = WindowReport(*start_, end_, inventory_);
  for (const v1::RuntimeReport& r : report_->runtimes()) {
    if (r.pid() == m.pid) return Agrees(m, r, *now, *before, kind);
  }
  return false;
}

bool RecentWindow::Agrees(const RuntimeMetrics& m, const v1::RuntimeReport& r,
                          const RuntimeSample& now, const RuntimeSample& before,
                          v1::FindingKind kind) const {
  RuntimeMetrics short_window = Measure(r, report_->system().hbm_stats(), now, before, inventory_);
  short_window.idle_seconds = m.idle_seconds;
  short_window.stop_after = m.stop_after;
  short_window.memory_device = m.memory_device;
  short_window.memory_percent = m.memory_percent;
  short_window.pressured = m.pressured;
  std::string lacking;
  const double u = short_window.utilization;
  return Classify(short_window, t_, "", &lacking).kind() == kind &&
         (kind == v1::FINDING_KIND_HEALTHY || u <= m.utilization || u >= t_.busy_percent);
}

}  // namespace analysis_internal
}  // namespace neuronmon::daemon
