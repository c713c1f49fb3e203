#include "daemon/server/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <limits>

namespace neuronmon::daemon {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The q-value of one coding's parameters ("q=0.5"); 1 when absent, 0 when malformed.
double QualityOf(std::string_view params) {
  while (!params.empty()) {
    const std::size_t semi = params.find(';');
    const std::string_view param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (param.size() < 2 || std::tolower(static_cast<unsigned char>(param[0])) != 'q' ||
        param[1] != '=') {
      continue;
    }
    const std::string_view value = param.substr(2);
    // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    if (value.empty() || value.size() > 5 || (value[0] != '0' && value[0] != '1')) return 0;
    if (value.size() > 1 && value[1] != '.') return 0;
    double q = value[0] - '0';
    double scale = 0.1;
    for (std::size_t i = 2; i < value.size(); ++i, scale /= 10) {
      if (!std::isdigit(static_cast<unsigned char>(value[i]))) return 0;
      q += (value[i] - '0') * scale;
    }
    return std::min(q, 1.0);
  }
  return 1;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  double gzip = -1;  // not named
  double any = -1;   // "*" not named
  for (int n = 0; n < 64 && !accept_encoding.empty(); ++n) {
    const std::size_t comma = accept_encoding.find(',');
    const std::string_view item = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    const std::size_t semi = item.find(';');
    const std::string_view coding = Trim(item.substr(0, semi));
    const double q =
        QualityOf(semi == std::string_view::npos ? std::string_view() : item.substr(semi + 1));
    if (EqualsIgnoringCase(coding, "gzip") || EqualsIgnoringCase(coding, "x-gzip")) {
      gzip = std::max(gzip, q);
    } else if (coding == "*") {
      any = std::max(any, q);
    }
  }
  return gzip >= 0 ? gzip > 0 : any > 0;
}

Result<std::string> Gzip(std::string_view text, int level) {
  if (text.size() > std::numeric_limits<uInt>::max() / 2) {
    return Status::OutOfRange("gzip: input too large");
  }
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Internal("gzip: deflate did not finish");
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
