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

void FromPath(std::string_view path, ProcessAttribution& a) {
  ForEachPart(path, '/', [&](std::string_view c) {
    if (c.empty()) return;
    if (StartsWith(c, "job_") && IsDigits(c.substr(4))) {
      if (a.slurm_job_id.empty()) a.slurm_job_id = std::string(c.substr(4));
    } else if (StartsWith(c, "step_") && IsIdentifier(c.substr(5))) {
      if (a.slurm_step.empty()) a.slurm_step = std::string(c.substr(5));
    } else if (std::string pod = PodOf(c); !pod.empty()) {
      if (a.pod_uid.empty()) a.pod_uid = std::move(pod);
    } else if (std::string id = ContainerOf(c); !id.empty()) {
      a.container_id = std::move(id);  // the innermost one
    }
  });
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
  std::string job, legacy_job;
  ForEachPart(environ, '\0', [&](std::string_view entry) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || !StartsWith(entry, "SLURM_")) return;
    const std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (!IsIdentifier(value)) return;
    if (name == "SLURM_JOB_ID") job = value;
    if (name == "SLURM_JOBID") legacy_job = value;
    if (name == "SLURM_ARRAY_JOB_ID" && a.slurm_array_job_id.empty()) a.slurm_array_job_id = value;
    if (name == "SLURM_ARRAY_TASK_ID" && a.slurm_array_task_id.empty()) {
      a.slurm_array_task_id = value;
    }
    if (name == "SLURM_STEP_ID" && a.slurm_step.empty()) a.slurm_step = value;
  });
  if (a.slurm_job_id.empty()) a.slurm_job_id = !job.empty() ? job : legacy_job;
}

}  // namespace neuronmon::neurondev
