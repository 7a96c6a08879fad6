// AsyncFileIo over io_uring (liburing): one submission per transfer, completions reaped
// by wait(); a short transfer is resubmitted for the rest.
#include <liburing.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "core/error.h"
#include "offload/async_file_io_internal.h"

namespace zt::offload::detail {
namespace {

// Deep enough for the pipeline's one read and one write in flight, with room to spare.
constexpr unsigned kQueueDepth = 16;

class UringFileIo final : public AsyncFileIo {
 public:
  UringFileIo(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  UringFileIo(const UringFileIo&) = delete;
  UringFileIo& operator=(const UringFileIo&) = delete;
  ~UringFileIo() override {
    if (!ready_) return;
    // The kernel may still write into the buffers: drain before they can be freed.
    while (!pending_.empty()) {
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(&ring_, &cqe) != 0) break;
      pending_.erase(cqe->user_data);
      io_uring_cqe_seen(&ring_, cqe);
    }
    io_uring_queue_exit(&ring_);
  }

  // Sets the ring up and runs one no-op through it: some sandboxes allow the setup and
  // refuse io_uring_enter. Returns what failed, or an empty string.
  std::string start_ring() {
    int result = io_uring_queue_init(kQueueDepth, &ring_, 0);
    if (result != 0) return std::string("io_uring_queue_init: ") + std::strerror(-result);
    ready_ = true;
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    io_uring_prep_nop(sqe);
    io_uring_sqe_set_data64(sqe, 0);
    result = io_uring_submit(&ring_);
    if (result < 0) return std::string("io_uring_submit: ") + std::strerror(-result);
    io_uring_cqe* cqe = nullptr;
    result = io_uring_wait_cqe(&ring_, &cqe);
    if (result != 0) return std::string("io_uring_wait_cqe: ") + std::strerror(-result);
    result = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (result < 0) return std::string("io_uring no-op: ") + std::strerror(-result);
    return "";
  }

  std::string name() const override { return "io_uring"; }

  std::uint64_t start_read(void* buffer, std::size_t bytes, std::int64_t offset) override {
    return start({static_cast<char*>(buffer), bytes, offset, false});
  }
  std::uint64_t start_write(const void* buffer, std::size_t bytes, std::int64_t offset) override {
    return start({static_cast<char*>(const_cast<void*>(buffer)), bytes, offset, true});
  }

  void wait(std::uint64_t ticket) override {
    while (pending_.count(ticket) != 0) reap_one();
    rethrow_failure(failures_, ticket);
  }

 private:
  struct Transfer {
    char* buffer;
    std::size_t bytes;
    std::int64_t offset;
    bool write;
  };

  std::uint64_t start(const Transfer& transfer) {
    const std::uint64_t ticket = next_ticket_++;
    pending_.emplace(ticket, transfer);
    submit(ticket, transfer);
    return ticket;
  }

  void submit(std::uint64_t ticket, const Transfer& t) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    ZT_CHECK(sqe != nullptr, "io_uring submission queue full");
    if (t.write) {
      io_uring_prep_write(sqe, fd_, t.buffer, static_cast<unsigned>(t.bytes),
                          static_cast<__u64>(t.offset));
    } else {
      io_uring_prep_read(sqe, fd_, t.buffer, static_cast<unsigned>(t.bytes),
                         static_cast<__u64>(t.offset));
    }
    io_uring_sqe_set_data64(sqe, ticket);
    const int submitted = io_uring_submit(&ring_);
    if (submitted < 0) {
      throw IoError(transfer_error(path_, t.write, t.bytes, t.offset, -submitted) +
                    " (io_uring_submit)");
    }
  }

  // Takes one completion: finishes its transfer, or resubmits what a short one left.
  void reap_one() {
    io_uring_cqe* cqe = nullptr;
    int result = io_uring_wait_cqe(&ring_, &cqe);
    while (result == -EINTR) result = io_uring_wait_cqe(&ring_, &cqe);
    if (result != 0)
      throw IoError("NVMe optimizer states: io_uring_wait_cqe on \"" + path_ +
                    "\" failed: " + std::strerror(-result));
    const std::uint64_t ticket = cqe->user_data;
    const int done = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    auto it = pending_.find(ticket);
    ZT_CHECK(it != pending_.end(), "io_uring completion of an unknown transfer");
    Transfer& t = it->second;
    if (done > 0 && static_cast<std::size_t>(done) < t.bytes) {
      t.buffer += done;
      t.bytes -= static_cast<std::size_t>(done);
      t.offset += done;
      submit(ticket, t);
      return;
    }
    if (done < 0 || (done == 0 && t.bytes > 0)) {
      failures_.emplace(ticket, transfer_error(path_, t.write, t.bytes, t.offset, -done));
    }
    pending_.erase(it);
  }

  const int fd_;
  const std::string path_;
  io_uring ring_{};
  bool ready_ = false;  // the ring is set up (and must be torn down)
  std::uint64_t next_ticket_ = 1;
  std::unordered_map<std::uint64_t, Transfer> pending_;      // submitted, not yet complete
  std::unordered_map<std::uint64_t, std::string> failures_;  // complete with an error
};

}  // namespace

std::unique_ptr<AsyncFileIo> make_uring_file_io(int fd, const std::string& path, std::string& why) {
  auto io = std::make_unique<UringFileIo>(fd, path);
  why = io->start_ring();
  if (!why.empty()) return nullptr;
  return io;
}

}  // namespace zt::offload::detail
