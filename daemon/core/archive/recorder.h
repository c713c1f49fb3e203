// Recorder: the daemon's on-disk archive (config "recorder"): every snapshot the daemon keeps is
// also appended to archive files (proto/archive) in one directory, a new file every `segment`,
// the oldest deleted first once the archive is over `max_bytes` or older than `retention`. A
// write that fails (a full disk) stops recording with one error and the recorder tries again a
// minute later in a new file; it never throws and never stops the daemon. File I/O only — the
// daemon calls it from a thread of its own so a slow disk cannot stall clients. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "neuronmon/v1/archive.pb.h"
#include "proto/archive/archive.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

struct RecorderOptions {
  std::string directory;
  std::uint64_t max_bytes = 1ull << 30;
  Nanos retention = std::chrono::hours(24 * 30);  // zero: only the size cap
  Nanos segment = std::chrono::minutes(10);       // a new file this often
  int compression_level = 3;
  Nanos retry = std::chrono::minutes(1);  // after a failure
  bool operator==(const RecorderOptions&) const = default;
};

struct RecorderStats {
  bool active = false;              // the last append was written
  std::uint64_t snapshots = 0;      // written
  std::uint64_t bytes_written = 0;  // compressed, since start
  std::uint64_t archive_bytes = 0;  // the archive's files now
  std::uint64_t failures = 0;       // appends that failed (recording stopped each time)
  std::uint64_t files_deleted = 0;  // by the cap and the retention
  std::string last_error;
};

class Recorder {
 public:
  // `header` names the recording daemon (version, description, period, instance, host).
  Recorder(RecorderOptions options, v1::ArchiveHeader header);
  ~Recorder();

  // Appends one snapshot. Returns the error when this append stopped recording (the first
  // failure of an episode); Ok otherwise, also while waiting to retry.
  Status Append(const Snapshot& snapshot, const v1::Inventory& inventory,
                const std::string& description, std::span<const v1::Event> events = {});
  // Ends the current file (syncing it).
  void Close();

  const RecorderStats& stats() const { return stats_; }
  const RecorderOptions& options() const { return options_; }

 private:
  Status OpenFile(WallTime wall);
  void Prune(WallTime now);

  RecorderOptions options_;
  v1::ArchiveHeader header_;
  std::unique_ptr<archive::ArchiveWriter> writer_;
  std::uint64_t serial_ = 0;
  // Closed files, oldest first: path, size, first snapshot time.
  struct File {
    std::string path;
    std::uint64_t bytes = 0;
  };
  std::deque<File> files_;
  bool scanned_ = false;
  std::optional<WallTime> retry_at_;
  bool failing_ = false;  // since the last append that was written
  RecorderStats stats_;
};

// Creates `dir` and its missing parents (mode 0750).
Status MakeDirectories(const std::string& dir);

}  // namespace neuronmon::daemon
