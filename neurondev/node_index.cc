#include "neurondev/node_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "proto/common/driver_version.h"

namespace neuronmon::neurondev {
namespace {

std::string_view Basename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view Parent(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : Basename(path.substr(0, slash));
}

// Directories whose entries are categories, counters or health nodes: the planner lists them.
constexpr std::array<std::string_view, 5> kListed = {"host_mem", "device_mem", "status",
                                                     "other_info", "health_status"};

// What every sysfs device directory has, whoever its driver: not the driver's nodes.
constexpr std::array<std::string_view, 6> kGeneric = {"power", "subsystem", "uevent",
                                                      "dev",   "device",    "driver"};

constexpr std::array<std::string_view, 8> kHealthNodes = {
    "hbm_ecc_err_count",    "repairable_hbm_ecc_err_count",
    "sram_ecc_err_count",   "hw_error_event",
    "mem_ecc_corrected",    "sram_ecc_corrected",
    "unhealthy_components", "healthcheck_heartbeat"};

template <std::size_t N>
bool In(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const std::vector<KnownNode>& KnownNodes() {
  using S = NodeScope;
  static const std::vector<KnownNode> nodes = {
      {"core_count", S::kDevice},
      {"connected_devices", S::kDevice},
      {"reset", S::kDevice},
      {"info/serial_number", S::kDevice},
      {"info/notify_delay", S::kDevice, false, 0, 0, false},
      {"info/architecture/arch_type", S::kDevice},
      {"info/architecture/instance_type", S::kDevice},
      {"info/architecture/device_name", S::kDevice},
      {"stats/memory_usage/host_mem", S::kDevice, true},
      {"stats/hardware/sram_ecc_uncorrected", S::kDevice},
      {"stats/hardware/mem_ecc_uncorrected", S::kDevice},
      {"stats/hardware/mem_ecc_repairable_uncorrected", S::kDevice},
      {"stats/hardware/health_status", S::kDevice, true, 2, 28},
      {"stats/power/utilization", S::kDevice},
      {"stats/status", S::kCore, true},
      {"stats/other_info", S::kCore, true},
      {"stats/memory_usage/device_mem", S::kCore, true},
      {"stats/memory_usage/host_mem", S::kCore, true, 0, 0, false},
      {"stats/tensor_engine/pe_cntrs", S::kCore, false, 2, 23},
      {"info/architecture/arch_type", S::kCore, false, 0, 0, false},
  };
  return nodes;
}

bool IsKnownHealthNode(std::string_view name) { return In(kHealthNodes, name); }

void NodeIndex::Walk(int fd, const std::string& prefix, NodeScope scope, std::size_t depth,
                     const NodeLimits& limits, std::vector<Entry>& out) {
  const int dup = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup < 0) return;
  DIR* dir = ::fdopendir(dup);
  if (dir == nullptr) {
    ::close(dup);
    return;
  }
  std::vector<std::pair<std::string, bool>> entries;  // name, is a directory
  for (const dirent* e; (e = ::readdir(dir)) != nullptr;) {
    const std::string_view name = e->d_name;
    if (name == "." || name == ".." || name.front() == '.') continue;
    if (entries.size() >= limits.max_entries_per_directory || ++walked_ > limits.max_entries) {
      truncated_ = true;
      break;
    }
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
    }
    if (type != DT_DIR && type != DT_REG) continue;  // symlinks lead out of the device
    entries.emplace_back(name, type == DT_DIR);
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [name, is_dir] : entries) {
    if (depth == 0 && In(kGeneric, name)) continue;
    if (depth == 0 && scope == NodeScope::kDevice && name.rfind("neuron_core", 0) == 0) {
      const std::optional<std::uint32_t> k = CoreDirectoryNumber(name);
      if (k && is_dir && (!first_core_ || *k < *first_core_)) first_core_ = k;
      continue;
    }
    const std::string path = prefix + name;
    out.push_back({path, is_dir});
    // The listed directories' entries are the planner's. It reads every entry of health_status,
    // so there the entries no name here knows are walked, to be reported as unknown nodes.
    const bool health = name == "health_status";
    if (!is_dir || (In(kListed, name) && !health)) continue;
    if (depth + 1 >= limits.max_depth) {
      truncated_ = true;
      continue;
    }
    const int sub =
        ::openat(::dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    if (!health) {
      Walk(sub, path + "/", scope, depth + 1, limits, out);
    } else {
      std::vector<Entry> listed;
      Walk(sub, path + "/", scope, depth + 1, limits, listed);
      for (Entry& e : listed) {
        if (!e.directory && !IsKnownHealthNode(Basename(e.path))) out.push_back(std::move(e));
      }
    }
    ::close(sub);
  }
  ::closedir(dir);
}

std::optional<std::uint32_t> CoreDirectoryNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "neuron_core";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(kPrefix.size());
  std::uint32_t k = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size() || k >= 4096) return std::nullopt;
  return k;
}

NodeIndex NodeIndex::Build(int device_fd, const std::string& driver_version,
                           const NodeLimits& limits) {
  NodeIndex index;
  index.Walk(device_fd, "", NodeScope::kDevice, 0, limits, index.device_);
  // The lowest-numbered core stands for all: one driver lays every core out alike.
  if (index.first_core_) {
    const std::string first_core = "neuron_core" + std::to_string(*index.first_core_);
    const int core =
        ::openat(device_fd, first_core.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (core >= 0) {
      index.core_prefix_ = first_core + "/";
      index.Walk(core, "", NodeScope::kCore, 1, limits, index.core_);
      ::close(core);
    }
  }
  const std::optional<DriverVersion> version = ParseDriverVersion(driver_version);
  std::vector<std::string> resolved[2];
  for (const KnownNode& n : KnownNodes()) {
    const std::string prefix = n.scope == NodeScope::kCore ? "neuron_core<K>/" : "";
    const std::string at = index.Resolve(n.scope, n.canonical);
    const auto& entries = index.Entries(n.scope);
    const bool there =
        std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.path == at; });
    resolved[static_cast<int>(n.scope)].push_back(at);
    if (!n.read) continue;
    const bool expected = !version || version->AtLeast({n.since_major, n.since_minor});
    if (there && at == n.canonical) {
      index.found_.push_back(prefix + std::string(n.canonical));
    } else if (there) {
      index.moved_.push_back({prefix + std::string(n.canonical), prefix + at});
    } else if (expected && (n.scope == NodeScope::kDevice || !index.core_prefix_.empty())) {
      index.missing_.push_back(prefix + std::string(n.canonical));
    }
  }
  for (NodeScope scope : {NodeScope::kDevice, NodeScope::kCore}) {
    const std::string prefix = scope == NodeScope::kCore ? "neuron_core<K>/" : "";
    const std::vector<std::string>& known = resolved[static_cast<int>(scope)];
    for (const Entry& e : index.Entries(scope)) {
      if (e.directory) continue;
      if (std::find(known.begin(), known.end(), e.path) != known.end()) continue;
      index.unknown_.push_back(prefix + e.path);
    }
  }
  return index;
}

std::string NodeIndex::Resolve(NodeScope scope, std::string_view canonical) const {
  const auto& entries = Entries(scope);
  const KnownNode* known = nullptr;
  for (const KnownNode& n : KnownNodes()) {
    if (n.scope == scope && n.canonical == canonical) known = &n;
  }
  const bool directory = known != nullptr && known->directory;
  const Entry* best = nullptr;
  for (const Entry& e : entries) {
    if (e.directory != directory || Basename(e.path) != Basename(canonical)) continue;
    if (e.path == canonical) return e.path;
    // Of several, the one whose parent kept its name; else the first by path.
    if (best == nullptr ||
        (Parent(e.path) == Parent(canonical) && Parent(best->path) != Parent(canonical))) {
      best = &e;
    }
  }
  return best != nullptr ? best->path : std::string(canonical);
}

}  // namespace neuronmon::neurondev
