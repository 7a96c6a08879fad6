// AsyncFileIo: reads and writes of whole aligned blocks of one file that run while the
// caller computes, by io_uring where the kernel allows it, else by a worker thread doing
// pread/pwrite. Used from one thread (the optimizer's update): not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace zt::offload {

// Which I/O path to use: io_uring with a fallback to the thread, or the thread only.
enum class FileIoPath : std::uint8_t { kBest, kWorkerThread };

class AsyncFileIo {
 public:
  virtual ~AsyncFileIo() = default;  // waits for every request still running

  // "io_uring" or "worker thread (pread/pwrite)", for the run log.
  virtual std::string name() const = 0;
  // Starts a transfer of `bytes` at `offset` (both multiples of 4 KiB, the buffer 4 KiB
  // aligned and alive until wait()) and returns its ticket.
  virtual std::uint64_t start_read(void* buffer, std::size_t bytes, std::int64_t offset) = 0;
  virtual std::uint64_t start_write(const void* buffer, std::size_t bytes, std::int64_t offset) = 0;
  // Returns when the ticket's transfer is complete; throws IoError naming the file, the
  // offset and the error when it failed.
  virtual void wait(std::uint64_t ticket) = 0;
};

// I/O on `fd` (`path` names it in errors). kBest tries io_uring first; where the kernel
// refuses it (EPERM, ENOSYS in some containers) it uses the worker thread.
std::unique_ptr<AsyncFileIo> make_async_file_io(int fd, const std::string& path, FileIoPath io);

}  // namespace zt::offload
