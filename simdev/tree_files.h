// TreeFiles writes the files and symlinks of a tree that another process reads while it changes:
// each file or link is replaced by one rename(2), and only when its content or target changed
// (it remembers what it wrote, by path); a new directory is built under a hidden name and renamed
// into place, so a reader sees it whole or not at all. DriverTreeWriter writes its sysfs and /proc
// trees through it. It owns what it writes and removes only what it is told to. Not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>

#include "proto/common/status.h"

namespace neuronmon::simdev {

class TreeFiles {
 public:
  // Writes `content` to `path`, creating its parent directories, unless it holds that already.
  // Errors name the path.
  Status WriteFile(const std::string& path, const std::string& content);
  // The same, and gives the file `mode` when it writes it (a driver's root-only attributes).
  Status WriteFile(const std::string& path, const std::string& content, unsigned mode);
  // Points the symlink `path` at `target`, creating its parent directories, unless it does.
  Status WriteSymlink(const std::string& path, const std::string& target);
  // Removes the symlink `path` (nothing when it does not exist).
  Status RemoveLink(const std::string& path);
  // Removes the file `path` (nothing when it does not exist).
  Status RemoveFile(const std::string& path);
  // Forgets the symlink at `path`, which the caller removed.
  void ForgetLink(const std::string& path);
  // Removes `path` and everything below it; nothing when it does not exist.
  Status RemoveTree(const std::string& path);
  // Builds `dir`, which is not on disk yet, under a hidden name with `write(staging dir)`, then
  // renames it into place: a reader sees a new device or process whole or not at all.
  Status WriteNewDirectory(const std::string& dir,
                           const std::function<Status(const std::string&)>& write);
  // `path` with the staging directory being built replaced by its final name: what the caches
  // are keyed by.
  std::string Canonical(const std::string& path) const;

  // Files and symlinks created or replaced since the last ResetCount() (unchanged ones are
  // skipped).
  std::size_t written() const { return written_; }
  void ResetCount() { written_ = 0; }

 private:
  using Replace = Status (*)(const std::string& path, const std::string& value);
  // Replaces `path` with `value` unless `on_disk` (files_ or links_) says it holds it already.
  Status Write(std::unordered_map<std::string, std::string>& on_disk, const std::string& path,
               const std::string& value, Replace replace);

  std::size_t written_ = 0;
  std::string staging_from_;  // "<parent>/.<name>.new/" while WriteNewDirectory runs, else ""
  std::string staging_to_;    // "<parent>/<name>/"
  // What is on disk: file path -> content, symlink path -> target.
  std::unordered_map<std::string, std::string> files_;
  std::unordered_map<std::string, std::string> links_;
};

// Creates the directories above `path`.
Status MakeParent(const std::string& path);

}  // namespace neuronmon::simdev
