// Attribution from /proc/<pid>/cgroup and environ, on the paths real container runtimes, kubelets
// (both cgroup drivers) and Slurm write: each field only when the text names it.
#include "neurondev/attribution.h"

#include <gtest/gtest.h>

#include <string>

namespace neuronmon::neurondev {
namespace {

const std::string kId = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211";
const std::string kPod = "1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b";

TEST(Attribution, KubernetesWithTheSystemdDriver) {
  const ProcessAttribution a = AttributionFromCgroup(
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod1f2e3d4c_5b6a_7980_1a2b_3c4d5e6f7a8b.slice/cri-containerd-" +
      kId + ".scope\n");
  EXPECT_EQ(a.container_id, kId);
  EXPECT_EQ(a.pod_uid, kPod);
  EXPECT_EQ(a.slurm_job_id, "");
}

TEST(Attribution, KubernetesWithTheCgroupfsDriverOnCgroupV1) {
  const ProcessAttribution a = AttributionFromCgroup(
      "12:pids:/kubepods/besteffort/pod" + kPod + "/" + kId + "\n" +
      "11:memory:/kubepods/besteffort/pod" + kPod + "/" + kId + "\n1:name=systemd:/\n");
  EXPECT_EQ(a.container_id, kId);
  EXPECT_EQ(a.pod_uid, kPod);
  // Guaranteed QoS pods sit right under kubepods.
  EXPECT_EQ(AttributionFromCgroup("0::/kubepods.slice/kubepods-pod1f2e3d4c_5b6a_7980_1a2b_"
                                  "3c4d5e6f7a8b.slice/crio-" +
                                  kId + ".scope")
                .pod_uid,
            kPod);
}

TEST(Attribution, DockerAndPodman) {
  EXPECT_EQ(AttributionFromCgroup("0::/system.slice/docker-" + kId + ".scope").container_id, kId);
  EXPECT_EQ(AttributionFromCgroup("3:cpu,cpuacct:/docker/" + kId).container_id, kId);
  EXPECT_EQ(AttributionFromCgroup("0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
                                  "libpod-" +
                                  kId + ".scope/container")
                .container_id,
            kId);
  EXPECT_EQ(AttributionFromCgroup("0::/system.slice/docker-" + kId + ".scope").pod_uid, "");
}

TEST(Attribution, SlurmJobsAndSteps) {
  ProcessAttribution v2 =
      AttributionFromCgroup("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n");
  EXPECT_EQ(v2.slurm_job_id, "4242");
  EXPECT_EQ(v2.slurm_step, "0");
  ProcessAttribution v1 =
      AttributionFromCgroup("7:memory:/slurm/uid_1000/job_17/step_batch/task_0\n4:freezer:/\n");
  EXPECT_EQ(v1.slurm_job_id, "17");
  EXPECT_EQ(v1.slurm_step, "batch");
  EXPECT_EQ(v1.container_id, "");
}

TEST(Attribution, NothingIsGuessedFromOtherPaths) {
  for (const char* text :
       {"0::/user.slice/user-1000.slice/session-3.scope\n", "0::/\n", "", "garbage",
        "0::/kubepods.slice/kubepods-podnot-a-uid.slice/cri-containerd-abc.scope\n",
        "0::/system.slice/docker-" /* short id */ "3f4e5d6c.scope\n",
        "0::/system.slice/job_x/step_/\n",
        // Names a user can create inside their own delegated subtree, or anywhere but where the
        // kubelet and slurmstepd put them.
        "0::/user.slice/user-1000.slice/user@1000.service/app.slice/slurmstepd.scope/job_77/"
        "step_0\n",
        "0::/user.slice/user-1000.slice/user@1000.service/job_77/step_0\n",
        "0::/user.slice/user-1000.slice/user@1000.service/kubepods.slice/"
        "kubepods-pod1f2e3d4c_5b6a_7980_1a2b_3c4d5e6f7a8b.slice\n",
        "0::/system.slice/kubepods/pod1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b/x\n",
        "0::/kubepods.slice/a.slice/b.slice/"
        "kubepods-pod1f2e3d4c_5b6a_7980_1a2b_3c4d5e6f7a8b.slice\n",
        "0::/slurm/uid_x/job_5/step_0\n", "0::/home/slurm/uid_1/job_5/step_0\n"}) {
    EXPECT_EQ(AttributionFromCgroup(text), ProcessAttribution{}) << text;
  }
}

TEST(Attribution, SlurmFromTheEnvironment) {
  using namespace std::string_literals;
  ProcessAttribution a;
  AddSlurmEnvironment(
      "HOME=/root\0SLURM_JOB_ID=4249\0SLURM_ARRAY_JOB_ID=4242\0"
      "SLURM_ARRAY_TASK_ID=7\0SLURM_STEP_ID=2\0PATH=/bin"s,
      a);
  EXPECT_EQ(a.slurm_job_id, "4249");
  EXPECT_EQ(a.slurm_array_job_id, "4242");
  EXPECT_EQ(a.slurm_array_task_id, "7");
  EXPECT_EQ(a.slurm_step, "2");
  EXPECT_TRUE(a.slurm_claimed);  // no Slurm cgroup: what the process says of itself
  // The cgroup's word stands and is not claimed; an environment naming another job adds nothing,
  // one naming the same job adds its array ids.
  ProcessAttribution b = AttributionFromCgroup("0::/system.slice/slurmstepd.scope/job_9/step_1");
  AddSlurmEnvironment("SLURM_JOB_ID=10\0SLURM_STEP_ID=3\0SLURM_ARRAY_TASK_ID=4"s, b);
  EXPECT_EQ(b.slurm_job_id, "9");
  EXPECT_EQ(b.slurm_step, "1");
  EXPECT_EQ(b.slurm_array_task_id, "");
  EXPECT_FALSE(b.slurm_claimed);
  AddSlurmEnvironment(
      "SLURM_JOB_ID=9\0SLURM_STEP_ID=3\0SLURM_ARRAY_JOB_ID=8\0"
      "SLURM_ARRAY_TASK_ID=4"s,
      b);
  EXPECT_EQ(b.slurm_step, "1");
  EXPECT_EQ(b.slurm_array_job_id, "8");
  EXPECT_EQ(b.slurm_array_task_id, "4");
  EXPECT_FALSE(b.slurm_claimed);
  // The older SLURM_JOBID counts when SLURM_JOB_ID is absent; values that are not identifiers are
  // ignored.
  ProcessAttribution c;
  AddSlurmEnvironment("SLURM_JOBID=55\0SLURM_ARRAY_TASK_ID=$(reboot)"s, c);
  EXPECT_EQ(c.slurm_job_id, "55");
  EXPECT_EQ(c.slurm_array_task_id, "");
  EXPECT_TRUE(c.slurm_claimed);
}

}  // namespace
}  // namespace neuronmon::neurondev
