#include "client/report_accumulator.h"

#include <algorithm>
#include <cassert>

#include "proto/names/names.h"

namespace neuronmon::client {
namespace {

bool Lists(const v1::Report& report, v1::Group group) {
  return std::find(report.groups().begin(), report.groups().end(), group) != report.groups().end();
}

bool HasSystemGroup(const v1::Report& report) {
  if (!report.has_system()) return false;
  const v1::SystemReport& s = report.system();
  return s.has_vcpu_usage() || s.has_memory_info() || s.has_neuron_hw_counters() ||
         s.has_hbm_stats() || s.has_device_health();
}

bool RuntimesWereDue(const v1::Report& report) {
  if (report.groups_size() > 0) {
    return std::any_of(report.groups().begin(), report.groups().end(),
                       [](int g) { return IsRuntimeGroup(static_cast<v1::Group>(g)); });
  }
  return report.runtimes_size() > 0 || (!HasSystemGroup(report) && !report.has_totals());
}

bool InstanceAnalysisWasDue(const v1::Report& report) {
  if (report.groups_size() > 0) return Lists(report, v1::GROUP_BOTTLENECK_ANALYSIS);
  return report.findings_size() > 0;
}

// Copies `from` over the group `field` names in `to` and tells the observer, when `present`. (The
// field is named by its accessor so that an absent group is never created.)
template <typename Message, typename Container, typename Target>
void Replace(bool present, const Message& from, Container& to, Message* (Container::*field)(),
             v1::Group group, Target& target, ReportAccumulator::Observer& observer) {
  if (!present) return;
  *(to.*field)() = from;
  observer.Stored(group, target);
}

}  // namespace

void ReportAccumulator::Apply(const v1::Report& report, std::size_t source, Observer* observer) {
  assert(source < kMaxSources);
  Observer none;
  Observer& o = observer != nullptr ? *observer : none;
  const std::uint64_t source_bit = std::uint64_t{1} << source;
  for (const v1::RuntimeReport& runtime : report.runtimes()) MergeRuntime(runtime, source_bit, o);
  if (RuntimesWereDue(report)) DropUnreported(report, source_bit, o);
  MergeSystem(report, o);
  ++reports_;
}

const ReportAccumulator::Runtime* ReportAccumulator::Find(std::uint32_t pid) const {
  auto it = std::lower_bound(runtimes_.begin(), runtimes_.end(), pid,
                             [](const Runtime& r, std::uint32_t p) { return r.report.pid() < p; });
  return it != runtimes_.end() && it->report.pid() == pid ? &*it : nullptr;
}

void ReportAccumulator::MergeRuntime(const v1::RuntimeReport& in, std::uint64_t source_bit,
                                     Observer& observer) {
  auto it =
      std::lower_bound(runtimes_.begin(), runtimes_.end(), in.pid(),
                       [](const Runtime& r, std::uint32_t pid) { return r.report.pid() < pid; });
  if (it == runtimes_.end() || it->report.pid() != in.pid()) {
    it = runtimes_.insert(it, Runtime{});
    it->report.set_pid(in.pid());
  }
  Runtime& runtime = *it;
  v1::RuntimeReport& out = runtime.report;
  runtime.sources |= source_bit;
  out.set_tag(in.tag());
  out.set_error(in.error());
  if (in.has_attribution()) {
    *out.mutable_attribution() = in.attribution();
  } else {
    out.clear_attribution();
  }
  out.set_start_time_ticks(in.start_time_ticks());
  using R = v1::RuntimeReport;
  Replace(in.has_neuroncore_counters(), in.neuroncore_counters(), out,
          &R::mutable_neuroncore_counters, v1::GROUP_NEURONCORE_COUNTERS, out, observer);
  Replace(in.has_memory_used(), in.memory_used(), out, &R::mutable_memory_used,
          v1::GROUP_MEMORY_USED, out, observer);
  Replace(in.has_vcpu_usage(), in.vcpu_usage(), out, &R::mutable_vcpu_usage,
          v1::GROUP_NEURON_RUNTIME_VCPU_USAGE, out, observer);
  Replace(in.has_execution_stats(), in.execution_stats(), out, &R::mutable_execution_stats,
          v1::GROUP_EXECUTION_STATS, out, observer);
  Replace(in.has_collectives_stats(), in.collectives_stats(), out, &R::mutable_collectives_stats,
          v1::GROUP_COLLECTIVES_STATS, out, observer);
  // bottleneck_analysis has no message of its own: a period or a finding says it was due.
  if (in.findings_size() > 0 || in.findings_period_ns() > 0) {
    runtime.has_analysis = true;
    *out.mutable_findings() = in.findings();
    out.set_findings_period_ns(in.findings_period_ns());
    observer.Stored(v1::GROUP_BOTTLENECK_ANALYSIS, out);
  }
}

void ReportAccumulator::DropUnreported(const v1::Report& report, std::uint64_t source_bit,
                                       Observer& observer) {
  std::vector<std::uint32_t> reported;
  reported.reserve(static_cast<std::size_t>(report.runtimes_size()));
  for (const v1::RuntimeReport& r : report.runtimes()) reported.push_back(r.pid());
  std::sort(reported.begin(), reported.end());
  for (Runtime& runtime : runtimes_) {
    if (!std::binary_search(reported.begin(), reported.end(), runtime.report.pid())) {
      runtime.sources &= ~source_bit;
    }
  }
  std::erase_if(runtimes_, [&](const Runtime& r) {
    if (r.sources != 0) return false;
    observer.Dropped(r.report.pid());
    return true;
  });
}

void ReportAccumulator::MergeSystem(const v1::Report& report, Observer& observer) {
  const v1::SystemReport& in = report.system();
  v1::SystemReport& out = system_.groups;
  using S = v1::SystemReport;
  Replace(in.has_vcpu_usage(), in.vcpu_usage(), out, &S::mutable_vcpu_usage, v1::GROUP_VCPU_USAGE,
          system_, observer);
  Replace(in.has_memory_info(), in.memory_info(), out, &S::mutable_memory_info,
          v1::GROUP_MEMORY_INFO, system_, observer);
  Replace(in.has_neuron_hw_counters(), in.neuron_hw_counters(), out, &S::mutable_neuron_hw_counters,
          v1::GROUP_NEURON_HW_COUNTERS, system_, observer);
  Replace(in.has_hbm_stats(), in.hbm_stats(), out, &S::mutable_hbm_stats, v1::GROUP_HBM_STATS,
          system_, observer);
  Replace(in.has_device_health(), in.device_health(), out, &S::mutable_device_health,
          v1::GROUP_DEVICE_HEALTH, system_, observer);
  if (!InstanceAnalysisWasDue(report)) return;
  std::uint64_t period_ns = 0;
  for (const v1::RuntimeReport& r : report.runtimes()) {
    period_ns = std::max(period_ns, r.findings_period_ns());
  }
  system_.has_analysis = true;
  system_.analysis_period_ns = period_ns > 0 ? period_ns : report.period_ns();
  system_.findings = report.findings();
  observer.Stored(v1::GROUP_BOTTLENECK_ANALYSIS, system_);
}

}  // namespace neuronmon::client
