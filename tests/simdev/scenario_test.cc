#include "simdev/scenario.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "simdev/instance.h"
#include "simdev/scenario_library.h"

namespace neuronmon::simdev {
namespace {

std::string ErrorOf(std::string_view json) {
  Result<Scenario> r = ParseScenario(json, "my.json");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(Scenario, EveryBuiltinParsesAndRunsOnItsInstance) {
  const std::vector<std::string> expected = {"cluster-hang",
                                             "cluster-straggler",
                                             "collective-bound",
                                             "ecc-degradation",
                                             "hbm-bound",
                                             "healthy-training",
                                             "idle",
                                             "idle-allocated",
                                             "inference-serving",
                                             "input-bound",
                                             "memory-pressure",
                                             "mixed",
                                             "multi-node",
                                             "straggler",
                                             "two-jobs"};
  std::vector<std::string> names;
  for (const BuiltinScenario& b : BuiltinScenarios()) names.emplace_back(b.name);
  EXPECT_EQ(names, expected);
  for (const std::string& name : names) {
    Result<Scenario> s = LoadScenario(name);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->name, name);
    EXPECT_FALSE(s->description.empty()) << name;
    Result<InstanceSpec> spec = FindPreset(s->instance);
    ASSERT_TRUE(spec.ok()) << name;
    Result<std::unique_ptr<Instance>> inst = Instance::Create(*spec, *s, 1);
    EXPECT_TRUE(inst.ok()) << inst.status().ToString();
  }
}

TEST(Scenario, MinimalTrainingDefaults) {
  Result<Scenario> s =
      ParseScenario(R"({"name": "t", "runtimes": [{"name": "a", "training": {}}]})", "t.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->runtimes.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<TrainingSpec>(s->runtimes[0].workload));
  EXPECT_EQ(s->runtimes[0].workers, Workers::kPerDevice);
  EXPECT_EQ(s->instance, "trn2.48xlarge");
}

// Who runs each application, as the scenario says: the mixed scenario's training job is Slurm job
// 4242 of user mlteam; its vLLM replicas run in pod vllm-llama2-7b-0 (namespace inference).
TEST(Scenario, RuntimesCarryTheirAttribution) {
  Result<Scenario> s = LoadScenario("mixed");
  ASSERT_TRUE(s.ok());
  Result<InstanceSpec> spec = FindPreset(s->instance);
  ASSERT_TRUE(spec.ok());
  Result<std::unique_ptr<Instance>> inst = Instance::Create(*spec, *s, 1);
  ASSERT_TRUE(inst.ok());
  int training = 0, serving = 0;
  const v1::Inventory inventory = (*inst)->Inventory(std::chrono::seconds(120));
  for (const v1::Process& p : inventory.processes()) {
    const v1::Attribution& a = p.attribution();
    if (p.tag().starts_with("llama3")) {
      ++training;
      EXPECT_EQ(a.user(), "mlteam");
      EXPECT_EQ(a.slurm_job_id(), "4242");
      EXPECT_EQ(a.pod(), "");
    } else if (p.tag().starts_with("vllm")) {
      ++serving;
      EXPECT_EQ(a.pod(), "vllm-llama2-7b-0");
      EXPECT_EQ(a.namespace_(), "inference");
      EXPECT_EQ(a.container(), "vllm");
      EXPECT_EQ(a.slurm_job_id(), "");
    }
    EXPECT_FALSE(a.has_uid()) << "the scenario names no uid";
  }
  EXPECT_GT(training, 0);
  EXPECT_GT(serving, 0);
  Result<Scenario> array = ParseScenario(
      R"({"name": "t", "runtimes": [{"name": "a", "slurm_job": "4242_7", "training": {}}]})",
      "t.json");
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(array->runtimes[0].slurm_job, "4242_7");
  EXPECT_NE(
      ErrorOf(R"({"name": "t", "runtimes": [{"name": "a", "namespace": "x", "training": {}}]})")
          .find("namespace: needs \"pod\""),
      std::string::npos);
}

TEST(Scenario, CommentsAllowed) {
  EXPECT_TRUE(ParseScenario("// c\n{\"name\": \"x\" /* inline */}", "c.json").ok());
}

TEST(Scenario, ErrorsNameTheFileAndTheField) {
  EXPECT_EQ(ErrorOf(R"({"name": "x", "runtimes": [{"name": "a", "training": {"paramters": 1}}]})"),
            "my.json: runtimes[0].training.paramters: unknown field");
  EXPECT_EQ(
      ErrorOf(R"({"name": "x", "runtimes": [{"name": "a", "training": {"parameters": "8B"}}]})"),
      "my.json: runtimes[0].training.parameters: expected a number");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "runtimes": [{"name": "a", "start": "5", "idle": {}}]})"),
            "my.json: runtimes[0].start: \"5\": missing unit (use e.g. \"5s\")");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "runtimes": [{"name": "a"}]})"),
            "my.json: runtimes[0]: needs exactly one of \"training\", \"inference\" or \"idle\"");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "faults": [{"type": "nan_errors", "runtime": "ghost"}]})"),
            "my.json: faults[0].runtime: no runtime named \"ghost\"");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "faults": [{"type": "meteor"}]})"),
            "my.json: faults[0].type: \"meteor\" is not one of ecc, runtime_exit, device_lost, "
            "nan_errors, timeouts, device_reset, slowdown, hang, input_slowdown, "
            "network_slowdown, stall, hbm_traffic, hardware_error, memory_growth");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "faults": [{"type": "ecc", "device": 0, "memory": "sram",
                                                  "severity": "repairable"}]})"),
            "my.json: faults[0].severity: only HBM errors are repairable");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "faults": [{"type": "hardware_error", "device": 0,
                                                  "error": "cosmic"}]})"),
            "my.json: faults[0].error: \"cosmic\" is not one of nc, hbm, dma, collectives, event");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "faults": [{"type": "ecc"}]})"),
            "my.json: faults[0].device: required for a ecc fault");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "runtimes": [{"name": "a", "idle": {}}],
                       "faults": [{"type": "hang", "runtime": "a"}]})"),
            "my.json: faults[0].rank: required for a hang fault");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "nodes": 0})"),
            "my.json: nodes: must be between 1 and 1024 (got 0)");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "faults": [{"type": "slowdown", "node": 1024}]})"),
            "my.json: faults[0].node: must be between 0 and 1023 (got 1024)");
  EXPECT_EQ(ErrorOf(R"({"runtimes": []})"), "my.json: name: required");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "runtimes": [{"name": "a", "idle": {}, "devices": "0-x"}]})"),
            "my.json: runtimes[0].devices: expected \"all\", a range such as \"0-7\", or a list "
            "of device indices");
  EXPECT_EQ(
      ErrorOf(
          R"({"name": "x", "runtimes": [{"name": "a", "idle": {}}, {"name": "a", "idle": {}}]})"),
      "my.json: runtimes[1].name: duplicate name \"a\"");
  EXPECT_EQ(
      ErrorOf(R"({"name": "x", "runtimes": [{"name": "a", "idle": {},
                       "expect": [{"from": "1s", "diagnosis": "sleepy"}]}]})"),
      "my.json: runtimes[0].expect[0].diagnosis: \"sleepy\" is not one of healthy, input_bound, "
      "collective_bound, hbm_bound, straggler, idle_allocated, errors, hang, memory_pressure");
  EXPECT_EQ(ErrorOf("{\"name\": \"x\",\n  \"runtimes\": [}"),
            "my.json: parse error at line 2, column 16: syntax error while parsing value - "
            "unexpected '}'; expected '[', '{', or a literal");
}

TEST(Scenario, ScenarioThatDoesNotFitTheInstanceIsRejectedWhole) {
  Result<Scenario> s = LoadScenario("mixed");
  ASSERT_TRUE(s.ok());
  Result<std::unique_ptr<Instance>> i = Instance::Create(*FindPreset("trn1.2xlarge"), *s, 1);
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.status().message(),
            "mixed: runtimes[0] (train): device 1 does not exist on trn1.2xlarge (devices 0-0)");

  Result<Scenario> big = ParseScenario(
      R"({"name": "big", "runtimes": [{"name": "a", "training": {"parameters": 1e12}}]})",
      "b.json");
  ASSERT_TRUE(big.ok());
  i = Instance::Create(*FindPreset("trn1.2xlarge"), *big, 1);
  ASSERT_FALSE(i.ok());
  EXPECT_NE(i.status().message().find("the model needs"), std::string::npos)
      << i.status().message();
  EXPECT_NE(i.status().message().find("16.0 GiB of HBM"), std::string::npos);

  Result<Scenario> clash = ParseScenario(R"({"name": "c", "runtimes": [
      {"name": "a", "devices": [0], "idle": {}}, {"name": "b", "devices": "0-1", "idle": {}}]})",
                                         "c.json");
  ASSERT_TRUE(clash.ok());
  i = Instance::Create(*FindPreset("trn2.48xlarge"), *clash, 1);
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.status().message(),
            "c: runtimes[1] (b): NeuronCore 0 is already held by runtime \"a\"");
}

TEST(Scenario, LoadsUserFilesAndNamesUnknownOnes) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-scenario-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "mine.json";
  std::ofstream(file) << R"({"name": "mine", "runtimes": [{"name": "a", "idle": {}}]})";
  Result<Scenario> s = LoadScenario(file.string());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "mine");
  std::ofstream(file) << R"({"name": "mine", "runtimes": [{"name": "a", "idel": {}}]})";
  EXPECT_EQ(LoadScenario(file.string()).status().message(),
            file.string() + ": runtimes[0].idel: unknown field");
  EXPECT_EQ(LoadScenario((dir / "none.json").string()).status().message(),
            (dir / "none.json").string() + ": cannot open: No such file or directory");
  std::filesystem::remove_all(dir);
  EXPECT_NE(LoadScenario("no-such").status().message().find(
                "built-in: cluster-hang, cluster-straggler, collective-bound"),
            std::string::npos);
}

// A scenario path is read only when it is a regular file of at most 4 MiB: a FIFO would block the
// daemon's start (and every --check-config) forever, /dev/zero would never end.
TEST(Scenario, RefusesWhatIsNotASmallRegularFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neuronmon-scenario-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(LoadScenario(fifo).status().message(), fifo + ": not a regular file");
  EXPECT_EQ(LoadScenario("/dev/zero").status().message(), "/dev/zero: not a regular file");
  EXPECT_EQ(LoadScenario(dir.string() + "/").status().message(),
            dir.string() + "/: not a regular file");
  const std::string big = (dir / "big.json").string();
  std::ofstream(big) << std::string((4 << 20) + 1, ' ');
  EXPECT_EQ(LoadScenario(big).status().message(), big + ": file larger than 4 MiB");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neuronmon::simdev
