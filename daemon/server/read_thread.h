// ReadThread: the daemon's one thread for work that may block — reading the device (a real host's
// sysfs files, neuron-monitor's pipe, /proc) — so a read that hangs in the kernel never stalls the
// io_context that serves clients and scrapers. One job at a time: while a job runs, Submit refuses
// the next (the caller skips that tick and counts it). The result goes back through `post`, which
// hands a callable to the io_context thread. Submit, busy() and the destructor are called from
// that one thread.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <thread>

namespace neuronmon::daemon {

class ReadThread {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // `done` gets the exception the job threw, or null.
  using Done = std::function<void(std::exception_ptr)>;

  explicit ReadThread(Post post);
  // Joins the thread when it is idle. A thread stuck in a job cannot be interrupted: it is
  // detached (it ends when its job returns, or with the process) and its `done` never runs.
  ~ReadThread();
  ReadThread(const ReadThread&) = delete;
  ReadThread& operator=(const ReadThread&) = delete;

  // Runs `job` on the thread, then posts `done`, then runs `after` (when given) on the thread:
  // work that follows a read without delaying its result. False, and nothing runs, while a job is
  // in flight (from Submit until its `done` has run); a job submitted while `after` runs starts
  // when it returns.
  bool Submit(std::function<void()> job, Done done, std::function<void()> after = nullptr);
  bool busy() const { return busy_; }

 private:
  struct State;
  static void Loop(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  bool busy_ = false;
  std::thread thread_;
};

}  // namespace neuronmon::daemon
