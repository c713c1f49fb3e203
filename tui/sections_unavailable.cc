// Why a runtime group's figures are missing from a section: the group's error (a runtime group
// with an error carries no figures, report.proto), said instead of bars and zeros.
#include <map>

#include "tui/sections.h"

namespace neuronmon::tui {

const std::string& GroupError(const v1::RuntimeReport& report, RuntimeGroup group) {
  static const std::string kNone;
  switch (group) {
    case RuntimeGroup::kCores:
      return report.has_neuroncore_counters() ? report.neuroncore_counters().error() : kNone;
    case RuntimeGroup::kVcpu:
      return report.has_vcpu_usage() ? report.vcpu_usage().error() : kNone;
    case RuntimeGroup::kCollectives:
      return report.has_collectives_stats() ? report.collectives_stats().error() : kNone;
    case RuntimeGroup::kFlops:
      return report.has_neuroncore_counters() ? report.neuroncore_counters().flops_unavailable()
                                              : kNone;
  }
  return kNone;
}

Unavailable UnavailableFigures(const Ctx& ctx, RuntimeGroup group) {
  Unavailable out;
  std::map<std::string, std::vector<std::string>> tags;  // by error, in runtime order
  std::vector<std::string> order;
  int selected = 0;
  for (const RuntimeView& r : ctx.model.runtimes()) {
    if (ctx.pid != 0 && r.report.pid() != ctx.pid) continue;
    ++selected;
    const std::string& error = GroupError(r.report, group);
    if (error.empty()) continue;
    auto [it, fresh] = tags.try_emplace(error);
    if (fresh) order.push_back(error);
    it->second.push_back(r.report.tag());
  }
  int errored = 0;
  for (const auto& [error, names] : tags) errored += static_cast<int>(names.size());
  out.all = errored > 0 && errored == selected;
  for (const std::string& error : order) {
    const std::vector<std::string>& names = tags[error];
    // One reason for every runtime shown needs no names; otherwise say whose figures are missing.
    std::string who;
    if (static_cast<int>(names.size()) < selected) {
      for (const std::string& name : names) who += (who.empty() ? "" : ", ") + name;
      who += ": ";
    }
    out.lines.push_back(who + (group == RuntimeGroup::kFlops ? "TFLOPS " : "") +
                        "unavailable: " + error);
  }
  return out;
}

int DrawUnavailable(Ctx& ctx, const Unavailable& unavailable, int y, int rows) {
  int drawn = 0;
  for (const std::string& line : unavailable.lines) {
    if (drawn >= rows) break;
    Text(ctx.canvas, 1, y + drawn, ctx.canvas.width() - 1, line, Role::kDim);
    ++drawn;
  }
  return drawn;
}

}  // namespace neuronmon::tui
