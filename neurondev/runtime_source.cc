#include "neurondev/runtime_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace neuronmon::neurondev {
namespace {

// Every runtime group at one period: the integrator counts each group of a document once, so no
// group may be repeated at a slower period.
constexpr char kConfig[] = R"({
  "period": "1s",
  "neuron_runtimes": [
    {
      "tag_filter": ".*",
      "metrics": [
        {"type": "neuroncore_counters"},
        {"type": "memory_used"},
        {"type": "neuron_runtime_vcpu_usage"},
        {"type": "execution_stats"}
      ]
    }
  ],
  "system_metrics": []
}
)";

// Figures older than this many seconds are no longer current (neuron-monitor prints every 1 s).
constexpr auto kStale = std::chrono::seconds(5);

// Writes the config to a new private file in `dir`; returns its path, or "" and sets `error`.
std::string WriteConfig(const std::string& dir, std::string* error) {
  std::string path = dir + "/neuronmon-neuron-monitor-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    *error = "cannot write neuron-monitor's config in " + dir + ": " + std::strerror(errno);
    return "";
  }
  const std::size_t size = sizeof(kConfig) - 1;
  const bool ok = ::write(fd, kConfig, size) == static_cast<ssize_t>(size);
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    *error = "cannot write neuron-monitor's config " + path;
    return "";
  }
  return path;
}

}  // namespace

RuntimeSource::RuntimeSource(const std::string& executable, const std::string& config_dir,
                             std::uint32_t host_vcpus, ChildLimits limits, std::size_t max_runtimes)
    : integrator_(IntegratorOptions{.max_runtimes = max_runtimes, .host_vcpus = host_vcpus}) {
  config_path_ = WriteConfig(config_dir, &config_error_);
  ChildSpec spec;
  spec.executable = executable;
  if (!config_path_.empty()) spec.args = {"-c", config_path_};
  child_ = std::make_unique<MonitorChild>(std::move(spec), limits);
}

RuntimeSource::~RuntimeSource() {
  child_.reset();
  if (!config_path_.empty()) ::unlink(config_path_.c_str());
}

void RuntimeSource::Poll(MonoTime now) {
  if (config_path_.empty()) return;
  for (const std::string& line : child_->Poll(now)) {
    Result<MonitorDocument> doc = ParseMonitorDocument(line);
    if (!doc.ok()) {
      last_parse_error_ = doc.status().message();
      child_->ReportBadLine(last_parse_error_);
      continue;
    }
    integrator_.Add(*doc, now);
    have_document_ = true;
    last_document_ = now;
  }
}

bool RuntimeSource::Current(MonoTime now) const {
  return have_document_ && now - last_document_ <= kStale;
}

std::string RuntimeSource::Unavailable(MonoTime now) const {
  if (!config_error_.empty()) return config_error_;
  if (Current(now)) return "";
  const ChildStatus status = child_->status();
  if (!status.last_error.empty()) return "neuron-monitor: " + status.last_error;
  return "neuron-monitor has not printed a document yet (" +
         std::string(ChildStateName(status.state)) + ")";
}

}  // namespace neuronmon::neurondev
