// RecorderThread: the daemon's archive writer (daemon/core Recorder) on a thread of its own, so a
// disk that is slow, full or hung never stalls the io_context that samples and serves. Submit
// queues a snapshot without waiting; when `max_queued` are waiting (the disk is that far behind)
// the oldest is dropped and counted. What goes wrong is posted back to the owner's thread once
// per episode (`report`). The destructor writes what is queued and closes the file, waiting at
// most `close_timeout` for a stuck disk before leaving the thread behind. Submit, stats() and the
// destructor are called from the owner's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/core/archive/recorder.h"

namespace neuronmon::daemon {

struct RecorderThreadStats {
  RecorderStats recorder;
  std::uint64_t dropped = 0;  // snapshots dropped because the writer was behind
};

class RecorderThread {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // `report(ok, text)`: recording stopped (ok false: the error) or resumed (ok true).
  using Report = std::function<void(bool ok, const std::string& text)>;

  RecorderThread(RecorderOptions options, v1::ArchiveHeader header, Post post, Report report,
                 std::size_t max_queued = 120, Nanos close_timeout = std::chrono::seconds(2));
  ~RecorderThread();
  RecorderThread(const RecorderThread&) = delete;
  RecorderThread& operator=(const RecorderThread&) = delete;

  // Queues `snapshot`, written after `events` (those seen at it, and the daemon's own since the
  // snapshot before).
  void Submit(Snapshot snapshot, const v1::Inventory& inventory, const std::string& description,
              std::vector<v1::Event> events = {});
  RecorderThreadStats stats() const;
  const std::string& directory() const { return directory_; }

 private:
  struct State;
  static void Loop(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::string directory_;
  Nanos close_timeout_;
  std::thread thread_;
};

}  // namespace neuronmon::daemon
