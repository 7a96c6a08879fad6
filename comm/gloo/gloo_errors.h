// Gloo's exceptions (gloo::IoException, EnforceNotMet, ...) as ours: CommError, or
// TimeoutError for Gloo's timeouts, with what we were doing and with whom in front.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace gloo::transport {
class UnboundBuffer;
}  // namespace gloo::transport

namespace zt::comm {

// Call only inside a catch block. Rethrows the exception being handled with `context` in
// front: TimeoutError stays one, Gloo's timeouts become one, other Gloo and std exceptions
// and CommErrors become CommError; other zt::Errors (bugs, out of memory) pass unchanged.
[[noreturn]] void rethrow_as_comm_error(const std::string& context);

// One transfer, for messages: "receiving 1 MiB from rank 3 (step 2)".
struct TransferLabel {
  const char* verb;  // "receiving" or "sending"
  int peer;
  std::size_t bytes;
  int step;
};

// Waits for one completed recv (send) on `buffer`; throws as above, naming the transfer.
void wait_recv(::gloo::transport::UnboundBuffer& buffer, const TransferLabel& label,
               std::chrono::milliseconds timeout);
void wait_send(::gloo::transport::UnboundBuffer& buffer, const TransferLabel& label,
               std::chrono::milliseconds timeout);

}  // namespace zt::comm
