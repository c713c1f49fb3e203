// Snapshot <-> neuronmon.v1.Snapshot (archive.proto): how the recorder keeps the daemon's history
// on disk, and how a replay reads it back into the same Snapshot the backend produced. Decoding
// checks what a recording from anywhere could hold (runtimes in ascending pid, one entry per
// collective operation, bounded counts) and shares a runtime's memory breakdown with the previous
// snapshot's while it does not change, as the live history does. Pure; a SnapshotDecoder is not
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "neuronmon/v1/archive.pb.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::wire {

// Fills `out` (cleared first) from `snapshot`.
void SnapshotToProto(const Snapshot& snapshot, v1::Snapshot& out);

// A runtime's memory gauges as the memory_used group shows them (with their totals), and back:
// one mapping for reports and the archive. MemoryToProto leaves period_ns and error to the caller.
void MemoryToProto(const RuntimeMemory& memory, v1::MemoryUsed& out);
std::shared_ptr<const RuntimeMemory> MemoryFromProto(const v1::MemoryUsed& memory);

// A device's power reading, and back. A reading with a figure that is not a finite number reads
// back as unavailable ("invalid reading").
void PowerToProto(const DevicePower& power, v1::PowerUtilization& out);
DevicePower PowerFromProto(const v1::PowerUtilization& power);

// Upper bounds a decoded snapshot must keep; over them it is refused (kInvalidArgument).
inline constexpr std::size_t kMaxSnapshotCores = 65'536;
inline constexpr std::size_t kMaxSnapshotDevices = 4'096;
inline constexpr std::size_t kMaxSnapshotRuntimes = 65'536;
inline constexpr std::size_t kMaxSnapshotCpus = 65'536;

class SnapshotDecoder {
 public:
  // The Snapshot `message` holds; errors (kInvalidArgument) say what is wrong with it.
  Result<Snapshot> Decode(const v1::Snapshot& message);

 private:
  // Decodes the runtimes into `s`, sharing each memory breakdown that did not change.
  Status DecodeRuntimes(const v1::Snapshot& message, Snapshot& s);

  // Per pid: the newest memory breakdown decoded and its serialized form.
  std::map<std::uint32_t, std::pair<std::string, std::shared_ptr<const RuntimeMemory>>> memory_;
};

}  // namespace neuronmon::wire
