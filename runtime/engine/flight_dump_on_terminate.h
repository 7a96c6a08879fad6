// FlightDumpOnTerminate: while it lives, std::terminate writes the rank's flight record before
// the process aborts (Note [A record from a terminating rank]).
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>

namespace zt::engine {

// Note [A record from a terminating rank]
// Gloo's TCP transport checks a peer's message against the op it was posted for on its own
// loop thread, and a message longer than the op expects (the ranks disagree on the op's size:
// a bucket sized differently, an op one rank left out) throws there, where nothing catches
// it: std::terminate, SIGABRT, and the rank that saw the disagreement first left no record.
// So the session has std::terminate write the record first, with the exception's message as
// the reason, and then go on as it would have (the handler found at install: the runtime's
// prints "terminate called after throwing ..." and aborts). The record is written on the
// terminating thread, which may be any of the rank's; the writer takes only its own lock and
// the recorder's, neither held across anything that waits.
class FlightDumpOnTerminate {
 public:
  // Installs the handler; `dump(reason)` must not throw. Only one may live at a time in a
  // process: null when one already does (ranks as threads of one test process).
  static std::unique_ptr<FlightDumpOnTerminate> install(
      std::function<void(const std::string& reason)> dump);
  explicit FlightDumpOnTerminate(std::function<void(const std::string& reason)> dump);
  ~FlightDumpOnTerminate();  // puts back the handler found at install
  FlightDumpOnTerminate(const FlightDumpOnTerminate&) = delete;
  FlightDumpOnTerminate& operator=(const FlightDumpOnTerminate&) = delete;

  // "terminated by an exception nothing caught: <its what()>", or a plain "terminated".
  static std::string reason_of(std::exception_ptr error);

 private:
  [[noreturn]] static void on_terminate();

  std::function<void(const std::string&)> dump_;
  std::terminate_handler previous_ = nullptr;
};

}  // namespace zt::engine
