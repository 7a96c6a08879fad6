// The exception hierarchy: user and environment failures (zt::Error subclasses, with the
// exit code main() uses) and broken invariants (InternalError, thrown by ZT_CHECK).
#pragma once

#include <stdexcept>
#include <string>

namespace zt {

// Process exit codes, as documented in README: 2 for usage/config, 1 for run-time failures.
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRuntime = 1;

// Base of every error a user can cause or meet. The message names the thing that is wrong
// (file:line:column, config key, peer rank, op and size) and what to do about it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const noexcept { return kExitRuntime; }
};

// Bad command line.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const noexcept override { return kExitUsage; }
};

// Bad configuration: unknown key, wrong type, out of range, inconsistent values.
class ConfigError : public Error {
 public:
  using Error::Error;
  int exit_code() const noexcept override { return kExitUsage; }
};

// An allocation past a device's capacity; the message lists live bytes per category.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// A collective or store operation failed: peer gone, protocol violation, refused token.
class CommError : public Error {
 public:
  using Error::Error;
};

// A wait ran past its bound; the message says what was awaited from whom.
class TimeoutError : public CommError {
 public:
  using CommError::CommError;
};

// A file could not be read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// A data file, token file or checkpoint whose contents are not what they claim to be.
class FormatError : public Error {
 public:
  using Error::Error;
};

// A broken invariant inside zerotrain: a bug. The only errors that carry our file:line.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_internal_error(const char* file, int line, const char* condition,
                                       const std::string& message);
}  // namespace detail

}  // namespace zt

// ZT_CHECK(cond, message): throws zt::InternalError naming our file:line when cond is false.
#define ZT_CHECK(cond, message)                                                 \
  do {                                                                          \
    if (!(cond)) [[unlikely]] {                                                 \
      ::zt::detail::throw_internal_error(__FILE__, __LINE__, #cond, (message)); \
    }                                                                           \
  } while (false)
