// ScopedSigpipeBlock: blocks SIGPIPE in the calling thread while alive, so the threads it
// starts (the comm thread, Gloo's device loop) inherit the block. Gloo writes with writev,
// not send(MSG_NOSIGNAL): without this, a write to a peer that died would kill the whole
// process with SIGPIPE instead of failing the op with EPIPE and a CommError.
#pragma once

#include <csignal>

namespace zt::comm {

class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;
  ~ScopedSigpipeBlock();  // restores the caller's mask

 private:
  sigset_t previous_{};
  bool changed_ = false;
};

}  // namespace zt::comm
