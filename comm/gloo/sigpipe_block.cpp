// ScopedSigpipeBlock: pthread_sigmask around thread creation.
#include "comm/gloo/sigpipe_block.h"

#include <pthread.h>

namespace zt::comm {

ScopedSigpipeBlock::ScopedSigpipeBlock() {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  changed_ = pthread_sigmask(SIG_BLOCK, &block, &previous_) == 0;
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  if (changed_) pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace zt::comm
