// gzip for /metrics: Prometheus asks every target for it ("Accept-Encoding: gzip"), and a large
// instance's exposition shrinks about thirtyfold. Pure functions (Gzip keeps one libdeflate
// compressor per thread); libdeflate compresses, zlib inflates (streaming, so a bomb is stopped
// early).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "proto/common/status.h"

namespace neuronmon::daemon {

// Whether an Accept-Encoding value admits gzip (RFC 9110 §12.5.3): "gzip" or "x-gzip" or "*" with
// a q-value above 0, where an explicit "gzip;q=0" refuses it whatever "*" says. q-values are read
// strictly (WeightSyntax::kStrict, proto/common/http_lists.h). Bounded: at most 64 codings are
// looked at.
bool AcceptsGzip(std::string_view accept_encoding);

// `text` as one gzip member at compression level `level` (1: fastest; libdeflate takes 0 to 12).
Result<std::string> Gzip(std::string_view text, int level = 1);

// The text of one gzip member; an error when it is malformed, truncated, or would inflate beyond
// `max_bytes` (a bomb).
Result<std::string> Gunzip(std::string_view gz, std::size_t max_bytes);

}  // namespace neuronmon::daemon
