// RecordingFile: a client's --record file — the snapshots its daemon streams (Subscribe.snapshots)
// written in the archive format (proto/archive), one portable file that every --replay reads, with
// any subscription, exactly as it reads the daemon's own archive. The file is created (never
// overwritten) when the first snapshot arrives; every snapshot is one write, so a client killed
// mid-run leaves a readable file. Not thread-safe.
#pragma once

#include <memory>
#include <string>

#include "neuronmon/v1/archive.pb.h"
#include "neuronmon/v1/envelope.pb.h"
#include "proto/archive/archive.h"
#include "proto/common/status.h"
#include "proto/wire/snapshot_codec.h"

namespace neuronmon::client {

class RecordingFile {
 public:
  // Checks that `path` does not exist and its directory can be written; `recorder` names the
  // program ("neuron-top --record").
  static Result<std::unique_ptr<RecordingFile>> Prepare(const std::string& path,
                                                        std::string recorder);
  ~RecordingFile();

  // A new connection's Welcome: the daemon's version, period and instance for the header.
  void SetWelcome(const v1::Welcome& welcome);
  // Takes one record of the stream; snapshots are appended. Errors (a full disk, a malformed
  // snapshot) say why; the caller stops recording.
  Status Add(const v1::ArchiveRecord& record);
  // Ends the file (syncs it). Also done by the destructor.
  Status Close();

  const std::string& path() const { return path_; }
  std::uint64_t snapshots() const { return writer_ ? writer_->snapshots() : 0; }

 private:
  RecordingFile() = default;

  std::string path_;
  std::string recorder_;
  v1::Welcome welcome_;
  v1::Inventory inventory_;
  std::string description_;
  wire::SnapshotDecoder decoder_;
  std::unique_ptr<archive::ArchiveWriter> writer_;
};

}  // namespace neuronmon::client
