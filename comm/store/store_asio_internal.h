// Private to comm/store: the one way the store's .cpp files include Boost.Asio, with the
// workarounds this toolchain needs. No header outside comm/store/*.cpp includes Asio.
#pragma once

// GCC 12 + C++20: Asio 1.74's awaitable.hpp uses std::exchange without including
// <utility>, so it must come first.
#include <utility>

// Under TSan, GCC 12 rejects std::atomic_thread_fence (-Wtsan, an error with -Werror), and
// TSan would not understand the fence anyway. Asio's fenced blocks only order handler memory
// between threads, which the scheduler's mutex already does (and which TSan does see).
#if defined(__SANITIZE_THREAD__)
#define BOOST_ASIO_DISABLE_FENCED_BLOCK 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BOOST_ASIO_DISABLE_FENCED_BLOCK 1
#endif
#endif

#include <boost/asio.hpp>
