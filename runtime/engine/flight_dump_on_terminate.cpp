// The flight record written as std::terminate ends the rank.
#include "runtime/engine/flight_dump_on_terminate.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <utility>

namespace zt::engine {
namespace {

std::mutex installed_mutex;                              // guards installed's replacement
std::atomic<FlightDumpOnTerminate*> installed{nullptr};  // the live one, if any
std::atomic<bool> terminating{false};                    // the record is written once

}  // namespace

std::unique_ptr<FlightDumpOnTerminate> FlightDumpOnTerminate::install(
    std::function<void(const std::string& reason)> dump) {
  const std::lock_guard lock(installed_mutex);
  if (installed.load() != nullptr) return nullptr;
  auto handler = std::make_unique<FlightDumpOnTerminate>(std::move(dump));
  installed.store(handler.get());
  handler->previous_ = std::set_terminate(&FlightDumpOnTerminate::on_terminate);
  return handler;
}

FlightDumpOnTerminate::FlightDumpOnTerminate(std::function<void(const std::string& reason)> dump)
    : dump_(std::move(dump)) {}

FlightDumpOnTerminate::~FlightDumpOnTerminate() {
  const std::lock_guard lock(installed_mutex);
  if (installed.load() != this) return;
  std::set_terminate(previous_);
  installed.store(nullptr);
}

std::string FlightDumpOnTerminate::reason_of(std::exception_ptr error) {
  if (error == nullptr) return "terminated";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::string reason = std::string("terminated by an exception nothing caught: ") + e.what();
    // Gloo's words for a message longer than the receive it arrived for.
    if (reason.find("op.preamble.length <= op.nbytes") != std::string::npos) {
      reason +=
          " (a peer sent more bytes than this rank's op expects: the ranks disagree on "
          "this op's size, or on which op comes next)";
    }
    return reason;
  } catch (...) {
    return "terminated by an exception nothing caught (not a std::exception)";
  }
}

void FlightDumpOnTerminate::on_terminate() {
  FlightDumpOnTerminate* self = installed.load();
  std::terminate_handler next = self != nullptr ? self->previous_ : nullptr;
  // A second thread terminating meanwhile skips the record and goes on to abort.
  if (self != nullptr && !terminating.exchange(true)) {
    self->dump_(reason_of(std::current_exception()));
  }
  if (next != nullptr) next();  // the runtime's: says what was thrown, and aborts
  std::abort();
}

}  // namespace zt::engine
