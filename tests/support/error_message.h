// Checking what an error says: the message of the exception a call throws, and a containment
// expectation that prints the whole message when it fails.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace zt::testing {

// The message of the E that `f` throws; fails the test when it throws nothing.
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

}  // namespace zt::testing

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)
