// The job accounting's file (docs/jobs.md): the JobBook saved to and restored from one protobuf
// file (v1.JobArchive), written whole to a temporary file, synced and renamed over the old one,
// so a crash leaves the previous or the new state, never half of one.
#pragma once

#include <cstddef>
#include <string>

#include "daemon/core/jobs/job_book.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

// The most a job file may hold (a hostile or corrupt file is refused, not read into memory).
inline constexpr std::size_t kMaxJobFileBytes = 64 << 20;

// Writes `book` to `path` (mode 0640), creating its directory when missing.
Status SaveJobFile(JobBook& book, const std::string& path);
// Restores `book` from `path`. A missing file is not an error (a first start): NotFound.
Status LoadJobFile(JobBook& book, const std::string& path, WallTime now);

}  // namespace neuronmon::daemon
