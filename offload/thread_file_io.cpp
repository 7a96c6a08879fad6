// AsyncFileIo by a worker thread doing pread/pwrite in submission order: the path where
// io_uring is refused. The file is still O_DIRECT, and reads still run ahead of compute.
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "offload/async_file_io_internal.h"

namespace zt::offload::detail {
namespace {

class ThreadFileIo final : public AsyncFileIo {
 public:
  ThreadFileIo(int fd, std::string path, std::string note)
      : fd_(fd), path_(std::move(path)), note_(std::move(note)), worker_([this] { work(); }) {}
  ThreadFileIo(const ThreadFileIo&) = delete;
  ThreadFileIo& operator=(const ThreadFileIo&) = delete;
  ~ThreadFileIo() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;  // the worker finishes what is queued first
    }
    queued_cv_.notify_one();
    worker_.join();
  }

  std::string name() const override {
    return "worker thread (pread/pwrite)" + (note_.empty() ? "" : "; " + note_);
  }

  std::uint64_t start_read(void* buffer, std::size_t bytes, std::int64_t offset) override {
    return start(static_cast<char*>(buffer), bytes, offset, false);
  }
  std::uint64_t start_write(const void* buffer, std::size_t bytes, std::int64_t offset) override {
    return start(static_cast<char*>(const_cast<void*>(buffer)), bytes, offset, true);
  }

  void wait(std::uint64_t ticket) override {
    std::unique_lock lock(mutex_);
    // Bounded by the transfer itself: the worker completes every queued ticket in order.
    done_cv_.wait(lock, [&] { return completed_through_ >= ticket; });
    rethrow_failure(failures_, ticket);
  }

 private:
  struct Transfer {
    std::uint64_t ticket;
    char* buffer;
    std::size_t bytes;
    std::int64_t offset;
    bool write;
  };

  std::uint64_t start(char* buffer, std::size_t bytes, std::int64_t offset, bool write) {
    std::uint64_t ticket = 0;
    {
      std::lock_guard lock(mutex_);
      ticket = next_ticket_++;
      queue_.push_back({ticket, buffer, bytes, offset, write});
    }
    queued_cv_.notify_one();
    return ticket;
  }

  // 0 when the whole transfer is done, else the errno that stopped it, or -1 when the
  // file ended first (it is preallocated, so only a read past its size does that).
  int transfer(Transfer t) const {
    while (t.bytes > 0) {
      const ssize_t done = t.write ? pwrite(fd_, t.buffer, t.bytes, t.offset)
                                   : pread(fd_, t.buffer, t.bytes, t.offset);
      if (done < 0 && errno == EINTR) continue;
      if (done < 0) return errno;
      if (done == 0) return -1;
      t.buffer += done;
      t.bytes -= static_cast<std::size_t>(done);
      t.offset += done;
    }
    return 0;
  }

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      queued_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      const Transfer t = queue_.front();
      queue_.pop_front();
      lock.unlock();
      const int error = transfer(t);
      lock.lock();
      if (error != 0) {
        failures_.emplace(t.ticket,
                          transfer_error(path_, t.write, t.bytes, t.offset, error < 0 ? 0 : error));
      }
      completed_through_ = t.ticket;
      done_cv_.notify_all();
    }
  }

  const int fd_;
  const std::string path_;
  const std::string note_;
  std::mutex mutex_;  // guards everything below but the worker
  std::condition_variable queued_cv_;
  std::condition_variable done_cv_;
  std::deque<Transfer> queue_;
  std::unordered_map<std::uint64_t, std::string> failures_;
  std::uint64_t next_ticket_ = 1;
  std::uint64_t completed_through_ = 0;  // tickets complete in order
  bool stopping_ = false;
  std::thread worker_;  // last: starts once the state above exists
};

}  // namespace

std::unique_ptr<AsyncFileIo> make_thread_file_io(int fd, const std::string& path,
                                                 const std::string& note) {
  return std::make_unique<ThreadFileIo>(fd, path, note);
}

}  // namespace zt::offload::detail
