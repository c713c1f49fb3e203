#include "neurondev/attribution.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace neuronmon::neurondev {
namespace {

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A short identifier: a Slurm step ("0", "batch", "extern", "interactive") or id.
bool IsIdentifier(std::string_view s) {
  return !s.empty() && s.size() <= 32 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A container id in one path component: "<prefix><64 hex>[.scope]" or 64 hex alone.
std::string ContainerOf(std::string_view component) {
  if (component.size() > 6 && component.substr(component.size() - 6) == ".scope") {
    component.remove_suffix(6);
  }
  for (std::string_view prefix :
       {"docker-", "cri-containerd-", "crio-", "libpod-", "containerd-"}) {
    if (StartsWith(component, prefix)) {
      component.remove_prefix(prefix.size());
      break;
    }
  }
  return component.size() == 64 && IsHex(component) ? std::string(component) : std::string();
}

// A pod UID in one path component: "...pod<uid>[.slice]" (the systemd driver writes '_' for '-').
std::string PodOf(std::string_view component) {
  if (!StartsWith(component, "kubepods") && !StartsWith(component, "pod")) return {};
  if (component.size() > 6 && component.substr(component.size() - 6) == ".slice") {
    component.remove_suffix(6);
  }
  const std::size_t at = component.rfind("pod");
  if (at == std::string_view::npos) return {};
  std::string uid(component.substr(at + 3));
  std::replace(uid.begin(), uid.end(), '_', '-');
  // 8-4-4-4-12 hex digits.
  if (uid.size() != 36) return {};
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : std::isxdigit(static_cast<unsigned char>(uid[i])) == 0) return {};
  }
  return uid;
}

// Calls `fn` with each part of `text` between `separator`s.
template <typename Fn>
void ForEachPart(std::string_view text, char separator, Fn fn) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(separator, at);
    if (end == std::string_view::npos) end = text.size();
    fn(text.substr(at, end - at));
    at = end + 1;
  }
}

// The components of a cgroup path as the kernel writes it: absolute, no empty component (a
// trailing '/' aside). Anything else has none.
std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> c;
  if (path.empty() || path.front() != '/') return c;
  path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty() || path.find("//") != std::string_view::npos) return c;
  ForEachPart(path, '/', [&](std::string_view part) { c.push_back(part); });
  return c;
}

// Where a Slurm job's component sits, counted from the hierarchy's root: under
// [system.slice/]slurmstepd.scope (cgroup v2), or slurm[_<node>]/uid_<uid> (v1). Every other place,
// a user's own delegated subtree included, names no job. npos: not a Slurm path.
std::size_t SlurmJobAt(const std::vector<std::string_view>& c) {
  if (c.size() >= 2 && c[0] == "system.slice" && c[1] == "slurmstepd.scope") return 2;
  if (!c.empty() && c[0] == "slurmstepd.scope") return 1;
  if (c.size() >= 2 && (c[0] == "slurm" || StartsWith(c[0], "slurm_")) &&
      StartsWith(c[1], "uid_") && IsDigits(c[1].substr(4))) {
    return 2;
  }
  return std::string_view::npos;
}

// A Kubernetes pod's component: directly under kubepods[.slice] (Guaranteed) or under its QoS
// class (kubepods-<qos>.slice, <qos>); anywhere else names no pod. npos: not a kubelet path.
std::size_t PodAt(const std::vector<std::string_view>& c) {
  if (c.empty() || (c[0] != "kubepods" && c[0] != "kubepods.slice")) return std::string_view::npos;
  for (std::size_t k = 1; k <= 2 && k < c.size(); ++k) {
    if (!PodOf(c[k]).empty()) return k;
  }
  return std::string_view::npos;
}

void FromPath(std::string_view path, ProcessAttribution& a) {
  const std::vector<std::string_view> c = Components(path);
  if (const std::size_t j = SlurmJobAt(c); j < c.size()) {
    const std::string_view id = c[j].substr(std::min<std::size_t>(4, c[j].size()));
    if (StartsWith(c[j], "job_") && IsDigits(id) && IsIdentifier(id) && a.slurm_job_id.empty()) {
      a.slurm_job_id = std::string(id);
      if (j + 1 < c.size() && StartsWith(c[j + 1], "step_") && IsIdentifier(c[j + 1].substr(5))) {
        a.slurm_step = std::string(c[j + 1].substr(5));
      }
    }
  }
  if (const std::size_t k = PodAt(c); k < c.size()) {
    if (a.pod_uid.empty()) a.pod_uid = PodOf(c[k]);
    if (k + 1 < c.size()) {
      if (std::string id = ContainerOf(c[k + 1]); !id.empty()) a.container_id = std::move(id);
    }
    return;
  }
  // Containers outside Kubernetes (Docker, podman, rootless ones in a user's own subtree): the
  // innermost id, for display; it decides nothing else.
  for (std::string_view part : c) {
    if (std::string id = ContainerOf(part); !id.empty()) a.container_id = std::move(id);
  }
}

}  // namespace

ProcessAttribution AttributionFromCgroup(std::string_view cgroup_file) {
  ProcessAttribution a;
  ForEachPart(cgroup_file, '\n', [&](std::string_view line) {
    // "ID:CONTROLLERS:PATH"; the path may itself hold ':'.
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second != std::string_view::npos) FromPath(line.substr(second + 1), a);
  });
  return a;
}

void AddSlurmEnvironment(std::string_view environ, ProcessAttribution& a) {
  std::string job, legacy_job, array_job, array_task, step;
  ForEachPart(environ, '\0', [&](std::string_view entry) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || !StartsWith(entry, "SLURM_")) return;
    const std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (!IsIdentifier(value)) return;
    if (name == "SLURM_JOB_ID") job = value;
    if (name == "SLURM_JOBID") legacy_job = value;
    if (name == "SLURM_ARRAY_JOB_ID") array_job = value;
    if (name == "SLURM_ARRAY_TASK_ID") array_task = value;
    if (name == "SLURM_STEP_ID") step = value;
  });
  if (job.empty()) job = legacy_job;
  if (job.empty()) return;
  if (!a.slurm_job_id.empty()) {
    // The cgroup's job stands; an environment naming another job says nothing of this one.
    if (job != a.slurm_job_id) return;
  } else {
    a.slurm_job_id = job;
    a.slurm_step = step;
    a.slurm_claimed = true;
  }
  a.slurm_array_job_id = array_job;
  a.slurm_array_task_id = array_task;
}

}  // namespace neuronmon::neurondev
