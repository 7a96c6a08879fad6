// connect_gloo_context: TCP device, rendezvous through GlooStoreAdapter, closing barrier.
#include "comm/gloo/gloo_connect.h"

#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "comm/gloo/gloo_errors.h"
#include "comm/gloo/gloo_store_adapter.h"
#include "comm/gloo/rendezvous_status_store.h"
#include "comm/gloo/sigpipe_block.h"
#include "comm/rendezvous_keys.h"

namespace zt::comm {
namespace {

std::shared_ptr<::gloo::transport::Device> make_tcp_device(const GlooEndpoint& endpoint) {
  ::gloo::transport::tcp::attr attr;
  if (endpoint.interface.empty()) {
    attr.hostname = endpoint.bind_address;
  } else {
    attr.iface = endpoint.interface;
  }
  return ::gloo::transport::tcp::CreateDevice(attr);
}

}  // namespace

std::shared_ptr<::gloo::Context> connect_gloo_context(Store& store, const std::string& key_prefix,
                                                      int rank, int world_size,
                                                      const GlooEndpoint& endpoint,
                                                      std::chrono::milliseconds timeout,
                                                      std::chrono::milliseconds status_interval) {
  const std::string listening_on =
      endpoint.interface.empty() ? endpoint.bind_address : "interface " + endpoint.interface;
  const std::string who = "gloo rendezvous of rank " + std::to_string(rank) + " of " +
                          std::to_string(world_size) + " under store prefix '" + key_prefix +
                          "' (listening on " + listening_on + ")";
  try {
    // Gloo's device loop thread starts here and inherits the block (ScopedSigpipeBlock).
    const ScopedSigpipeBlock sigpipe_block;
    // Before anything else, so that a launcher hosting the store sees who has arrived.
    store.set(joined_key(key_prefix, rank), listening_on);
    RendezvousStatusStore reporting_store(store, key_prefix, rank, status_interval);
    GlooStoreAdapter adapter(reporting_store, key_prefix, timeout);
    auto device = make_tcp_device(endpoint);
    auto context = std::make_shared<::gloo::rendezvous::Context>(rank, world_size);
    context->setTimeout(timeout);
    context->connectFullMesh(adapter.gloo_store(), device);
    // Tag 0 is never an op's: sequence numbers start at 1.
    ::gloo::BarrierOptions barrier(context);
    barrier.setTag(0);
    barrier.setTimeout(timeout);
    ::gloo::barrier(barrier);
    adapter.delete_keys_set();  // every peer has read them: it passed the barrier
    return context;
  } catch (...) {
    rethrow_as_comm_error(who);
  }
}

}  // namespace zt::comm
