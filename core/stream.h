// Stream: an ordered queue of work. On the CPU it is a worker thread; Events order work
// across streams, so compute, communication and copies overlap the same way on CPU and GPU.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace zt {

// Completes once; copies share the same completion. Thread-safe.
class Event {
 public:
  Event();
  bool is_complete() const;
  void wait() const;
  // Returns whether it completed within `timeout`.
  bool wait_for(std::chrono::milliseconds timeout) const;
  void complete() const;  // called by the stream that recorded it

 private:
  struct State {
    mutable std::mutex mutex;
    mutable std::condition_variable done_cv;
    bool done = false;  // guarded by mutex
  };
  std::shared_ptr<State> state_;
};

class CpuStream {
 public:
  explicit CpuStream(std::string name);
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;
  ~CpuStream();  // runs what is queued, then joins the worker

  // Runs `task` after everything enqueued before it. A task that throws does not stop the
  // stream; the first exception is rethrown by synchronize().
  void enqueue(std::function<void()> task);
  // An event that completes when all work enqueued so far has run.
  Event record();
  // Work enqueued after this waits until `event` completes.
  void wait_event(const Event& event);
  // Waits for all enqueued work; rethrows the first exception a task threw (once).
  void synchronize();

  const std::string& name() const { return name_; }

 private:
  void run();

  const std::string name_;
  std::mutex mutex_;  // guards queue_, stopping_, running_, first_error_
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  bool running_ = false;  // a task is executing now
  std::exception_ptr first_error_;
  std::thread worker_;  // last member: starts after the others exist
};

}  // namespace zt
