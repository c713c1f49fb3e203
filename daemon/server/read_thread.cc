#include "daemon/server/read_thread.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

namespace neuronmon::daemon {

// Shared by the owner and the thread, so a detached thread never touches a destroyed owner.
struct ReadThread::State {
  std::mutex mutex;
  std::condition_variable wake;
  std::function<void()> job;  // the job waiting to run; empty when none
  Done done;
  std::function<void()> after;
  bool closed = false;   // the owner is gone: run nothing more, post nothing
  bool running = false;  // a job is running on the thread
  Post post;
  bool* busy = nullptr;  // the owner's flag, touched only on the owner's thread while open
};

ReadThread::ReadThread(Post post) : state_(std::make_shared<State>()) {
  state_->post = std::move(post);
  state_->busy = &busy_;
  thread_ = std::thread([state = state_] { Loop(state); });
}

ReadThread::~ReadThread() {
  bool stuck = false;
  {
    std::lock_guard lock(state_->mutex);
    state_->closed = true;
    state_->busy = nullptr;
    state_->job = nullptr;
    stuck = state_->running;
    state_->wake.notify_one();
  }
  // A stuck thread owns its share of the state, so nothing it touches goes away under it; it ends
  // when its job returns, or with the process.
  if (stuck) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

bool ReadThread::Submit(std::function<void()> job, Done done, std::function<void()> after) {
  if (busy_) return false;
  std::lock_guard lock(state_->mutex);
  state_->job = std::move(job);
  state_->done = std::move(done);
  state_->after = std::move(after);
  busy_ = true;
  state_->wake.notify_one();
  return true;
}

void ReadThread::Loop(const std::shared_ptr<State>& state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    state->wake.wait(lock, [&] { return state->closed || state->job; });
    if (state->closed) return;
    std::function<void()> job = std::exchange(state->job, nullptr);
    Done done = std::exchange(state->done, nullptr);
    std::function<void()> after = std::exchange(state->after, nullptr);
    state->running = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (state->closed) return;
    state->post([state, done = std::move(done), error] {
      {
        std::lock_guard guard(state->mutex);
        if (state->closed) return;
        *state->busy = false;
      }
      done(error);
    });
    if (after) {
      lock.unlock();
      try {
        after();
      } catch (...) {  // what follows a read has no one to tell; the next read will
      }
      lock.lock();
    }
    state->running = false;
    if (state->closed) return;
  }
}

}  // namespace neuronmon::daemon
