#include "daemon/core/host_reader.h"

#include "proto/procfs/proc_parsers.h"

namespace neuronmon::daemon {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

void FillCpu(std::string_view stat, HostSample& out) {
  Result<ProcStat> parsed = ParseProcStat(stat);
  if (!parsed.ok()) {
    out.cpu_error = parsed.status().message();
    return;
  }
  out.total = parsed->total;
  out.context_switches = parsed->context_switches;
  for (const NumberedCpuTimes& c : parsed->per_cpu) out.per_cpu.push_back({c.cpu, c.times});
}

void FillMemory(std::string_view meminfo, HostSample& out) {
  Result<MemInfo> parsed = ParseMeminfo(meminfo);
  if (!parsed.ok()) {
    out.memory_error = parsed.status().message();
    return;
  }
  out.memory_total_bytes = parsed->memory_total_bytes;
  out.memory_used_bytes = parsed->memory_used_bytes;
  out.swap_total_bytes = parsed->swap_total_bytes;
  out.swap_used_bytes = parsed->swap_used_bytes;
}

}  // namespace

HostSample HostFromText(std::string_view stat, std::string_view meminfo) {
  HostSample out;
  FillCpu(stat, out);
  FillMemory(meminfo, out);
  return out;
}

HostSample ReadHost(const std::string& proc_root) {
  HostSample out;
  Result<std::string> stat = ReadSmallFile(proc_root + "/stat");
  if (stat.ok()) {
    FillCpu(*stat, out);
  } else {
    out.cpu_error = stat.status().message();
  }
  Result<std::string> meminfo = ReadSmallFile(proc_root + "/meminfo");
  if (meminfo.ok()) {
    FillMemory(*meminfo, out);
  } else {
    out.memory_error = meminfo.status().message();
  }
  return out;
}

}  // namespace neuronmon::daemon
