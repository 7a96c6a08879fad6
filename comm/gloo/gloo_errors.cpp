// Translation of Gloo's exceptions at the points where Gloo calls can fail.
#include "comm/gloo/gloo_errors.h"

#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/transport/unbound_buffer.h>

#include <exception>
#include <string_view>

#include "core/config/byte_size.h"
#include "core/error.h"

namespace zt::comm {
namespace {

// Gloo reports its own timeouts as IoException("... Timed out waiting Nms ...") and, on the
// other pairs of the context, "Application timeout caused pair closure".
bool is_gloo_timeout(std::string_view message) {
  return message.find("Timed out") != std::string_view::npos ||
         message.find("timeout") != std::string_view::npos;
}

std::string describe(const TransferLabel& label) {
  return std::string(label.verb) + " " + format_byte_size(static_cast<std::int64_t>(label.bytes)) +
         (std::string_view(label.verb) == "receiving" ? " from rank " : " to rank ") +
         std::to_string(label.peer) + " (step " + std::to_string(label.step) + ")";
}

}  // namespace

void rethrow_as_comm_error(const std::string& context) {
  try {
    throw;
  } catch (const TimeoutError& e) {
    throw TimeoutError(context + ": " + e.what());
  } catch (const CommError& e) {
    throw CommError(context + ": " + e.what());
  } catch (const Error&) {
    throw;  // not a communication failure (a bug, out of memory): keep its type
  } catch (const ::gloo::IoException& e) {
    const std::string message = context + ": " + e.what();
    if (is_gloo_timeout(e.what())) throw TimeoutError(message);
    throw CommError(message);
  } catch (const std::exception& e) {
    throw CommError(context + ": " + e.what());
  } catch (...) {
    throw CommError(context + ": unknown exception");
  }
}

void wait_recv(::gloo::transport::UnboundBuffer& buffer, const TransferLabel& label,
               std::chrono::milliseconds timeout) {
  bool completed = false;
  try {
    completed = buffer.waitRecv(timeout);
  } catch (...) {
    rethrow_as_comm_error(describe(label));
  }
  if (!completed) throw CommError(describe(label) + ": the receive was aborted");
}

void wait_send(::gloo::transport::UnboundBuffer& buffer, const TransferLabel& label,
               std::chrono::milliseconds timeout) {
  bool completed = false;
  try {
    completed = buffer.waitSend(timeout);
  } catch (...) {
    rethrow_as_comm_error(describe(label));
  }
  if (!completed) throw CommError(describe(label) + ": the send was aborted");
}

}  // namespace zt::comm
