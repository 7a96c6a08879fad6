// What a fuzz target does when a property breaks: print it and abort, which libFuzzer
// reports as a crash and saves the input for a regression test.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace zt::fuzz {

[[noreturn]] inline void fail(const char* what, const char* detail = "") {
  std::fprintf(stderr, "fuzz property broken: %s %s\n", what, detail);
  std::abort();
}

// Runs `f`; an exception of type Expected (the documented way to reject bad input) is
// fine, anything else (an internal error, a bare std::exception) is a finding.
template <typename Expected, typename F>
bool accepts(F&& f) {
  try {
    f();
    return true;
  } catch (const Expected&) {
    return false;
  } catch (const std::exception& e) {
    fail("unexpected exception:", e.what());
  }
}

}  // namespace zt::fuzz
