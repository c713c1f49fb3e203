#include "daemon/server/gzip.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "proto/common/http_lists.h"
#include "proto/common/text.h"

namespace neuronmon::daemon {

constexpr std::size_t kMaxCodings = 64;

bool AcceptsGzip(std::string_view accept_encoding) {
  double gzip = -1;  // not named
  double any = -1;   // "*" not named
  for (const WeightedMember& coding :
       ParseWeightedList(accept_encoding, WeightSyntax::kStrict, kMaxCodings)) {
    if (EqualsIgnoringCase(coding.value, "gzip") || EqualsIgnoringCase(coding.value, "x-gzip")) {
      gzip = std::max(gzip, coding.weight);
    } else if (coding.value == "*") {
      any = std::max(any, coding.weight);
    }
  }
  return gzip >= 0 ? gzip > 0 : any > 0;
}

Result<std::string> Gzip(std::string_view text, int level) {
  // One compressor per thread and level: allocating one costs more than compressing a small body.
  struct Free {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  thread_local std::unique_ptr<libdeflate_compressor, Free> compressor;
  thread_local int compressor_level = -1;
  if (compressor == nullptr || compressor_level != level) {
    compressor.reset(libdeflate_alloc_compressor(level));
    compressor_level = level;
    if (compressor == nullptr)
      return Status::Internal("gzip: no compressor at level " + std::to_string(level));
  }
  std::string out(libdeflate_gzip_compress_bound(compressor.get(), text.size()), '\0');
  const std::size_t written =
      libdeflate_gzip_compress(compressor.get(), text.data(), text.size(), out.data(), out.size());
  if (written == 0) return Status::Internal("gzip: the output did not fit its bound");
  out.resize(written);
  return out;
}

Result<std::string> Gunzip(std::string_view gz, std::size_t max_bytes) {
  if (gz.size() > std::numeric_limits<uInt>::max() / 2) {
    return Status::OutOfRange("gunzip: input too large");
  }
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return Status::Internal("gunzip: inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char chunk[1 << 14];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = sizeof chunk - z.avail_out;
    if (out.size() + produced > max_bytes) {
      inflateEnd(&z);
      return Status::OutOfRange("gunzip: inflates beyond " + std::to_string(max_bytes) + " bytes");
    }
    out.append(chunk, produced);
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::InvalidArgument("gunzip: not a whole gzip member");
  return out;
}

}  // namespace neuronmon::daemon
