// ReportAccumulator: the client side's one set of rules for merging the daemon's stream. A report
// carries only the groups due in its window, so each group keeps its last value; a runtime absent
// from a report that carries runtime-level groups has exited (per subscription: a client with
// several subscriptions drops a runtime only when none of them reports it any more); the
// instance's findings are replaced only by a report in which bottleneck_analysis was due.
// neuron-top's Model and neuron-monitor's MonitorState both merge through it, and keep only what is
// their own (graphs, screen state; JSON document order) — through the Observer, which hears each
// group stored and each runtime dropped. Pure; not thread-safe: one owner.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "neuronmon/v1/report.pb.h"

namespace neuronmon::client {

class ReportAccumulator {
 public:
  // At most this many subscriptions (see Apply's `source`).
  static constexpr std::size_t kMaxSources = 64;

  // One Neuron application: per group, the last value received (a group message is present —
  // has_…() — once received).
  struct Runtime {
    v1::RuntimeReport report;
    bool has_analysis = false;  // bottleneck_analysis received: report.findings{,_period_ns}
    std::uint64_t sources = 0;  // bit s set: subscription s still reports this runtime
  };

  // The system-level groups, and the instance-level bottleneck_analysis (Report.findings).
  struct System {
    v1::SystemReport groups;  // same presence rule as Runtime::report
    bool has_analysis = false;
    google::protobuf::RepeatedPtrField<v1::Finding> findings;
    // The instance summary has no period of its own: the runtimes' analysis window, or the
    // report's longest window when no runtime was analysed.
    std::uint64_t analysis_period_ns = 0;
  };

  // Hears what Apply changed, to keep what is the owner's own in step. The references are valid
  // during the call; an owner may reorder repeated fields in them (document order).
  class Observer {
   public:
    virtual ~Observer() = default;
    // Group `group` of runtime `runtime` was replaced (GROUP_BOTTLENECK_ANALYSIS: its findings).
    virtual void Stored(v1::Group /*group*/, v1::RuntimeReport& /*runtime*/) {}
    // A system-level group was replaced (GROUP_BOTTLENECK_ANALYSIS: the instance findings).
    virtual void Stored(v1::Group /*group*/, System& /*system*/) {}
    // The runtime exited (no subscription reports it any more).
    virtual void Dropped(std::uint32_t /*pid*/) {}
  };

  // Merges `report` as received on subscription `source` (REQUIRES: source < kMaxSources).
  //
  // Whether runtime-level groups were due comes from Report.groups; a report without that list
  // (older daemons, hand-made reports) counts as due when it lists runtimes or carries nothing
  // else. Likewise bottleneck_analysis: due when Report.groups lists it, or, without a list, when
  // the report carries instance findings.
  void Apply(const v1::Report& report, std::size_t source = 0, Observer* observer = nullptr);

  // Ascending pid.
  const std::vector<Runtime>& runtimes() const { return runtimes_; }
  // The runtime with `pid`, or null.
  const Runtime* Find(std::uint32_t pid) const;
  const System& system() const { return system_; }
  // Reports applied.
  std::uint64_t reports() const { return reports_; }

 private:
  void MergeRuntime(const v1::RuntimeReport& in, std::uint64_t source_bit, Observer& observer);
  void DropUnreported(const v1::Report& report, std::uint64_t source_bit, Observer& observer);
  void MergeSystem(const v1::Report& report, Observer& observer);

  std::vector<Runtime> runtimes_;
  System system_;
  std::uint64_t reports_ = 0;
};

}  // namespace neuronmon::client
