#include "exporter/active_check.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include "neurondev/monitor_child.h"
#include "proto/common/terminal_text.h"
#include "proto/common/text.h"

namespace neuronmon::exporter {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// AWS's architecture pages (about-neuron/arch/neuron-hardware: trn1-arch, trn2-arch,
// inf2-arch): NeuronLink bandwidth per device. trn2's is in GB/s, converted to nccom-test's GiB/s.
constexpr BusBandwidthReference kReferences[] = {
    {"trn1.32xlarge", 384, "trn1 architecture page: NeuronLink-v2, 384 GiB/s per device"},
    {"trn1n.32xlarge", 768, "trn1 architecture page: NeuronLink-v2, 768 GiB/s per device"},
    {"trn2.48xlarge", 1024e9 / kGiB,
     "trn2 architecture page: intra-instance NeuronLink-v3, 1,024 GB/s per chip"},
    {"trn2u.48xlarge", 1024e9 / kGiB,
     "trn2 architecture page: intra-instance NeuronLink-v3, 1,024 GB/s per chip"},
    {"inf2.24xlarge", 192, "inf2 architecture page: NeuronLink-v2, 192 GiB/s per chip"},
    {"inf2.48xlarge", 192, "inf2 architecture page: NeuronLink-v2, 192 GiB/s per chip"},
};

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::optional<double> Number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !(v >= 0) || v > 1e9) return std::nullopt;
  return v;
}

// The NeuronCores of every device: the ranks of an all-reduce over all of them.
std::uint32_t CoreCount(const v1::Inventory& inv) {
  std::set<std::uint32_t> cores;
  for (const v1::Device& d : inv.devices()) cores.insert(d.core_ids().begin(), d.core_ids().end());
  return static_cast<std::uint32_t>(cores.size());
}

// An exclusive flock on `path` while it lives. A lock file that cannot be opened (no /run/lock,
// another user's file in the sticky directory) is no lock: the check runs without it.
class HostLock {
 public:
  explicit HostLock(const std::string& path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      busy_ = errno == EWOULDBLOCK;
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~HostLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;
  bool busy() const { return busy_; }

 private:
  int fd_ = -1;
  bool busy_ = false;
};

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::optional<BusBandwidthReference> ReferenceBusBandwidth(std::string_view instance_type) {
  for (const BusBandwidthReference& r : kReferences) {
    if (r.instance_type == instance_type) return r;
  }
  return std::nullopt;
}

NccomOutput ParseNccomOutput(std::string_view out) {
  NccomOutput parsed;
  std::optional<std::size_t> busbw_column;
  double sum = 0;
  int rows = 0;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t end = out.find('\n', pos);
    if (end == std::string_view::npos) end = out.size();
    const std::string_view line = out.substr(pos, end - pos);
    pos = end + 1;
    const std::vector<std::string_view> words = Words(line);
    if (words.empty()) continue;
    // A failed benchmark: "<size>    Failure running neuron-bench - log file ...", then
    // "N errors found - test failed" (N > 0).
    const bool failure_row =
        words.size() >= 3 && Number(words[0]) && words[1] == "Failure" && words[2] == "running";
    const bool errors = words.size() >= 3 && words[1] == "errors" && words[2] == "found" &&
                        Number(words[0]).value_or(0) > 0;
    if (failure_row || errors) {
      parsed.failed = true;
      if (parsed.failure.empty())
        parsed.failure = SanitizeForTerminal(Trim(line.substr(0, 200), kLineBlanks));
      continue;
    }
    if (const std::size_t avg = line.find("Avg bus bandwidth:"); avg != std::string_view::npos) {
      std::string_view value = Trim(line.substr(avg + 18), kLineBlanks);
      if (const std::size_t unit = value.find("GB/s"); unit != std::string_view::npos) {
        value = Trim(value.substr(0, unit), kLineBlanks);
      }
      if (std::optional<double> v = Number(value)) parsed.busbw = *v;
      continue;
    }
    const auto header = std::find(words.begin(), words.end(), "busbw(GB/s)");
    if (header != words.end()) {
      busbw_column = static_cast<std::size_t>(header - words.begin());
      continue;
    }
    // A data row: its size first, the busbw in the header's column.
    if (busbw_column && words.size() > *busbw_column && Number(words[0])) {
      if (std::optional<double> v = Number(words[*busbw_column])) {
        sum += *v;
        ++rows;
      }
    }
  }
  if (!parsed.busbw && rows > 0) parsed.busbw = sum / rows;
  return parsed;
}

std::vector<std::string> NccomArgs(std::uint32_t ranks, const ActiveOptions& o) {
  const std::string bytes = std::to_string(o.bytes);
  return {"allr", "-r", std::to_string(ranks),        "-b", bytes,  "-e",
          bytes,  "-n", std::to_string(o.iterations), "-d", "fp32", "--check"};
}

std::string FindNccomTest(const ActiveOptions& o, std::string* looked) {
  if (!o.nccom_test.empty()) {
    *looked = o.nccom_test;
    return ::access(o.nccom_test.c_str(), X_OK) == 0 ? o.nccom_test : "";
  }
  std::vector<std::string> dirs;
  std::string_view path = o.path_env;
  while (!path.empty()) {
    const std::size_t colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    if (!dir.empty() && dir.front() == '/') dirs.emplace_back(dir);  // never a relative one
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  dirs.push_back(o.aws_tools_dir);
  looked->clear();
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/nccom-test";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  *looked = "$PATH and " + o.aws_tools_dir;
  return "";
}

std::optional<ActiveResult> ActivePrecheck(const v1::Inventory& inv) {
  ActiveResult r;
  r.ranks = CoreCount(inv);
  std::vector<std::string> holders;
  std::size_t more = 0;
  const auto hold = [&](std::string who) {
    if (holders.size() < 3) {
      holders.push_back(std::move(who));
    } else {
      ++more;
    }
  };
  for (const v1::Process& p : inv.processes()) {
    // A process that holds a device but is no runtime (a monitoring tool) takes no core.
    if (p.no_datastore() || (p.core_ids().empty() && p.device_indices().empty())) continue;
    const std::string program = p.command().substr(0, p.command().find(' '));
    const std::string name = program.substr(program.find_last_of('/') + 1).substr(0, 40);
    hold("pid " + std::to_string(p.pid()) + (name.empty() ? "" : " (" + name + ")"));
  }
  // Devices the kubelet gave a pod are its, whether or not its runtime has started.
  for (const v1::PodAllocation& a : inv.allocations()) {
    if (a.device_indices().empty() && a.core_ids().empty()) continue;
    hold("pod " + a.namespace_() + "/" + a.pod());
  }
  if (!holders.empty()) {
    r.outcome = ActiveOutcome::kDeviceBusy;
    std::string who;
    for (const std::string& h : holders) who += (who.empty() ? "" : ", ") + h;
    if (more > 0) who += " and " + std::to_string(more) + " more";
    r.reason = SanitizeForTerminal("device_busy: Neuron devices held by " + who +
                                   "; the active check needs every NeuronCore free");
    return r;
  }
  if (r.ranks < 2) {
    r.outcome = ActiveOutcome::kUnknown;
    r.reason = "active check not run: a collective needs 2 NeuronCores, this host has " +
               std::to_string(r.ranks);
    return r;
  }
  return std::nullopt;
}

ActiveResult JudgeRun(const neurondev::ChildRun& run, std::uint32_t ranks,
                      const std::string& instance_type, const ActiveOptions& o) {
  ActiveResult r;
  r.ranks = ranks;
  const NccomOutput parsed = ParseNccomOutput(run.out);
  r.busbw = parsed.busbw;
  if (std::optional<BusBandwidthReference> ref = ReferenceBusBandwidth(instance_type)) {
    r.reference = ref->link_gbps;
    r.floor = ref->link_gbps * kDefaultFloorShare;
  }
  if (o.min_busbw) r.floor = *o.min_busbw;
  const std::string what = "all-reduce over " + std::to_string(ranks) + " NeuronCores";
  if (!run.started) {
    r.outcome = ActiveOutcome::kUnknown;
    r.reason = "active check not run: nccom-test " + run.error;
    return r;
  }
  // Stopped from outside, or its end not known: says nothing of the devices.
  if (run.interrupted != 0 ||
      (!run.timed_out && !parsed.failed && !run.error.empty() && !run.exit_status && !run.signal)) {
    r.outcome = ActiveOutcome::kUnknown;
    r.reason = what + " not completed: " + run.error;
    return r;
  }
  if (run.timed_out || parsed.failed || !run.error.empty()) {
    r.outcome = ActiveOutcome::kFailed;
    std::string why = run.timed_out ? run.error : parsed.failed ? parsed.failure : run.error;
    if (!run.timed_out && !parsed.failed && !run.last_stderr_line.empty()) {
      why += ": " + run.last_stderr_line;
    }
    r.reason = what + " failed: " + why;
    return r;
  }
  if (!r.busbw) {
    r.outcome = ActiveOutcome::kUnknown;
    r.reason = what + ": nccom-test printed no bus bandwidth" +
               (run.out_truncated
                    ? " in the last " + std::to_string(run.out.size()) + " bytes of its output"
                    : std::string());
    return r;
  }
  const std::string measured = what + " " + FormatFixed(*r.busbw, 2) + " GB/s bus bandwidth";
  if (!r.floor) {
    r.outcome = ActiveOutcome::kPassed;
    r.reason = measured + " (no reference for " +
               (instance_type.empty() ? std::string("an unknown instance type") : instance_type) +
               ": give --min-busbw to judge it)";
    return r;
  }
  const std::string against =
      o.min_busbw
          ? "--min-busbw " + FormatFixed(*r.floor, 2)
          : FormatFixed(*r.floor, 2) + " (" + FormatFixed(kDefaultFloorShare * 100, 0) + "% of " +
                instance_type + "'s NeuronLink " + FormatFixed(*r.reference, 0) + " GB/s)";
  if (*r.busbw < *r.floor) {
    r.outcome = ActiveOutcome::kFailed;
    r.reason = measured + ", below " + against;
  } else {
    r.outcome = ActiveOutcome::kPassed;
    r.reason = measured + ", at least " + against;
  }
  return r;
}

ActiveResult RunActiveCheck(const v1::Inventory& inventory, const std::string& instance_type,
                            const ActiveOptions& o) {
  if (std::optional<ActiveResult> early = ActivePrecheck(inventory)) return *early;
  const std::uint32_t ranks = CoreCount(inventory);
  neurondev::ChildSpec spec;
  std::string looked;
  spec.executable = FindNccomTest(o, &looked);
  spec.args = NccomArgs(ranks, o);
  if (spec.executable.empty()) {
    ActiveResult r;
    r.outcome = ActiveOutcome::kUnknown;
    r.ranks = ranks;
    r.reason = "active check not run: nccom-test is not installed (looked in " +
               SanitizeForTerminal(looked) + "; it comes with aws-neuronx-tools)";
    r.command = "nccom-test " + Join(spec.args);
    return r;
  }
  HostLock lock(o.lock_path);
  if (lock.busy()) {
    ActiveResult r;
    r.outcome = ActiveOutcome::kDeviceBusy;
    r.ranks = ranks;
    r.reason = "device_busy: another active check runs on this host (it holds " +
               SanitizeForTerminal(o.lock_path) + ")";
    return r;
  }
  neurondev::ChildRunLimits limits;
  limits.timeout = o.timeout;
  const auto start = std::chrono::steady_clock::now();
  const neurondev::ChildRun run = neurondev::RunToCompletion(spec, limits);
  ActiveResult r = JudgeRun(run, ranks, instance_type, o);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.command = SanitizeForTerminal(spec.executable) + " " + Join(spec.args);
  return r;
}

}  // namespace neuronmon::exporter
