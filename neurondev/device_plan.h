// A DevicePlan is one device of the driver's sysfs tree as a discovery found it (DevicePlanner):
// its directory, the files to read and, per file, the descriptor kept open for it and how often
// it is re-read; with what its constant files said then. Here too are the few operations on a
// plan's files: open one under the device's directory, read one from its start, read one by path
// with ReadRegularFile's checks. Internal to SysfsTree and SysfsSampler. A plan owns its
// descriptors. Thread-compatible.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neurondev/node_index.h"
#include "neurondev/tree_reading.h"
#include "proto/common/status.h"
#include "proto/common/unique_fd.h"

namespace neuronmon::neurondev {

// As ReadRegularFile opens: O_NONBLOCK so that a FIFO cannot block the read; its type is refused.
inline constexpr int kFileFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
inline constexpr int kDirectoryFlags = O_RDONLY | O_CLOEXEC | O_DIRECTORY;

// Which directory holds a device's files. A device whose directory was replaced (removed and
// added again, as a driver reload does) is a new device to the sampler: while the sampler keeps
// the old directory open, the new one cannot have its inode number.
struct DirIdentity {
  std::string path;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const DirIdentity&) const = default;
};

DirIdentity Identity(std::string path, const struct stat& st);
// `devices/virtual/neuron_device/neuron<N>` when that is a directory, else the class link.
DirIdentity IdentifyDeviceDir(const std::string& root, int index);

// How often a file is re-read (SamplerOptions): at every sample, or at one sample in
// errors_every, slow_every or rare_every.
enum class Pace : std::uint8_t { kLive, kErrors, kSlow, kRare };

// A file a plan reads: where it is under its device's directory, and the descriptor kept open
// for it (none: it is opened, read and closed at every read). A file of a pace other than kLive
// may be re-read only at some samples: `last` is what it said then.
struct PlannedFile {
  std::string relative;
  UniqueFd fd;
  Pace pace = Pace::kLive;
  std::uint32_t phase = 0;  // re-read at samples s with (s + phase) % every == 0
  std::optional<Result<std::string>> last;
};

// A file read by path at every read.
PlannedFile ByPath(std::string relative);

// Which sample a reading is, and how often the files of each pace are re-read (all 1: every
// file at every read).
struct Refresh {
  std::uint64_t sample = 0;
  std::array<std::uint32_t, 4> every{1, 1, 1, 1};  // by Pace
};

struct PlannedCounter {
  std::string name;
  PlannedFile total;
};

struct PlannedMemory {
  std::string name;
  PlannedFile total;
  PlannedFile peak;
};

struct PlannedCore {
  std::uint32_t index = 0;
  std::vector<PlannedCounter> outcomes;
  std::vector<PlannedCounter> other_info;
  std::vector<PlannedMemory> device_memory;
  PlannedFile pe_counters;
  std::vector<PeCounters> last_pe;  // the last consistent reading, to tell a torn one
};

// One device's layout as discovered, and what its constant files said then.
struct DevicePlan {
  DirIdentity dir;
  UniqueFd dir_fd;
  DeviceReading constants;  // index, the constant files, their errors and absences
  std::vector<PlannedMemory> host_memory;
  // Directories of counters or categories this device's tree lacks (relative paths): absent, as
  // a missing file is, rather than an empty list that looks like a driver without such counters.
  std::vector<std::string> missing;
  std::array<PlannedFile, 3> hardware;
  // Where this device's nodes are (found by name), and what the walk found that it does not know.
  NodeIndex nodes;
  bool has_health_status = false;
  std::string health_error;            // health_status exists but is not a readable directory
  std::vector<PlannedCounter> health;  // every entry of health_status/, by name
  PlannedFile power;
  PlannedFile reset;  // the device state (root only; unreadable is not an error)
  std::vector<PlannedCore> cores;
};

// Opens `relative` under the device's directory (through its descriptor when the plan keeps one).
int OpenUnder(const DevicePlan& device, const std::string& relative, int flags);
// Whether `relative` is a directory (symlinks followed); false with `*error` empty when it does
// not exist, false with `*error` saying why when it exists but is not one or cannot be checked.
bool DirectoryUnder(const DevicePlan& device, const std::string& relative, std::string* error);
// Reads `fd` from its start with one call: sysfs serves an attribute whole, and a regular file's
// short read is its end.
ssize_t ReadFromStart(int fd, std::string& buffer);
// ReadRegularFile's checks and messages, for a file opened relative to its device's directory,
// into `buffer` (max_bytes + 1 long).
Result<std::string_view> ReadByPath(const DevicePlan& device, const std::string& relative,
                                    const std::string& path, std::string& buffer);

// Descriptors the plan keeps open.
std::size_t OpenIn(const PlannedFile& file);
std::size_t OpenIn(const DevicePlan& d);

}  // namespace neuronmon::neurondev
