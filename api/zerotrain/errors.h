// The exceptions zerotrain throws. Every one derives from zerotrain::Error (a
// std::runtime_error) and names what is wrong: the file and key, the peer, the shapes.
#pragma once

#include "core/error.h"

namespace zerotrain {

using zt::CommError;         // a peer, the store or a collective failed (names op and peer)
using zt::ConfigError;       // a config key is unknown, mistyped or out of range
using zt::Error;             // the base of all of them
using zt::FormatError;       // a file's content is not what it claims to be
using zt::InternalError;     // a broken invariant inside zerotrain: please report it
using zt::IoError;           // a file or directory could not be read or written
using zt::OutOfMemoryError;  // lists what was live, per category, and what to try
using zt::TimeoutError;      // a collective or the rendezvous ran past runtime.comm_timeout_s
using zt::UsageError;        // a command-line mistake

}  // namespace zerotrain
