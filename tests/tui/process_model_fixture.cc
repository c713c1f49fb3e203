#include "tests/tui/process_model_fixture.h"

#include <initializer_list>
#include <string>

namespace neuronmon::tui::testing {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

void AddProcess(v1::Inventory& inv, std::uint32_t pid, const std::string& command,
                std::uint32_t device, const v1::Attribution& who) {
  v1::Process* p = inv.add_processes();
  p->set_pid(pid);
  p->set_tag("tag" + std::to_string(pid));
  p->set_command(command);
  p->add_device_indices(device);
  for (std::uint32_t c = 0; c < 4; ++c) p->add_core_ids(device * 4 + c);
  *p->mutable_attribution() = who;
}

void SetCores(v1::RuntimeReport& r, std::initializer_list<std::pair<std::uint32_t, double>> cores) {
  for (auto [index, percent] : cores) {
    v1::CoreCounters* c = r.mutable_neuroncore_counters()->add_cores();
    c->set_index(index);
    c->set_utilization_percent(percent);
  }
}

void AddFinding(v1::RuntimeReport& r, v1::FindingKind kind, v1::Severity severity) {
  v1::Finding* f = r.add_findings();
  f->set_kind(kind);
  f->set_severity(severity);
  f->set_pid(r.pid());
  f->set_subject(r.tag());
}

}  // namespace

Model ProcessModel(bool simulated) {
  v1::Welcome welcome;
  v1::Inventory& inv = *welcome.mutable_inventory();
  inv.set_simulated(simulated);
  inv.mutable_instance_info()->set_instance_id("i-0123");
  inv.mutable_instance_info()->set_instance_type("trn1.2xlarge");
  inv.mutable_hardware_info()->set_neuroncore_per_device_count(4);
  for (std::uint32_t d = 0; d < 2; ++d) inv.add_devices()->set_index(d);
  v1::Attribution alice;
  alice.set_user("alice");
  alice.set_uid(1001);
  alice.set_slurm_job_id("77");
  alice.set_slurm_array_job_id("70");
  alice.set_slurm_array_task_id("3");
  AddProcess(inv, 100, "python train.py --lr 3e-4", 0, alice);
  v1::Attribution bob;
  bob.set_user("bob");
  bob.set_pod("vllm-0");
  bob.set_namespace_("inference");
  AddProcess(inv, 200, "vllm serve", 1, bob);

  v1::Report report;
  report.set_seq(1);
  report.set_period_ns(1000000000);
  for (v1::Group g :
       {v1::GROUP_NEURONCORE_COUNTERS, v1::GROUP_MEMORY_USED, v1::GROUP_BOTTLENECK_ANALYSIS}) {
    report.add_groups(g);
  }
  v1::RuntimeReport& train = *report.add_runtimes();
  train.set_pid(100);
  train.set_tag("tag100");
  train.set_start_time_ticks(100000);
  *train.mutable_attribution() = alice;
  SetCores(train, {{0, 10}, {1, 20}, {2, 30}, {3, 40}});
  train.mutable_memory_used()->set_device_bytes(static_cast<std::uint64_t>(2 * kGiB));
  train.mutable_memory_used()->set_host_bytes(static_cast<std::uint64_t>(kGiB));
  AddFinding(train, v1::FINDING_KIND_HEALTHY, v1::SEVERITY_INFO);
  AddFinding(train, v1::FINDING_KIND_INPUT_BOUND, v1::SEVERITY_WARNING);

  v1::RuntimeReport& serve = *report.add_runtimes();
  serve.set_pid(200);
  serve.set_tag("tag200");
  serve.set_start_time_ticks(200000);
  *serve.mutable_attribution() = bob;
  serve.mutable_neuroncore_counters()->set_error("NeuronCore activity needs AWS's neuron-monitor");
  serve.mutable_memory_used()->set_error("the runtime's device could not be read");

  v1::RuntimeReport& late = *report.add_runtimes();
  late.set_pid(300);
  late.set_tag("late");
  late.set_start_time_ticks(300000);
  SetCores(late, {{4, 50}, {5, 70}});
  late.mutable_memory_used()->set_device_bytes(512u * 1024 * 1024);
  AddFinding(late, v1::FINDING_KIND_HEALTHY, v1::SEVERITY_INFO);

  Model model;
  model.SetWelcome(welcome);
  model.Apply(report);
  model.connection = ConnectionState::kLive;
  model.endpoint = "unix:/run/neuron-monitor/neuron-monitord.sock";
  return model;
}

}  // namespace neuronmon::tui::testing
