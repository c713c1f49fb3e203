// DeviceFiles reads the files of one DevicePlan for one reading — from the kept descriptors, by
// path when it has none, or, for a file whose pace skips this sample, what it said last — and
// collects into the reading what is absent and what is wrong. ReadPlanned is one whole reading
// of a planned device; ReadVersion reads the driver's version file. Internal to SysfsTree and
// SysfsSampler. DeviceFiles borrows everything it is given for its lifetime. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neurondev/device_plan.h"
#include "neurondev/tree_reading.h"
#include "proto/common/status.h"

namespace neuronmon::neurondev {

// Reads the files of one device plan, collecting what is absent and what is wrong into `out`.
class DeviceFiles {
 public:
  DeviceFiles(const TreeLimits& limits, const Refresh& refresh, const DevicePlan& device,
              std::string& buffer, DeviceReading& out)
      : limits_(limits), refresh_(refresh), device_(device), buffer_(buffer), out_(out) {}

  std::string Path(const PlannedFile& file) const { return device_.dir.path + "/" + file.relative; }

  // The file's contents, valid until the next read; nullopt when absent or unreadable.
  std::optional<std::string_view> Text(PlannedFile& file);
  void Error(std::string message) { out_.errors.push_back(std::move(message)); }
  // A counter file's value; nullopt when absent, unreadable or not a number.
  std::optional<std::uint64_t> Counter(PlannedFile& file);
  // The same for a file that need not be there or be readable (one only root may read): nullopt
  // and nothing recorded unless it holds something that is not a number.
  std::optional<std::uint64_t> OptionalCounter(PlannedFile& file);
  // The core's tensor-engine counters, read again once when torn (PeCountersTorn); empty, with
  // the reason recorded, when the second read is torn too.
  std::vector<PeCounters> PeCounterRows(PlannedCore& core);
  // The counters that could be read, in plan order.
  std::vector<NamedCounter> Counters(std::vector<PlannedCounter>& planned);
  // The categories whose usage could be read, with their high-water marks when plausible.
  std::vector<MemoryCategory> Memory(std::vector<PlannedMemory>& planned);

 private:
  Result<std::string_view> ReadNow(PlannedFile& file);
  // The file read now, or its last reading when its pace skips this sample.
  Result<std::string_view> Paced(PlannedFile& file);
  // Whether this sample re-reads `file` (its pace, or it has no reading kept yet).
  bool Due(const PlannedFile& file) const;
  // Keeps `text` as the file's last reading when it is paced.
  void Keep(PlannedFile& file, const Result<std::string_view>& text);
  std::optional<std::string_view> Deliver(const PlannedFile& file,
                                          const Result<std::string_view>& text);

  const TreeLimits& limits_;
  const Refresh& refresh_;
  const DevicePlan& device_;
  std::string& buffer_;
  DeviceReading& out_;
};

// One reading of a planned device: its constants as discovered, every other file read now (or
// at its pace, per `refresh`). `buffer` is max_file_bytes + 1 long.
DeviceReading ReadPlanned(DevicePlan& d, const TreeLimits& limits, const Refresh& refresh,
                          std::string& buffer);

// /module/neuron/version: nothing when it does not exist, an error when it cannot be read.
void ReadVersion(const std::string& root, const TreeLimits& limits, TreeReading& out);

}  // namespace neuronmon::neurondev
