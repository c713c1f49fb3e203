// Who a process belongs to, from what the kernel says of it (docs/attribution.md): its cgroup
// paths name a container runtime's container, a Kubernetes pod's UID and a Slurm job and step —
// read only where the kubelet and slurmstepd create them, anchored at the hierarchy's root, since
// a user may create cgroups of any name inside their own delegated subtree; its environment, which
// the process writes itself, names a Slurm job, array and step it *claims*. Pure parsers over text
// a scan already read (processes.cc); a field is set only when the text names it — nothing is
// guessed. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace neuronmon::neurondev {

struct ProcessAttribution {
  std::string container_id;  // 64 hex digits (docker, containerd, cri-o, podman)
  std::string pod_uid;       // "1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b"
  std::string slurm_job_id;  // "4242"
  std::string slurm_array_job_id;
  std::string slurm_array_task_id;
  std::string slurm_step;  // "0", "batch", "extern", "interactive"
  // The job and step came from the environment, not a Slurm cgroup: claimed by the process. (The
  // array ids always come from the environment.)
  bool slurm_claimed = false;
  bool operator==(const ProcessAttribution&) const = default;
};

// From the text of /proc/<pid>/cgroup (v2 "0::PATH", or v1 "ID:CONTROLLERS:PATH" lines; every
// line's path is read). Recognizes, from the hierarchy's root: Kubernetes pods and their
// containers with either cgroup driver (/kubepods.slice/[kubepods-<qos>.slice/]kubepods[-<qos>]-
// pod<uid>.slice/cri-containerd-<id>.scope, /kubepods/[<qos>/]pod<uid>/<id>, crio-<id>.scope) and
// Slurm's jobs and steps (/[system.slice/]slurmstepd.scope/job_<id>/step_<step>,
// /slurm/uid_<uid>/job_<id>/step_<step>); and anywhere, for display only, the innermost container
// of Docker and podman (docker-<id>.scope, libpod-<id>.scope, /docker/<id>).
ProcessAttribution AttributionFromCgroup(std::string_view cgroup_file);

// Adds what the NUL-separated environment `environ` claims: SLURM_JOB_ID (or the older
// SLURM_JOBID), SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_STEP_ID. It never overrides the
// cgroup: with a Slurm cgroup only the array ids of the same job are taken; without one the job
// and step are taken as claimed (slurm_claimed). Values that are not short identifiers (digits,
// letters, '_', at most 32) are ignored.
void AddSlurmEnvironment(std::string_view environ, ProcessAttribution& a);

}  // namespace neuronmon::neurondev
