// Reading a whole small file that someone else may control (a config, a scenario, a token) without
// trusting it: it must be a regular file — not a FIFO that blocks, a device that never ends, or a
// directory — and no larger than the caller's cap, checked before the bytes are read. Errors name
// the file and what is wrong with it. Pure functions over the file system; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "proto/common/status.h"

namespace neuronmon {

// The contents of `path` (symlinks followed). Errors: kNotFound when it does not exist ("PATH:
// cannot open: No such file or directory"), kInvalidArgument when it is not a regular file or is
// larger than `max_bytes` ("PATH: file larger than 1 MiB"), kIoError for other failures.
Result<std::string> ReadRegularFile(const std::string& path, std::size_t max_bytes);

// "1 MiB", "64 KiB", "512 bytes": a size for messages.
std::string FormatBytes(std::size_t bytes);

// The contents of a private file (`what`: "token", "private key"), as ReadRegularFile, refused
// when other users may read it (mode & 0004: "PATH: mode 0644 lets every user read the private
// key; make it 0600 or 0640"); the mode is the open file's, so a file swapped after a check is not
// read.
Result<std::string> ReadPrivateFile(const std::string& path, std::size_t max_bytes,
                                    std::string_view what);

// The first line of a secret file (an auth token), spaces, tabs and '\r' trimmed. Refuses a file
// that other users may read (mode & 0004: "PATH: mode 0644 lets every user read the token; make it
// 0600 or 0640"), one that is not a regular file, larger than 4 KiB, or empty.
Result<std::string> ReadSecretFile(const std::string& path);

}  // namespace neuronmon
