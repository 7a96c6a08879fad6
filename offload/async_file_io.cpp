// Choosing the asynchronous file I/O path.
#include "offload/async_file_io.h"

#include <cstring>

#include "core/error.h"
#include "offload/async_file_io_internal.h"

namespace zt::offload {

namespace detail {

void rethrow_failure(std::unordered_map<std::uint64_t, std::string>& failures,
                     std::uint64_t ticket) {
  const auto failed = failures.find(ticket);
  if (failed == failures.end()) return;
  const std::string message = std::move(failed->second);
  failures.erase(failed);
  throw IoError(message);
}

std::string transfer_error(const std::string& path, bool write, std::size_t bytes,
                           std::int64_t offset, int error) {
  return std::string("NVMe optimizer states: ") + (write ? "writing " : "reading ") +
         std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " of \"" + path +
         "\" failed: " + (error == 0 ? "the file ended early" : std::strerror(error));
}

}  // namespace detail

std::unique_ptr<AsyncFileIo> make_async_file_io(int fd, const std::string& path, FileIoPath io) {
  if (io == FileIoPath::kWorkerThread) return detail::make_thread_file_io(fd, path, "");
  std::string why;
  if (auto uring = detail::make_uring_file_io(fd, path, why)) return uring;
  return detail::make_thread_file_io(fd, path, "io_uring unavailable: " + why);
}

}  // namespace zt::offload
