#include "daemon/server/recorder_thread.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "proto/common/duration.h"

namespace neuronmon::daemon {

struct RecorderThread::State {
  struct Item {
    Snapshot snapshot;
    std::shared_ptr<const v1::Inventory> inventory;
    std::string description;
    std::vector<v1::Event> events;
  };
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable finished_cv;
  std::deque<Item> queue;
  std::size_t max_queued = 0;
  bool closing = false;
  bool finished = false;
  bool abandoned = false;  // the owner left: post nothing more
  bool failing = false;    // reported stopped, not yet resumed
  Recorder recorder;
  RecorderThreadStats stats;
  Post post;
  Report report;
  // The owner's newest inventory, shared by queued items while it does not change.
  std::shared_ptr<const v1::Inventory> inventory;
  State(RecorderOptions o, v1::ArchiveHeader h) : recorder(std::move(o), std::move(h)) {}
};

RecorderThread::RecorderThread(RecorderOptions options, v1::ArchiveHeader header, Post post,
                               Report report, std::size_t max_queued, Nanos close_timeout)
    : directory_(options.directory), close_timeout_(close_timeout) {
  state_ = std::make_shared<State>(std::move(options), std::move(header));
  state_->max_queued = std::max<std::size_t>(1, max_queued);
  state_->post = std::move(post);
  state_->report = std::move(report);
  thread_ = std::thread([state = state_] { Loop(state); });
}

RecorderThread::~RecorderThread() {
  std::unique_lock lock(state_->mutex);
  state_->closing = true;
  state_->wake.notify_one();
  const bool done =
      state_->finished_cv.wait_for(lock, close_timeout_, [&] { return state_->finished; });
  state_->abandoned = true;
  lock.unlock();
  // A thread stuck in a write owns its share of the state; it ends with its write or the process.
  if (done) {
    thread_.join();
  } else {
    thread_.detach();
  }
}

void RecorderThread::Submit(Snapshot snapshot, const v1::Inventory& inventory,
                            const std::string& description, std::vector<v1::Event> events) {
  std::lock_guard lock(state_->mutex);
  if (state_->inventory == nullptr ||
      state_->inventory->SerializeAsString() != inventory.SerializeAsString()) {
    state_->inventory = std::make_shared<const v1::Inventory>(inventory);
  }
  if (state_->queue.size() >= state_->max_queued) {
    state_->queue.pop_front();
    ++state_->stats.dropped;
  }
  state_->queue.push_back({std::move(snapshot), state_->inventory, description, std::move(events)});
  state_->wake.notify_one();
}

RecorderThreadStats RecorderThread::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void RecorderThread::Loop(const std::shared_ptr<State>& state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    state->wake.wait(lock, [&] { return state->closing || !state->queue.empty(); });
    while (!state->queue.empty()) {
      State::Item item = std::move(state->queue.front());
      state->queue.pop_front();
      lock.unlock();
      Status st =
          state->recorder.Append(item.snapshot, *item.inventory, item.description, item.events);
      lock.lock();
      state->stats.recorder = state->recorder.stats();
      std::string text;
      bool ok = true;
      if (!st.ok()) {
        ok = false;
        state->failing = true;
        text = "recording stopped: " + st.message() + "; retrying every " +
               FormatDuration(state->recorder.options().retry);
      } else if (state->failing && state->stats.recorder.active) {
        state->failing = false;
        text = "recording resumed in " + state->recorder.options().directory;
      }
      if (!text.empty() && !state->abandoned) {
        state->post([state, ok, text] {
          if (!state->abandoned) state->report(ok, text);
        });
      }
    }
    if (state->closing) {
      lock.unlock();
      state->recorder.Close();
      lock.lock();
      state->stats.recorder = state->recorder.stats();
      state->finished = true;
      state->finished_cv.notify_all();
      return;
    }
  }
}

}  // namespace neuronmon::daemon
