// All-to-all by direct sends to every peer (Note [Pairwise exchange]).
#include "comm/gloo/pairwise_exchange.h"

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <cstring>
#include <memory>

#include "comm/gloo/gloo_errors.h"

namespace zt::comm {

std::vector<PeerBytes> pairwise_all_to_all(const RingOp& op, const void* input, void* output,
                                           std::size_t chunk_bytes) {
  using ::gloo::transport::UnboundBuffer;
  const int n = op.world_size;
  auto* out = static_cast<std::byte*>(output);
  const auto* in = static_cast<const std::byte*>(input);
  std::memcpy(out + static_cast<std::size_t>(op.rank) * chunk_bytes,
              in + static_cast<std::size_t>(op.rank) * chunk_bytes, chunk_bytes);
  std::vector<PeerBytes> sent;
  if (chunk_bytes == 0 || n == 1) return sent;
  std::vector<std::unique_ptr<UnboundBuffer>> receives(static_cast<std::size_t>(n));
  for (int shift = 1; shift < n; ++shift) {
    const int from = (op.rank + n - shift) % n;
    auto& buffer = receives[static_cast<std::size_t>(from)];
    buffer = op.context.createUnboundBuffer(out + static_cast<std::size_t>(from) * chunk_bytes,
                                            chunk_bytes);
    try {
      buffer->recv(from, ring_slot(op.sequence_number, 0, from));
    } catch (...) {
      rethrow_as_comm_error("receiving from rank " + std::to_string(from));
    }
  }
  // Gloo's buffers are not const-correct; the input is only ever sent from.
  const auto whole = op.context.createUnboundBuffer(const_cast<std::byte*>(in),
                                                    static_cast<std::size_t>(n) * chunk_bytes);
  for (int shift = 1; shift < n; ++shift) {
    const int to = (op.rank + shift) % n;
    try {
      whole->send(to, ring_slot(op.sequence_number, 0, op.rank),
                  static_cast<std::size_t>(to) * chunk_bytes, chunk_bytes);
    } catch (...) {
      rethrow_as_comm_error("sending to rank " + std::to_string(to));
    }
    sent.push_back({to, chunk_bytes});
  }
  for (int shift = 1; shift < n; ++shift) {
    const int from = (op.rank + n - shift) % n;
    wait_recv(*receives[static_cast<std::size_t>(from)], {"receiving", from, chunk_bytes, 0},
              op.timeout);
  }
  for (int shift = 1; shift < n; ++shift) {
    wait_send(*whole, {"sending", (op.rank + shift) % n, chunk_bytes, 0}, op.timeout);
  }
  return sent;
}

}  // namespace zt::comm
