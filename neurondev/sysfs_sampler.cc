#include "neurondev/sysfs_sampler.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "neurondev/device_files.h"
#include "neurondev/device_plan.h"
#include "neurondev/device_planner.h"
#include "neurondev/sysfs_attributes.h"
#include "neurondev/sysfs_tree.h"

namespace neuronmon::neurondev {

class TreePlan {
 public:
  PlannedFile version;  // relative to the root
  std::vector<DevicePlan> devices;
};

SysfsSampler::SysfsSampler(std::string root, TreeLimits limits, SamplerOptions options)
    : root_(std::move(root)),
      limits_(limits),
      options_(options),
      plan_(std::make_unique<TreePlan>()),
      buffer_(limits_.max_file_bytes + 1, '\0') {}

SysfsSampler::~SysfsSampler() = default;
SysfsSampler::SysfsSampler(SysfsSampler&&) noexcept = default;
SysfsSampler& SysfsSampler::operator=(SysfsSampler&&) noexcept = default;

std::size_t SysfsSampler::open_files() const {
  std::size_t n = OpenIn(plan_->version);
  for (const DevicePlan& d : plan_->devices) n += OpenIn(d);
  return n;
}

const NodeIndex* SysfsSampler::nodes(int index) const {
  for (const DevicePlan& d : plan_->devices) {
    if (d.constants.index == index) return &d.nodes;
  }
  return nullptr;
}

void SysfsSampler::Discover() {
  plan_ = std::make_unique<TreePlan>();  // closes every descriptor first
  fd_budget_ = limits_.max_open_files;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    fd_budget_ = std::min<std::size_t>(fd_budget_, limit.rlim_cur / 2);
  plan_->version.relative = root_ + "/module/neuron/version";
  if (fd_budget_ > 0) {
    UniqueFd fd(::open(plan_->version.relative.c_str(), kFileFlags));
    struct stat st {};
    if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) <= limits_.max_file_bytes) {
      plan_->version.fd = std::move(fd);
    }
  }
  discover_ = false;
  samples_since_discovery_ = 0;
}

// Keeps the plans of devices still listed in the same directory; plans the others.
void SysfsSampler::FollowDeviceList(const std::vector<int>& devices,
                                    const std::string& driver_version) {
  // As a rule nothing changed: the same devices in the same directories, and nothing to move.
  std::vector<DirIdentity> ids;
  ids.reserve(devices.size());
  for (int index : devices) ids.push_back(IdentifyDeviceDir(root_, index));
  bool same = devices.size() == plan_->devices.size();
  for (std::size_t i = 0; same && i < devices.size(); ++i) {
    same = plan_->devices[i].constants.index == devices[i] && plan_->devices[i].dir == ids[i];
  }
  if (same) return;
  std::vector<DevicePlan> old = std::move(plan_->devices);
  std::vector<DevicePlan> next(devices.size());
  std::vector<bool> kept(devices.size(), false);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (DevicePlan& d : old) {
      if (d.constants.index == devices[i] && d.dir == ids[i]) {
        next[i] = std::move(d);
        d.constants.index = -1;  // taken
        kept[i] = true;
        break;
      }
    }
  }
  old.clear();  // the descriptors of devices gone or replaced, before opening new ones
  plan_->devices = std::move(next);
  if (std::all_of(kept.begin(), kept.end(), [](bool k) { return k; })) return;
  const std::size_t in_use = open_files();
  DevicePlanner planner(limits_, buffer_, fd_budget_ > in_use ? fd_budget_ - in_use : 0,
                        options_.slow_pe_counters);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (!kept[i]) plan_->devices[i] = planner.PlanDevice(root_, devices[i], driver_version);
  }
}

TreeReading SysfsSampler::Sample() {
  if (discover_ || samples_since_discovery_ >= options_.rediscover_every) Discover();
  ++samples_since_discovery_;
  ++samples_;
  TreeReading out;
  PlannedFile& version = plan_->version;
  if (version.fd.get() >= 0) {
    const ssize_t n = ReadFromStart(version.fd.get(), buffer_);
    if (n >= 0 && static_cast<std::size_t>(n) < buffer_.size()) {
      out.driver_version =
          std::string(TrimNewline(std::string_view(buffer_.data(), static_cast<std::size_t>(n))));
    } else {
      version.fd.Reset();  // read by path from now on: that names the problem
    }
  }
  if (version.fd.get() < 0) ReadVersion(root_, limits_, out);
  Result<std::vector<int>> devices = SysfsTree(root_, limits_).ListDevices();
  if (!devices.ok()) {
    out.errors.push_back(devices.status().message());
    return out;
  }
  FollowDeviceList(*devices, out.driver_version.value_or(""));
  out.devices.reserve(plan_->devices.size());
  const Refresh refresh{samples_,
                        {1, options_.errors_every, options_.slow_every, options_.rare_every}};
  Refresh quiet = refresh;
  quiet.every[static_cast<std::size_t>(Pace::kLive)] = options_.rare_every;
  for (DevicePlan& d : plan_->devices) {
    const bool is_quiet = quiet_.contains(d.constants.index);
    out.devices.push_back(ReadPlanned(d, limits_, is_quiet ? quiet : refresh, buffer_));
  }
  return out;
}

}  // namespace neuronmon::neurondev
