#include "tests/simdev/window.h"

#include <algorithm>

#include "simdev/job.h"

namespace neuronmon::simdev::testing {

Window Between(const InstanceSpec& spec, const Snapshot& a, const Snapshot& b) {
  Window w;
  w.seconds = static_cast<double>((b.device_time - a.device_time).count()) * 1e-9;
  const double ns = w.seconds * 1e9;
  for (std::size_t c = 0; c < b.cores.size(); ++c) {
    w.core_utilization.push_back(100.0 *
                                 static_cast<double>(b.cores[c].busy_ns - a.cores[c].busy_ns) / ns);
  }
  for (std::size_t d = 0; d < b.devices.size(); ++d) {
    const double bytes =
        static_cast<double>(b.devices[d].hbm_read_bytes - a.devices[d].hbm_read_bytes +
                            b.devices[d].hbm_write_bytes - a.devices[d].hbm_write_bytes);
    w.hbm_fraction.push_back(bytes / w.seconds / spec.hbm_peak_bytes_per_second);
  }
  for (const RuntimeSample& r : b.runtimes) {
    auto before = std::find_if(a.runtimes.begin(), a.runtimes.end(),
                               [&](const RuntimeSample& x) { return x.pid == r.pid; });
    if (before == a.runtimes.end()) continue;
    RuntimeWindow rw;
    rw.pid = r.pid;
    rw.tag = r.tag;
    double util = 0, flops = 0;
    for (std::uint32_t c : r.cores) {
      util += w.core_utilization[c];
      flops += b.cores[c].flops - a.cores[c].flops;
    }
    rw.utilization = util / static_cast<double>(r.cores.size());
    rw.flops_fraction =
        flops / w.seconds /
        (PeakFlopsPerCore(spec, DType::kBf16) * static_cast<double>(r.cores.size()));
    std::uint64_t busy = 0;
    LatencyHistogram all;
    for (std::size_t k = 0; k < r.collectives.size(); ++k) {
      busy += r.collectives[k].busy_ns - before->collectives[k].busy_ns;
      all.Merge(r.collectives[k].latency.Minus(before->collectives[k].latency));
    }
    rw.collective_share = static_cast<double>(busy) / ns;
    rw.p50_collective = all.empty() ? 0 : all.Quantile(0.5);
    rw.executions = r.executions.completed - before->executions.completed;
    rw.errors = (r.executions.completed_with_err - before->executions.completed_with_err) +
                (r.executions.completed_with_num_err - before->executions.completed_with_num_err) +
                (r.executions.timed_out - before->executions.timed_out);
    rw.hardware_errors = r.executions.hardware - before->executions.hardware;
    w.runtimes.push_back(rw);
  }
  return w;
}

}  // namespace neuronmon::simdev::testing
