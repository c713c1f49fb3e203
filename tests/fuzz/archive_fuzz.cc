// Fuzzes the archive reader with hostile recording files: the input is a whole .nmrec file (a
// recording given to --replay may come from anyone). It is written to a temp file, opened, read to
// its end, and sought at a few times; every snapshot it yields is re-encoded. Invariants: no
// crash, no unbounded allocation (ASan's rss limit), reading ends, and a snapshot that decoded
// encodes and decodes again to the same bytes.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "proto/archive/archive.h"
#include "proto/wire/protobuf_logs.h"
#include "proto/wire/snapshot_codec.h"

namespace neuronmon::fuzz {
namespace {

std::string TempPath() {
  static const std::string path = [] {
    char pattern[] = "/tmp/archive_fuzz_XXXXXX";
    const int fd = ::mkstemp(pattern);
    if (fd >= 0) ::close(fd);
    return std::string(pattern) + ".nmrec";
  }();
  return path;
}

void Drain(archive::ArchiveReader& reader) {
  for (int i = 0; i < 100000; ++i) {
    std::optional<archive::Entry> e = reader.Next();
    if (!e) return;
    v1::Snapshot once, twice;
    wire::SnapshotToProto(e->snapshot, once);
    Result<Snapshot> back = wire::SnapshotDecoder().Decode(once);
    if (!back.ok()) {
      std::fprintf(stderr, "archive_fuzz: a decoded snapshot does not decode again: %s\n",
                   back.status().message().c_str());
      std::abort();
    }
    wire::SnapshotToProto(*back, twice);
    if (once.SerializeAsString() != twice.SerializeAsString()) {
      std::fprintf(stderr, "archive_fuzz: a snapshot changed on its second round trip\n");
      std::abort();
    }
  }
  std::fprintf(stderr, "archive_fuzz: reading did not end\n");
  std::abort();
}

}  // namespace
}  // namespace neuronmon::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  neuronmon::wire::SilenceProtobufParseLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neuronmon;
  const std::string path = fuzz::TempPath();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto reader = archive::ArchiveReader::Open(path);
  if (reader.ok()) {
    fuzz::Drain(**reader);
    const WallTime start = (*reader)->first_wall();
    for (int s : {0, 30, 3600}) {
      (void)(*reader)->Seek(start + std::chrono::seconds(s));
      fuzz::Drain(**reader);
    }
    (void)(*reader)->LastChunkWall();
    (void)(*reader)->TakeNotices();
  }
  ::unlink(path.c_str());
  return 0;
}
