// CpuStream's worker loop and Event completion.
#include "core/stream.h"

#include <utility>

namespace zt {

Event::Event() : state_(std::make_shared<State>()) {}

bool Event::is_complete() const {
  std::lock_guard lock(state_->mutex);
  return state_->done;
}

void Event::wait() const {
  std::unique_lock lock(state_->mutex);
  state_->done_cv.wait(lock, [&] { return state_->done; });
}

bool Event::wait_for(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(state_->mutex);
  return state_->done_cv.wait_for(lock, timeout, [&] { return state_->done; });
}

void Event::complete() const {
  {
    std::lock_guard lock(state_->mutex);
    state_->done = true;
  }
  state_->done_cv.notify_all();
}

CpuStream::CpuStream(std::string name) : name_(std::move(name)), worker_([this] { run(); }) {}

CpuStream::~CpuStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  worker_.join();
}

void CpuStream::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  work_cv_.notify_one();
}

Event CpuStream::record() {
  Event event;
  enqueue([event] { event.complete(); });
  return event;
}

void CpuStream::wait_event(const Event& event) {
  enqueue([event] { event.wait(); });
}

void CpuStream::synchronize() {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !running_; });
  if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}

void CpuStream::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    try {
      task();
    } catch (...) {
      lock.lock();
      if (!first_error_) first_error_ = std::current_exception();
      lock.unlock();
    }
    // What the task captured (tensors a copy kept alive) is released before anyone waiting
    // on synchronize() sees the stream idle.
    task = nullptr;
    lock.lock();
    running_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace zt
