// Staging of device tensors through pinned host memory: layout of the two regions (the
// op's input, then its output when it has a separate one) and the copies on the device's
// compute stream, which also orders them after the work that produced the inputs.
#include "comm/gloo/device_staging.h"

#include <cstddef>

namespace zt::comm {
namespace {

std::size_t aligned(std::size_t bytes) {
  return (bytes + MemoryTracker::kAlignment - 1) / MemoryTracker::kAlignment *
         MemoryTracker::kAlignment;
}

Tensor host_tensor_at(std::byte* at, const Tensor& like) {
  return Tensor::wrap(at, Shape{like.numel()}, like.dtype(), Device::cpu());
}

// The tensor an op writes its result into: the input for in-place ops.
const Tensor& result_of(const CollectiveRequest& request) {
  return request.output.defined() ? request.output : request.input;
}

}  // namespace

DeviceStaging::DeviceStaging(DeviceContext& device)
    : device_(device), tracker_(device.host_staging_allocator()), buffer_(tracker_) {}

CollectiveRequest DeviceStaging::stage_in(const CollectiveRequest& request) {
  CollectiveRequest host = request;
  if (request.kind == CollectiveKind::kBarrier) return host;
  const std::size_t input_bytes = aligned(request.input.nbytes());
  const std::size_t output_bytes = request.output.defined() ? request.output.nbytes() : 0;
  std::byte* base = buffer_.reserve(input_bytes + output_bytes);
  host.input = host_tensor_at(base, request.input);
  if (request.output.defined()) host.output = host_tensor_at(base + input_bytes, request.output);
  if (request.input.numel() > 0) {
    device_.ops().copy(request.input, host.input);
    wait_for_copies();
  }
  return host;
}

void DeviceStaging::stage_out(const CollectiveRequest& request, const CollectiveRequest& host) {
  if (request.kind == CollectiveKind::kBarrier) return;
  const Tensor& result = result_of(request);
  if (result.numel() == 0) return;
  device_.ops().copy(result_of(host), result);
  wait_for_copies();
}

// Copies are enqueued on the compute stream and run asynchronously to and from pinned
// memory; the host buffer may be read, or reused, only once they have run.
void DeviceStaging::wait_for_copies() { device_.compute_stream().record().synchronize(); }

}  // namespace zt::comm
