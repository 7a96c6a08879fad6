// The two AsyncFileIo paths, for the factory and its tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "offload/async_file_io.h"

namespace zt::offload::detail {

// An io_uring over `fd`, or null when the kernel refuses one (`why` then says why).
std::unique_ptr<AsyncFileIo> make_uring_file_io(int fd, const std::string& path, std::string& why);
// `note` (why io_uring is not used, or empty) goes into its name().
std::unique_ptr<AsyncFileIo> make_thread_file_io(int fd, const std::string& path,
                                                 const std::string& note);

// Throws IoError with the message of `ticket`'s failed transfer, if `failures` holds one
// (and forgets it).
void rethrow_failure(std::unordered_map<std::uint64_t, std::string>& failures,
                     std::uint64_t ticket);

// The message of a failed transfer.
std::string transfer_error(const std::string& path, bool write, std::size_t bytes,
                           std::int64_t offset, int error);

}  // namespace zt::offload::detail
