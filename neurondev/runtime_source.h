// RuntimeSource: per-application figures of a real host from AWS's neuron-monitor, run as a child
// (MonitorChild: never through a shell, restarted with backoff, output bounded) with a config
// file of our own asking for every runtime group at one 1 s period, its documents parsed
// (ParseMonitorDocument, bounded) and integrated into cumulative counters (MonitorIntegrator).
// Poll() is non-blocking. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "neurondev/monitor_child.h"
#include "neurondev/monitor_document.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"

namespace neuronmon::neurondev {

class RuntimeSource {
 public:
  // `executable`: absolute path of neuron-monitor. `config_dir`: where to write its config file
  // (removed on destruction). `host_vcpus`: to turn its CPU percentages into time.
  // `max_runtimes`: runtimes tracked at once (IntegratorOptions::max_runtimes).
  RuntimeSource(const std::string& executable, const std::string& config_dir,
                std::uint32_t host_vcpus, ChildLimits limits = {},
                std::size_t max_runtimes = IntegratorOptions{}.max_runtimes);
  ~RuntimeSource();
  RuntimeSource(const RuntimeSource&) = delete;
  RuntimeSource& operator=(const RuntimeSource&) = delete;

  // Reads what the child printed since the last call and integrates it.
  void Poll(MonoTime now);
  // Whether a document arrived within the last few periods: its figures are current.
  bool Current(MonoTime now) const;
  const MonitorIntegrator& integrator() const { return integrator_; }
  // MonitorIntegrator::Forget.
  void Forget(std::uint32_t pid) { integrator_.Forget(pid); }
  // Empty while figures are current; else why not ("not found: ... — install aws-neuronx-tools").
  std::string Unavailable(MonoTime now) const;
  ChildStatus child_status() const { return child_->status(); }

 private:
  std::string config_path_;
  std::unique_ptr<MonitorChild> child_;
  MonitorIntegrator integrator_;
  std::string config_error_;
  std::string last_parse_error_;
  bool have_document_ = false;
  MonoTime last_document_;
};

}  // namespace neuronmon::neurondev
