#include "proto/archive/archive.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "proto/common/duration.h"
#include "proto/wire/frame_codec.h"
#include "proto/wire/snapshot_codec.h"

namespace neuronmon::archive {
namespace {

constexpr std::uint32_t kHeaderMagic = 0x184D2A50;  // zstd skippable frame, variant 0
constexpr std::uint32_t kMarkMagic = 0x184D2A51;    // variant 1
constexpr char kHeaderPrefix[8] = {'N', 'M', 'A', 'R', 'C', 'H', '1', '\0'};
constexpr std::size_t kMarkBytes = 16;
constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr std::size_t kBlockHeaderBytes = 3;  // of a zstd block

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

void PutLe(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t GetLe(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string SkippableFrame(std::uint32_t magic, const std::string& payload) {
  std::string out;
  PutLe(out, magic, 4);
  PutLe(out, payload.size(), 4);
  out += payload;
  return out;
}

void AppendRecord(const v1::ArchiveRecord& record, std::string& out) {
  std::string body = record.SerializeAsString();
  std::uint32_t n = static_cast<std::uint32_t>(body.size());
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
  out += body;
}

// Reads up to `size` bytes at `offset`; fewer at the end of the file.
Result<std::string> ReadAt(int fd, std::uint64_t offset, std::size_t size,
                           const std::string& path) {
  std::string out(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, out.data() + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(ErrnoText("cannot read", path));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

std::int64_t UnixNanos(WallTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

WallTime FromUnixNanos(std::int64_t ns) {
  return WallTime(std::chrono::duration_cast<WallTime::duration>(std::chrono::nanoseconds(ns)));
}

// The start time a file name says ("20261204T213000Z-1.nmrec"), or nullopt.
std::optional<WallTime> StartFromName(const std::string& name) {
  std::tm tm{};
  const char* end = ::strptime(name.c_str(), "%Y%m%dT%H%M%SZ", &tm);
  if (end == nullptr || *end != '-') return std::nullopt;
  return WallTime(std::chrono::seconds(::timegm(&tm)));
}

std::string Basename(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

// ---- writer ----

struct ArchiveWriter::Zstd {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ~Zstd() { ZSTD_freeCCtx(cctx); }
};

ArchiveWriter::ArchiveWriter(std::string path, int fd, WriterOptions options)
    : path_(std::move(path)), fd_(fd), options_(options), zstd_(std::make_unique<Zstd>()) {
  ZSTD_CCtx_setParameter(zstd_->cctx, ZSTD_c_compressionLevel, options_.compression_level);
  ZSTD_CCtx_setParameter(zstd_->cctx, ZSTD_c_checksumFlag, 1);
  options_.chunk_records = std::max<std::size_t>(1, options_.chunk_records);
}

ArchiveWriter::~ArchiveWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<ArchiveWriter>> ArchiveWriter::Create(const std::string& path,
                                                             const v1::ArchiveHeader& header,
                                                             WriterOptions options) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) return Status::IoError(ErrnoText("cannot create", path));
  std::unique_ptr<ArchiveWriter> w(new ArchiveWriter(path, fd, options));
  v1::ArchiveHeader h = header;
  h.set_format_version(kFormatVersion);
  std::string payload(kHeaderPrefix, sizeof kHeaderPrefix);
  payload += h.SerializeAsString();
  if (Status st = w->Write(SkippableFrame(kHeaderMagic, payload)); !st.ok()) {
    ::unlink(path.c_str());
    return st;
  }
  return w;
}

Status ArchiveWriter::Write(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(ErrnoText("cannot write", path_));
    done += static_cast<std::size_t>(n);
  }
  bytes_ += bytes.size();
  return Status::Ok();
}

Status ArchiveWriter::Append(const Snapshot& snapshot, const v1::Inventory& inventory,
                             const std::string& description, std::span<const v1::Event> events) {
  if (fd_ < 0) return Status::FailedPrecondition("archive file " + path_ + " is closed");
  if (!first_wall_) first_wall_ = snapshot.wall;
  std::string out;
  if (in_chunk_ && chunk_snapshots_ >= options_.chunk_records) {
    if (Status st = EndChunk(); !st.ok()) return st;
  }
  bool fresh = false;
  if (!in_chunk_) {
    std::string mark;
    PutLe(mark, static_cast<std::uint64_t>(UnixNanos(snapshot.wall)), 8);
    PutLe(mark, snapshot.seq, 8);
    out = SkippableFrame(kMarkMagic, mark);
    ZSTD_CCtx_reset(zstd_->cctx, ZSTD_reset_session_only);
    in_chunk_ = true;
    chunk_snapshots_ = 0;
    fresh = true;
  }
  std::string records;
  v1::ArchiveRecord record;
  std::string inventory_bytes = inventory.SerializeAsString();
  if (fresh || inventory_bytes != inventory_bytes_) {
    *record.mutable_inventory() = inventory;
    AppendRecord(record, records);
    inventory_bytes_ = std::move(inventory_bytes);
  }
  if (fresh || description != description_) {
    record.set_description(description);
    AppendRecord(record, records);
    description_ = description;
  }
  for (const v1::Event& event : events) {
    *record.mutable_event() = event;
    AppendRecord(record, records);
  }
  wire::SnapshotToProto(snapshot, *record.mutable_snapshot());
  AppendRecord(record, records);

  ZSTD_inBuffer in{records.data(), records.size(), 0};
  buffer_.resize(ZSTD_compressBound(records.size()) + 1024);
  for (;;) {
    ZSTD_outBuffer o{buffer_.data(), buffer_.size(), 0};
    const std::size_t left = ZSTD_compressStream2(zstd_->cctx, &o, &in, ZSTD_e_flush);
    if (ZSTD_isError(left)) {
      return Status::Internal("zstd: " + std::string(ZSTD_getErrorName(left)));
    }
    out.append(buffer_.data(), o.pos);
    if (left == 0) break;
  }
  if (Status st = Write(out); !st.ok()) return st;
  ++chunk_snapshots_;
  ++snapshots_;
  return Status::Ok();
}

Status ArchiveWriter::EndChunk() {
  if (!in_chunk_) return Status::Ok();
  in_chunk_ = false;
  std::string out;
  ZSTD_inBuffer in{nullptr, 0, 0};
  buffer_.resize(4096);
  for (;;) {
    ZSTD_outBuffer o{buffer_.data(), buffer_.size(), 0};
    const std::size_t left = ZSTD_compressStream2(zstd_->cctx, &o, &in, ZSTD_e_end);
    if (ZSTD_isError(left)) {
      return Status::Internal("zstd: " + std::string(ZSTD_getErrorName(left)));
    }
    out.append(buffer_.data(), o.pos);
    if (left == 0) break;
  }
  return Write(out);
}

Status ArchiveWriter::Close() {
  if (fd_ < 0) return Status::Ok();
  Status st = EndChunk();
  if (st.ok() && ::fdatasync(fd_) != 0) st = Status::IoError(ErrnoText("cannot sync", path_));
  ::close(fd_);
  fd_ = -1;
  return st;
}

// ---- index ----

namespace {

// Checks that `fd` holds a recording of this format and parses its header into `header`; returns
// the header's size.
Result<std::uint64_t> ReadHeader(int fd, const std::string& path, v1::ArchiveHeader& header) {
  Result<std::string> head = ReadAt(fd, 0, 8, path);
  if (!head.ok()) return head.status();
  if (head->size() < 8 || GetLe(head->data(), 4) != kHeaderMagic) {
    return Status::InvalidArgument(path + " is not a neuronmon recording");
  }
  const std::uint64_t header_size = GetLe(head->data() + 4, 4);
  if (header_size < sizeof kHeaderPrefix || header_size > kMaxHeaderBytes) {
    return Status::InvalidArgument(path + ": header of " + std::to_string(header_size) +
                                   " bytes is out of bounds");
  }
  Result<std::string> payload = ReadAt(fd, 8, header_size, path);
  if (!payload.ok()) return payload.status();
  if (payload->size() != header_size ||
      payload->compare(0, sizeof kHeaderPrefix, kHeaderPrefix, sizeof kHeaderPrefix) != 0 ||
      !header.ParseFromArray(payload->data() + sizeof kHeaderPrefix,
                             static_cast<int>(header_size - sizeof kHeaderPrefix))) {
    return Status::InvalidArgument(path + " is not a neuronmon recording (bad header)");
  }
  if (header.format_version() != kFormatVersion) {
    return Status::InvalidArgument(path + " has archive format " +
                                   std::to_string(header.format_version()) +
                                   "; this version reads format " + std::to_string(kFormatVersion));
  }
  // A replay sizes its work by the period: one a recording claims is bounded as a daemon's is
  // (0: unknown, read as 1 s).
  const std::uint64_t period = header.base_period_ns();
  if (period != 0 && (period < static_cast<std::uint64_t>(kShortestPeriod.count()) ||
                      period > static_cast<std::uint64_t>(kLongestPeriod.count()))) {
    return Status::InvalidArgument(path + ": its header claims a sampling period of " +
                                   std::to_string(period) + " ns; a recording's is " +
                                   FormatDuration(kShortestPeriod) + " to " +
                                   FormatDuration(kLongestPeriod));
  }
  return header_size;
}

// Where the zstd frame at `offset` ends: it is read in growing pieces until it is whole, or the
// file ends inside it (a torn chunk, or the open one).
Result<std::uint64_t> FrameEnd(int fd, std::uint64_t offset, const std::string& path) {
  std::size_t want = 256 << 10;
  for (;;) {
    Result<std::string> frame = ReadAt(fd, offset, want, path);
    if (!frame.ok()) return frame.status();
    const std::size_t n = ZSTD_findFrameCompressedSize(frame->data(), frame->size());
    if (!ZSTD_isError(n)) return offset + n;
    if (frame->size() < want || want >= kMaxChunkBytes) {
      return offset + frame->size();  // the file ends inside it: the open chunk
    }
    want = std::min(want * 2, kMaxChunkBytes);
  }
}

// The chunk whose mark is at `pos`; nullopt when there is no mark there.
Result<std::optional<ChunkMark>> ReadChunkMark(int fd, std::uint64_t pos, const std::string& path) {
  Result<std::string> h = ReadAt(fd, pos, 8 + kMarkBytes, path);
  if (!h.ok()) return h.status();
  const auto magic = static_cast<std::uint32_t>(GetLe(h->data(), 4));
  if (magic != kMarkMagic || GetLe(h->data() + 4, 4) != kMarkBytes || h->size() < 8 + kMarkBytes) {
    return std::optional<ChunkMark>();
  }
  ChunkMark mark;
  mark.first_wall = FromUnixNanos(static_cast<std::int64_t>(GetLe(h->data() + 8, 8)));
  mark.first_seq = GetLe(h->data() + 16, 8);
  mark.offset = pos + 8 + kMarkBytes;
  Result<std::uint64_t> end = FrameEnd(fd, mark.offset, path);
  if (!end.ok()) return end.status();
  mark.end = *end;
  return std::optional<ChunkMark>(mark);
}

}  // namespace

Result<ArchiveFile> IndexFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(ErrnoText("cannot open", path));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::IoError(ErrnoText("cannot stat", path));
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);

  ArchiveFile file;
  file.path = path;
  Result<std::uint64_t> header_size = ReadHeader(fd, path, file.header);
  if (!header_size.ok()) return header_size.status();
  std::uint64_t pos = 8 + *header_size;
  while (pos + 8 <= size) {
    Result<std::optional<ChunkMark>> mark = ReadChunkMark(fd, pos, path);
    if (!mark.ok()) return mark.status();
    if (!mark->has_value()) break;  // not a mark: the rest is torn or foreign
    file.chunks.push_back(**mark);
    pos = (*mark)->end;
  }
  return file;
}

Result<std::vector<std::string>> ListArchive(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::IoError(ErrnoText("cannot list", dir));
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const std::string suffix = kFileSuffix;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(dir + "/" + name);
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    const std::string na = Basename(a), nb = Basename(b);
    // Same second: by serial as a number.
    const auto da = na.find('-'), db = nb.find('-');
    if (da != std::string::npos && db != std::string::npos && na.compare(0, da, nb, 0, db) == 0) {
      return std::strtoull(na.c_str() + da + 1, nullptr, 10) <
             std::strtoull(nb.c_str() + db + 1, nullptr, 10);
    }
    return na < nb;
  });
  return out;
}

std::string FileNameFor(WallTime wall, std::uint64_t serial) {
  const std::time_t t = std::chrono::system_clock::to_time_t(wall);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-" + std::to_string(serial) + kFileSuffix;
}

std::string FormatUtc(WallTime wall) {
  const std::time_t t = std::chrono::system_clock::to_time_t(wall);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<WallTime> ParseReplayTime(std::string_view text, WallTime start) {
  const std::string s(text);
  if (!s.empty() && s[0] == '+') {
    Result<Nanos> d = ParseDuration(s.substr(1));
    if (!d.ok()) return Status::InvalidArgument("\"" + s + "\": " + d.status().message());
    return start + std::chrono::duration_cast<WallTime::duration>(*d);
  }
  for (const char* format :
       {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"}) {
    std::tm tm{};
    const char* end = ::strptime(s.c_str(), format, &tm);
    if (end != nullptr && (*end == '\0' || (end[0] == 'Z' && end[1] == '\0'))) {
      return WallTime(std::chrono::seconds(::timegm(&tm)));
    }
  }
  for (const char* format : {"%H:%M:%S", "%H:%M"}) {
    std::tm tm{};
    const char* end = ::strptime(s.c_str(), format, &tm);
    if (end != nullptr && (*end == '\0' || (end[0] == 'Z' && end[1] == '\0'))) {
      const std::time_t t = std::chrono::system_clock::to_time_t(start);
      std::tm day{};
      ::gmtime_r(&t, &day);
      day.tm_hour = tm.tm_hour;
      day.tm_min = tm.tm_min;
      day.tm_sec = tm.tm_sec;
      return WallTime(std::chrono::seconds(::timegm(&day)));
    }
  }
  return Status::InvalidArgument(
      "\"" + s +
      "\" is not a time: use 2026-12-04T21:30:00Z (UTC), 21:30[:00] "
      "(UTC, on the recording's first day) or +DURATION after its start");
}

std::optional<WallTime> StartOfFile(const std::string& path) {
  return StartFromName(Basename(path));
}

bool IsFileNameFor(const std::string& path) {
  const std::optional<std::string> tag = FileNameTag(path);
  return tag && !tag->empty() &&
         std::all_of(tag->begin(), tag->end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::string> FileNameTag(const std::string& path) {
  const std::string name = Basename(path);
  const std::string_view suffix = kFileSuffix;
  if (!StartFromName(name) || name.size() <= suffix.size() || !name.ends_with(suffix)) {
    return std::nullopt;
  }
  const std::size_t dash = name.find('-');  // StartFromName found it right after the time
  return name.substr(dash + 1, name.size() - suffix.size() - dash - 1);
}

// ---- reader ----

struct ArchiveReader::Chunk {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ~Chunk() { ZSTD_freeDCtx(dctx); }
  std::string input;  // the compressed chunk
  std::size_t in_pos = 0;
  std::string pending;  // decompressed, not yet parsed
  std::size_t pending_pos = 0;
  bool input_done = false;
  std::size_t hint = 0;  // zstd's last answer: 0 when the frame is whole, else the input it wants
  wire::SnapshotDecoder decoder;
  std::vector<v1::Event> events;  // read since the last snapshot
  std::size_t events_dropped = 0;

  // Takes the next whole record out of `pending`: its body, valid until Inflate. Nullopt when
  // more must be decompressed first, or, with `*torn` set, when the length is malformed or over
  // the limit.
  std::optional<std::string_view> TakeRecord(std::optional<std::string>* torn);
  // Decompresses more of the chunk into `pending`; false when it has no more, with `*torn` set
  // when it ended inside a record or could not be decompressed. A zstd error after some output
  // ends the input and is reported in `*notice`.
  bool Inflate(std::optional<std::string>* torn, std::optional<std::string>* notice);
};

ArchiveReader::~ArchiveReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<ArchiveReader>> ArchiveReader::Open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::NotFound(ErrnoText("cannot open", path));
  std::unique_ptr<ArchiveReader> r(new ArchiveReader());
  if (S_ISDIR(st.st_mode)) {
    Result<std::vector<std::string>> files = ListArchive(path);
    if (!files.ok()) return files.status();
    if (files->empty()) return Status::NotFound("no recordings (*.nmrec) in " + path);
    r->files_ = std::move(*files);
  } else {
    r->files_ = {path};
  }
  for (const std::string& f : r->files_) {
    r->file_starts_.push_back(StartOfFile(f).value_or(WallTime{}));
  }
  // The first readable file gives the header and the first time.
  for (std::size_t i = 0; i < r->files_.size(); ++i) {
    Status opened = r->OpenFile(i);
    if (opened.ok() && !r->index_.chunks.empty()) {
      r->header_ = r->index_.header;
      r->first_wall_ = r->index_.chunks.front().first_wall;
      return r;
    }
    if (!opened.ok()) r->notices_.push_back(opened.message());
  }
  return Status::InvalidArgument("no readable recording in " + path +
                                 (r->notices_.empty() ? "" : ": " + r->notices_.front()));
}

Status ArchiveReader::OpenFile(std::size_t index) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  chunk_state_.reset();
  file_ = index;
  chunk_ = 0;
  Result<ArchiveFile> f = IndexFile(files_[index]);
  if (!f.ok()) {
    index_ = {};
    return f.status();
  }
  index_ = std::move(*f);
  fd_ = ::open(files_[index].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return Status::IoError(ErrnoText("cannot open", files_[index]));
  return Status::Ok();
}

Status ArchiveReader::Seek(WallTime wall) {
  // The last file that starts at or before `wall` (names say when; unnamed files are read).
  std::size_t f = 0;
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (file_starts_[i] != WallTime{} && file_starts_[i] <= wall) f = i;
  }
  if (Status st = OpenFile(f); !st.ok()) notices_.push_back(st.message());
  std::size_t c = 0;
  for (std::size_t i = 0; i < index_.chunks.size(); ++i) {
    if (index_.chunks[i].first_wall <= wall) c = i;
  }
  chunk_ = c;
  skip_before_ = wall;
  return Status::Ok();
}

bool ArchiveReader::NextChunk() {
  chunk_state_.reset();
  while (fd_ < 0 || chunk_ >= index_.chunks.size()) {
    if (file_ + 1 >= files_.size()) return false;
    if (Status st = OpenFile(file_ + 1); !st.ok()) notices_.push_back(st.message());
  }
  const ChunkMark& mark = index_.chunks[chunk_++];
  const std::uint64_t size = mark.end - mark.offset;
  if (size > kMaxChunkBytes) {
    notices_.push_back(files_[file_] + ": chunk at offset " + std::to_string(mark.offset) +
                       " is over " + std::to_string(kMaxChunkBytes) + " bytes; skipped");
    return NextChunk();
  }
  Result<std::string> bytes = ReadAt(fd_, mark.offset, size, files_[file_]);
  if (!bytes.ok()) {
    notices_.push_back(bytes.status().message());
    chunk_ = index_.chunks.size();
    return NextChunk();
  }
  chunk_state_ = std::make_unique<Chunk>();
  chunk_state_->input = std::move(*bytes);
  return true;
}

std::optional<std::string_view> ArchiveReader::Chunk::TakeRecord(std::optional<std::string>* torn) {
  const std::size_t avail = pending.size() - pending_pos;
  std::uint64_t length = 0;
  std::size_t header = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(avail, 5); ++i) {
    const auto b = static_cast<unsigned char>(pending[pending_pos + i]);
    length |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      header = i + 1;
      break;
    }
  }
  if (header == 0 && avail >= 5) {
    *torn = "a record's length is malformed";
    return std::nullopt;
  }
  if (header > 0 && length > kMaxRecordBytes) {
    *torn = "a record of " + std::to_string(length) + " bytes is over the limit";
    return std::nullopt;
  }
  if (header == 0 || avail < header + length) return std::nullopt;
  const std::string_view body(pending.data() + pending_pos + header, length);
  pending_pos += header + length;
  return body;
}

bool ArchiveReader::Chunk::Inflate(std::optional<std::string>* torn,
                                   std::optional<std::string>* notice) {
  if (pending_pos > 0) {
    pending.erase(0, pending_pos);
    pending_pos = 0;
  }
  if (input_done || in_pos >= input.size()) {
    // A chunk still being written ends between blocks (zstd then wants a block header next);
    // one that ends inside a block or a record was cut by a write that did not finish.
    if (!pending.empty() || (hint != 0 && hint != kBlockHeaderBytes)) {
      *torn = "the chunk ends inside a record (a torn write)";
    }
    return false;
  }
  const std::size_t old = pending.size();
  pending.resize(old + (128 << 10));
  const std::size_t old_in = in_pos;
  ZSTD_inBuffer in{input.data(), input.size(), in_pos};
  ZSTD_outBuffer out{pending.data() + old, 128 << 10, 0};
  const std::size_t r = ZSTD_decompressStream(dctx, &out, &in);
  pending.resize(old + out.pos);
  in_pos = in.pos;
  if (ZSTD_isError(r)) {
    input_done = true;
    const std::string error = std::string("zstd: ") + ZSTD_getErrorName(r);
    if (pending.empty()) {
      *torn = error;
      return false;
    }
    *notice = error;
  } else {
    hint = r;
    if (r == 0) input_done = in_pos >= input.size();
  }
  if (out.pos == 0 && in.pos == old_in) input_done = true;  // no progress: give up
  return true;
}

std::optional<Entry> ArchiveReader::ReadRecord() {
  Chunk& c = *chunk_state_;
  const auto torn = [&](const std::string& why) {
    notices_.push_back(files_[file_] + ": " + why + "; the rest of the chunk is skipped");
    return std::nullopt;
  };
  for (;;) {
    std::optional<std::string> why;
    const std::optional<std::string_view> body = c.TakeRecord(&why);
    std::optional<Entry> entry;
    if (body) entry = ApplyRecord(*body, c, &why);
    if (why) return torn(*why);
    if (entry) return entry;
    if (body) continue;  // an inventory, a description, or a newer writer's record
    std::optional<std::string> notice;
    if (!c.Inflate(&why, &notice)) return why ? torn(*why) : std::nullopt;
    if (notice) notices_.push_back(files_[file_] + ": " + *notice);
  }
}

std::optional<Entry> ArchiveReader::ApplyRecord(std::string_view body, Chunk& c,
                                                std::optional<std::string>* torn) {
  v1::ArchiveRecord record;
  if (!wire::WithinFieldBudget(body, *v1::ArchiveRecord::descriptor(), wire::kDefaultMaxFields) ||
      !record.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    *torn = "a record does not parse";
    return std::nullopt;
  }
  switch (record.body_case()) {
    case v1::ArchiveRecord::kInventory:
      inventory_ = std::make_shared<const v1::Inventory>(std::move(*record.mutable_inventory()));
      return std::nullopt;
    case v1::ArchiveRecord::kDescription:
      description_ = record.description();
      return std::nullopt;
    case v1::ArchiveRecord::kEvent:
      if (c.events.size() < kMaxEntryEvents) {
        c.events.push_back(std::move(*record.mutable_event()));
      } else {
        ++c.events_dropped;
      }
      return std::nullopt;
    case v1::ArchiveRecord::kSnapshot: {
      Result<Snapshot> s = c.decoder.Decode(record.snapshot());
      if (!s.ok()) {
        *torn = s.status().message();
      } else if (inventory_ == nullptr) {
        *torn = "a snapshot comes before any inventory";
      } else {
        if (c.events_dropped != 0) {
          notices_.push_back(files_[file_] + ": " + std::to_string(c.events_dropped) +
                             " events before one snapshot were skipped (more than " +
                             std::to_string(kMaxEntryEvents) + ")");
          c.events_dropped = 0;
        }
        return Entry{std::move(*s), inventory_, description_, std::exchange(c.events, {})};
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;  // a newer writer's record
  }
}

std::optional<Entry> ArchiveReader::Next() {
  for (;;) {
    if (chunk_state_ == nullptr && !NextChunk()) return std::nullopt;
    std::optional<Entry> e = ReadRecord();
    if (!e) {
      chunk_state_.reset();
      continue;
    }
    if (skip_before_ && e->snapshot.wall < *skip_before_) continue;
    skip_before_.reset();
    return e;
  }
}

WallTime ArchiveReader::LastChunkWall() {
  for (std::size_t i = files_.size(); i-- > 0;) {
    Result<ArchiveFile> f = IndexFile(files_[i]);
    if (f.ok() && !f->chunks.empty()) return f->chunks.back().first_wall;
  }
  return first_wall_;
}

std::vector<std::string> ArchiveReader::TakeNotices() {
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

}  // namespace neuronmon::archive
