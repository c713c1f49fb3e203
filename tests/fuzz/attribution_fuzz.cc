// Fuzzes the attribution parsers with what another user's process controls: its cgroup path
// (inside a delegated subtree a user names cgroups freely) and its environment. The input is split
// at the first NUL-NUL pair into a /proc/<pid>/cgroup text and an environ. Invariants: no crash;
// every field keeps its shape (pod UID a UUID, container id 64 hex digits, Slurm values short
// identifiers); a Slurm job comes from a cgroup path under slurmstepd.scope or /slurm/uid_N, or
// else is marked claimed; the environment never changes a job the cgroup gave.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "neurondev/attribution.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) {
  neuronmon::fuzz::FuzzFail("attribution_fuzz", what);
}

bool Identifier(const std::string& s) {
  if (s.size() > 32) return false;
  for (const char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

bool Hex(const std::string& s, std::size_t size) {
  if (s.size() != size) return false;
  for (const char c : s) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon::neurondev;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find(std::string_view("\0\0", 2));
  const std::string_view cgroup = input.substr(0, split);
  const std::string_view environ =
      split == std::string_view::npos ? std::string_view() : input.substr(split + 2);
  const ProcessAttribution from_cgroup = AttributionFromCgroup(cgroup);
  if (!from_cgroup.container_id.empty() && !Hex(from_cgroup.container_id, 64)) {
    Fail("a container id that is not 64 hex digits");
  }
  if (!from_cgroup.pod_uid.empty() && from_cgroup.pod_uid.size() != 36) Fail("a pod UID's size");
  if (!from_cgroup.slurm_job_id.empty() &&
      cgroup.find("slurmstepd.scope/job_") == std::string_view::npos &&
      cgroup.find("/uid_") == std::string_view::npos) {
    Fail("a Slurm job from a path Slurm does not write");
  }
  if (from_cgroup.slurm_claimed) Fail("a cgroup fact marked claimed");
  ProcessAttribution a = from_cgroup;
  AddSlurmEnvironment(environ, a);
  for (const std::string* v :
       {&a.slurm_job_id, &a.slurm_step, &a.slurm_array_job_id, &a.slurm_array_task_id}) {
    if (!Identifier(*v)) Fail("a Slurm value that is not a short identifier");
  }
  if (!from_cgroup.slurm_job_id.empty()) {
    if (a.slurm_job_id != from_cgroup.slurm_job_id || a.slurm_step != from_cgroup.slurm_step ||
        a.slurm_claimed) {
      Fail("the environment changed the cgroup's job");
    }
  } else if (!a.slurm_job_id.empty() && !a.slurm_claimed) {
    Fail("a job from the environment not marked claimed");
  }
  return 0;
}
