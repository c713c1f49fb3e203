#include "tui/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "proto/common/terminal_text.h"
#include "proto/names/names.h"

namespace neuronmon::tui {
namespace {

std::string Printf(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Scaled(double v, const char* const* units, int n, double step, const char* suffix) {
  int u = 0;
  while (std::fabs(v) >= step && u < n - 1) {
    v /= step;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f%s%s", v, units[u], suffix);
  return buf;
}

}  // namespace

std::string Percent(double p) {
  if (!std::isfinite(p) || p < 0) p = 0;
  if (p > 99.995) return "  100%";
  return Printf("%5.2f%%", p);
}

std::string Tflops(double flops) {
  const double tf = flops * 1e-12;
  if (!(tf >= 0.001)) return "       0TF";
  return Printf("%8.3fTF", tf);
}

std::string Bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  return Scaled(std::max(0.0, bytes), kUnits, 6, 1024, "");
}

std::string BytesPerSecond(double b) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  return Scaled(std::max(0.0, b), kUnits, 5, 1000, "/s");
}

std::string Latency(double s) {
  if (!(s > 0)) return "-";
  if (s < 1e-3) return Printf("%.0fus", s * 1e6);
  if (s < 1) return Printf("%.1fms", s * 1e3);
  return Printf("%.2fs", s);
}

std::string Count(double per_second) {
  if (per_second >= 10000) return Printf("%.0fk/s", per_second / 1000);
  if (per_second >= 1000) return Printf("%.1fk/s", per_second / 1000);
  if (per_second >= 10) return Printf("%.0f/s", per_second);
  return Printf("%.1f/s", per_second);
}

int DimensionFromEnv(const char* text, int fallback, int min, int max) {
  if (text == nullptr) return fallback;
  const char* end = text + std::strlen(text);
  long value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec == std::errc::result_out_of_range && ptr == end && *text != '-') return max;
  if (ec != std::errc() || ptr != end || ptr == text || value <= 0) return fallback;
  return static_cast<int>(std::clamp<long>(value, min, max));
}

std::string AttributionText(const v1::Attribution& a) {
  std::vector<std::string> parts;
  if (!a.user().empty()) {
    parts.push_back("user " + a.user());
  } else if (a.has_uid()) {
    parts.push_back("uid " + std::to_string(a.uid()));
  }
  if (!a.pod().empty()) {
    parts.push_back(PodLabelWithContainer(a));
  } else if (!a.pod_uid().empty()) {
    parts.push_back("pod uid " + a.pod_uid());
  } else if (!a.container_id().empty()) {
    parts.push_back("container " + a.container_id().substr(0, 12));
  }
  if (!a.slurm_job_id().empty()) {
    std::string job = "slurm job " + a.slurm_job_id();
    if (!a.slurm_array_task_id().empty()) {
      job += " (array " + a.slurm_array_job_id() + " task " + a.slurm_array_task_id() + ")";
    }
    if (!a.slurm_step().empty()) job += " step " + a.slurm_step();
    if (a.slurm_claimed()) job += " (claimed by the process)";
    parts.push_back(std::move(job));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return SanitizeForTerminal(out);
}

}  // namespace neuronmon::tui
