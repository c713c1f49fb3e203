#include "daemon/server/read_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace neuronmon::daemon {
namespace {

// Stands in for the io_context: posted callables wait here until the test runs them.
class Inbox {
 public:
  ReadThread::Post Poster() {
    return [this](std::function<void()> fn) {
      std::lock_guard lock(mutex_);
      posted_.push_back(std::move(fn));
      changed_.notify_all();
    };
  }
  // Waits for one posted callable and runs it on the calling thread.
  void RunOne() {
    std::function<void()> fn;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !posted_.empty(); });
      fn = std::move(posted_.front());
      posted_.erase(posted_.begin());
    }
    fn();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::function<void()>> posted_;
};

TEST(ReadThread, RunsTheJobOffThisThreadAndPostsTheResult) {
  Inbox inbox;
  ReadThread reader(inbox.Poster());
  std::thread::id job_thread;
  bool done = false;
  ASSERT_TRUE(reader.Submit([&] { job_thread = std::this_thread::get_id(); },
                            [&](std::exception_ptr error) {
                              EXPECT_FALSE(error);
                              done = true;
                            }));
  EXPECT_TRUE(reader.busy());
  inbox.RunOne();
  EXPECT_TRUE(done);
  EXPECT_FALSE(reader.busy());
  EXPECT_NE(job_thread, std::this_thread::get_id());
}

TEST(ReadThread, OneJobAtATimeUntilItsResultIsTaken) {
  Inbox inbox;
  ReadThread reader(inbox.Poster());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  int results = 0;
  ASSERT_TRUE(
      reader.Submit([released] { released.wait(); }, [&](std::exception_ptr) { ++results; }));
  EXPECT_FALSE(reader.Submit([] { FAIL() << "ran while another job was in flight"; },
                             [&](std::exception_ptr) { ++results; }));
  release.set_value();
  inbox.RunOne();
  EXPECT_EQ(results, 1);
  ASSERT_TRUE(reader.Submit([] {}, [&](std::exception_ptr) { ++results; }));
  inbox.RunOne();
  EXPECT_EQ(results, 2);
}

// What follows a read (a real host's process scan step) runs after its result is posted, so it
// delays no one; the next job waits for it.
TEST(ReadThread, WorkAfterAJobRunsOnceItsResultIsPosted) {
  Inbox inbox;
  ReadThread reader(inbox.Poster());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> after_done = false, second_ran = false;
  bool done = false;
  ASSERT_TRUE(reader.Submit([] {}, [&](std::exception_ptr) { done = true; },
                            [released, &after_done] {
                              released.wait();
                              after_done = true;
                            }));
  inbox.RunOne();  // the result arrives while `after` is still blocked
  EXPECT_TRUE(done);
  EXPECT_FALSE(after_done);
  EXPECT_FALSE(reader.busy());
  ASSERT_TRUE(reader.Submit([&] { second_ran = after_done.load(); }, [](std::exception_ptr) {}));
  release.set_value();
  inbox.RunOne();
  EXPECT_TRUE(second_ran);  // it started only once `after` had returned
}

TEST(ReadThread, AJobThatThrowsHandsItsExceptionToDone) {
  Inbox inbox;
  ReadThread reader(inbox.Poster());
  std::string what;
  ASSERT_TRUE(reader.Submit([] { throw std::runtime_error("sysfs gone"); },
                            [&](std::exception_ptr error) {
                              try {
                                std::rethrow_exception(error);
                              } catch (const std::exception& e) {
                                what = e.what();
                              }
                            }));
  inbox.RunOne();
  EXPECT_EQ(what, "sysfs gone");
  EXPECT_FALSE(reader.busy());
}

TEST(ReadThread, DestroyedWhileAJobIsStuckReturnsAndNeverRunsItsDone) {
  Inbox inbox;
  // Shared with the job, which outlives this scope's view of it.
  auto started = std::make_shared<std::promise<void>>();
  auto finished = std::make_shared<std::promise<void>>();
  std::promise<void> release;
  std::future<void> started_future = started->get_future();
  std::future<void> finished_future = finished->get_future();
  bool done = false;
  {
    ReadThread reader(inbox.Poster());
    ASSERT_TRUE(reader.Submit(
        [started, finished, released = release.get_future().share()] {
          started->set_value();
          released.wait();
          finished->set_value();
        },
        [&](std::exception_ptr) { done = true; }));
    started_future.wait();
  }  // does not wait for the job
  release.set_value();
  finished_future.wait();
  EXPECT_FALSE(done);
}

TEST(ReadThread, AResultPostedBeforeDestructionIsDropped) {
  Inbox inbox;
  bool done = false;
  {
    ReadThread reader(inbox.Poster());
    ASSERT_TRUE(reader.Submit([] {}, [&](std::exception_ptr) { done = true; }));
  }
  // The job may have finished and posted before the destructor ran; running it now does nothing.
  // (When it had not, nothing was posted: Submit's job is dropped with the thread.)
  bool marker = false;
  inbox.Poster()([&] { marker = true; });
  while (!marker) inbox.RunOne();
  EXPECT_FALSE(done);
}

}  // namespace
}  // namespace neuronmon::daemon
