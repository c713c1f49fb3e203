// Who a process belongs to, from what the kernel says of it (docs/attribution.md): its cgroup
// paths name a container runtime's container, a Kubernetes pod's UID and a Slurm job and step; its
// environment names a Slurm job, array and step. Pure parsers over text a scan already read
// (processes.cc); a field is set only when the text names it — nothing is guessed. Thread-safe.
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
  bool operator==(const ProcessAttribution&) const = default;
};

// From the text of /proc/<pid>/cgroup (v2 "0::PATH", or v1 "ID:CONTROLLERS:PATH" lines; every
// line's path is read). Recognizes the paths of Docker and podman (docker-<id>.scope,
// libpod-<id>.scope, /docker/<id>), containerd and cri-o under Kubernetes with either cgroup
// driver (kubepods[-<qos>]-pod<uid>.slice/cri-containerd-<id>.scope, kubepods/<qos>/pod<uid>/<id>,
// crio-<id>.scope), and Slurm's (/slurm/uid_<uid>/job_<id>/step_<step>,
// slurmstepd.scope/job_<id>/step_<step>).
ProcessAttribution AttributionFromCgroup(std::string_view cgroup_file);

// Adds what the NUL-separated environment `environ` says and `a` lacks: SLURM_JOB_ID (or the older
// SLURM_JOBID), SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_STEP_ID. Values that are not short
// identifiers (digits, letters, '_', at most 32) are ignored.
void AddSlurmEnvironment(std::string_view environ, ProcessAttribution& a);

}  // namespace neuronmon::neurondev
