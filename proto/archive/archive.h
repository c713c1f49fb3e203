// The recorder's archive format (proto/FORMAT.md, "Archive"): a file is a sequence of zstd frames,
// so `zstd -dc FILE` prints its records. It starts with a skippable frame holding the
// ArchiveHeader; then come chunks, each a skippable "mark" frame (the wall time and seq of its
// first snapshot: the index for seeking) followed by one zstd frame of delimited ArchiveRecords —
// the inventory, the backend's description, then up to `chunk_records` snapshots. The writer
// flushes after every snapshot, so what a killed process wrote is readable up to its last whole
// record; a reader skips a torn tail and says so. A directory archive is such files, named by the
// UTC time of their first snapshot, oldest first.
//
// ArchiveWriter and ArchiveReader do file I/O only: no threads, no clocks. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neuronmon/v1/archive.pb.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/clock.h"
#include "proto/common/snapshot.h"
#include "proto/common/status.h"

namespace neuronmon::archive {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr char kFileSuffix[] = ".nmrec";
// A record (one snapshot) and a chunk's compressed bytes a reader accepts at most.
inline constexpr std::size_t kMaxRecordBytes = 16 << 20;
inline constexpr std::size_t kMaxChunkBytes = 64 << 20;

struct WriterOptions {
  int compression_level = 3;
  std::size_t chunk_records = 60;  // snapshots per chunk: what a seek decompresses at most
};

// One archive file being written.
class ArchiveWriter {
 public:
  // Creates `path` (mode 0640; it must not exist) and writes the header.
  static Result<std::unique_ptr<ArchiveWriter>> Create(const std::string& path,
                                                       const v1::ArchiveHeader& header,
                                                       WriterOptions options = {});
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  // Appends `snapshot`, taken when the backend had `inventory` and `description`, after the
  // `events` seen at it (docs/events.md); once this returns, the records are in the file (one
  // write). After an error the file is torn: close it.
  Status Append(const Snapshot& snapshot, const v1::Inventory& inventory,
                const std::string& description, std::span<const v1::Event> events = {});
  // Ends the open chunk and syncs the file to disk.
  Status Close();

  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t snapshots() const { return snapshots_; }
  std::optional<WallTime> first_wall() const { return first_wall_; }

 private:
  ArchiveWriter(std::string path, int fd, WriterOptions options);
  Status Write(const std::string& bytes);
  Status EndChunk();

  std::string path_;
  int fd_ = -1;
  WriterOptions options_;
  struct Zstd;
  std::unique_ptr<Zstd> zstd_;
  bool in_chunk_ = false;
  std::size_t chunk_snapshots_ = 0;
  std::string inventory_bytes_;  // the newest inventory written in this chunk
  std::string description_;
  std::string buffer_;
  std::uint64_t bytes_ = 0;
  std::uint64_t snapshots_ = 0;
  std::optional<WallTime> first_wall_;
};

// One recorded snapshot with what was current when it was taken.
struct Entry {
  Snapshot snapshot;
  std::shared_ptr<const v1::Inventory> inventory;
  std::string description;
  // The events recorded with it: seen at it, and the daemon's own since the snapshot before (at
  // most kMaxEntryEvents; more are counted in the reader's notices).
  std::vector<v1::Event> events;
};

inline constexpr std::size_t kMaxEntryEvents = 1000;

// A chunk's place, from its mark.
struct ChunkMark {
  std::uint64_t offset = 0;  // of the zstd frame
  std::uint64_t end = 0;     // one past its last byte (the file's end for a torn last chunk)
  WallTime first_wall;
  std::uint64_t first_seq = 0;
};

struct ArchiveFile {
  std::string path;
  v1::ArchiveHeader header;
  std::vector<ChunkMark> chunks;  // in file order
};

// Reads one file's header and chunk marks (reading through the file; memory stays bounded by
// kMaxChunkBytes). A file whose tail is torn keeps the chunks before it.
Result<ArchiveFile> IndexFile(const std::string& path);

// The archive files in `dir`, oldest first (by name).
Result<std::vector<std::string>> ListArchive(const std::string& dir);

// "20261204T213000Z-1.nmrec": the name of a file whose first snapshot is at `wall`; `serial` keeps
// names unique when two start within a second.
std::string FileNameFor(WallTime wall, std::uint64_t serial);
// The time the name of the file at `path` says (FileNameFor's), to the second; nullopt for
// another name.
std::optional<WallTime> StartOfFile(const std::string& path);

// What the name of the file at `path` says after FileNameFor's time and before the suffix: "1" for
// "20261204T213000Z-1.nmrec", "hang-2" for an incident's "20261204T213000Z-hang-2.nmrec"; nullopt
// for a name that does not start with such a time or end in kFileSuffix. Who prunes a directory
// deletes only the files whose tag it made (the recorder's are digits alone).
std::optional<std::string> FileNameTag(const std::string& path);
// Whether the name of the file at `path` is one FileNameFor makes (its tag is the serial's digits):
// the recorder's own files, the only ones its pruning deletes.
bool IsFileNameFor(const std::string& path);

// "2026-12-04T21:30:00Z" (UTC, to the second).
std::string FormatUtc(WallTime wall);
// A time a user gives --from/--to: "2026-12-04T21:30:00Z" (also without the Z, or with a space,
// always UTC), "21:30[:00]" (that time on the day of `start`, UTC), or "+DURATION" ("+90s",
// "+10m": after `start`). Errors (kInvalidArgument) quote the text and list the forms.
Result<WallTime> ParseReplayTime(std::string_view text, WallTime start);

// Reads an archive — one file or a directory of them — in time order, from any point.
class ArchiveReader {
 public:
  static Result<std::unique_ptr<ArchiveReader>> Open(const std::string& path);
  ~ArchiveReader();

  // Positions before the first snapshot at or after `wall` (or at the end). Reads only the
  // chunk marks of the file that holds it and that chunk.
  Status Seek(WallTime wall);
  // The next snapshot; nullopt at the end. A record that cannot be read ends its file with a
  // notice (take them with TakeNotices) and reading goes on with the next file.
  std::optional<Entry> Next();
  // Notices since the last call: torn tails, unreadable files.
  std::vector<std::string> TakeNotices();

  // The first and newest snapshot times (the newest is the last chunk's start when the newest file
  // was not read to its end).
  WallTime first_wall() const { return first_wall_; }
  // The start of the newest file's last chunk: the newest minute (reads that file's marks).
  WallTime LastChunkWall();
  const v1::ArchiveHeader& header() const { return header_; }
  std::size_t files() const { return files_.size(); }

 private:
  struct Chunk;  // the chunk being read: its bytes, their decompression and decoding

  ArchiveReader() = default;
  Status OpenFile(std::size_t index);
  bool NextChunk();
  std::optional<Entry> ReadRecord();
  // Applies one record of chunk `c`: an inventory or a description is kept for the snapshots
  // after it, a snapshot is decoded into an Entry. Nullopt for the others, and, with `*torn`
  // set, for a record that does not parse or a snapshot that cannot be read.
  std::optional<Entry> ApplyRecord(std::string_view body, Chunk& c,
                                   std::optional<std::string>* torn);

  std::vector<std::string> files_;
  std::vector<WallTime> file_starts_;  // from names, or the first mark
  v1::ArchiveHeader header_;
  WallTime first_wall_;
  std::vector<std::string> notices_;

  // The file being read.
  std::size_t file_ = 0;
  int fd_ = -1;
  ArchiveFile index_;
  std::size_t chunk_ = 0;  // next chunk to open
  std::unique_ptr<Chunk> chunk_state_;
  std::shared_ptr<const v1::Inventory> inventory_;
  std::string description_;
  std::optional<WallTime> skip_before_;  // set by Seek
};

}  // namespace neuronmon::archive
