// NodeIndex finds the driver's nodes in one device's sysfs directory by name, not by path: the
// driver has moved nodes between generations (2.31 reorganised the tree without publishing the
// new paths), so each node the reader knows is looked up by its name within its scope — the
// device's directory, or a core's (`neuron_core<K>`) — wherever it now lives. It walks the
// directory once per discovery, bounded (depth, entries per directory, entries in all), without
// following symlinks or descending into directories whose entries are categories or counters
// (host_mem, device_mem, status, other_info, health_status: those are listed by the planner).
// What it reports — the nodes found where expected, found elsewhere, missing, and the nodes it
// does not know — is what `neuron-ls --driver` prints. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neuronmon::neurondev {

enum class NodeScope : std::uint8_t { kDevice, kCore };

// A node the reader knows: its path in the 2.24–2.30 layout (relative to its scope's directory),
// and the driver version that added it (expected from then on; {0, 0}: always).
struct KnownNode {
  std::string_view canonical;
  NodeScope scope;
  bool directory = false;
  int since_major = 0, since_minor = 0;
  bool read = true;  // the reader reads it (else it is known only, not reported missing)
};

// Every node the reader knows, in one table.
const std::vector<KnownNode>& KnownNodes();

// The entries of health_status/ the reader knows by name (it reads every entry there).
bool IsKnownHealthNode(std::string_view name);

// K of a core's directory name, "neuron_core<K>" (K decimal, below 4096); nullopt for any other
// name.
std::optional<std::uint32_t> CoreDirectoryNumber(std::string_view name);

struct NodeLimits {
  std::size_t max_depth = 6;
  std::size_t max_entries_per_directory = 256;
  std::size_t max_entries = 4096;
};

class NodeIndex {
 public:
  NodeIndex() = default;
  // Walks the device directory `device_fd` (kept open by the caller) and the first core
  // directory found in it. `driver_version` ("2.28.0.0") says which known nodes are expected.
  static NodeIndex Build(int device_fd, const std::string& driver_version,
                         const NodeLimits& limits);

  // Where the known node `canonical` of `scope` lives (relative to its scope's directory): its
  // canonical path when it is there or was not found anywhere, else where it was found.
  std::string Resolve(NodeScope scope, std::string_view canonical) const;

  struct Moved {
    std::string canonical;
    std::string found;
  };
  const std::vector<std::string>& found() const { return found_; }      // where expected
  const std::vector<Moved>& moved() const { return moved_; }            // found elsewhere
  const std::vector<std::string>& missing() const { return missing_; }  // expected, not found
  const std::vector<std::string>& unknown() const { return unknown_; }  // found, not known
  bool truncated() const { return truncated_; }                         // a bound stopped the walk

 private:
  struct Entry {
    std::string path;  // relative to the scope's directory
    bool directory = false;
  };
  void Walk(int fd, const std::string& prefix, NodeScope scope, std::size_t depth,
            const NodeLimits& limits, std::vector<Entry>& out);
  const std::vector<Entry>& Entries(NodeScope scope) const {
    return scope == NodeScope::kDevice ? device_ : core_;
  }

  std::vector<Entry> device_, core_;
  std::string core_prefix_;                  // "neuron_core<K>/" of the core walked, for the report
  std::optional<std::uint32_t> first_core_;  // the lowest K the device's walk passed
  std::size_t walked_ = 0;
  bool truncated_ = false;
  std::vector<std::string> found_, missing_, unknown_;
  std::vector<Moved> moved_;
};

}  // namespace neuronmon::neurondev
