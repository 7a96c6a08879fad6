// Meta allocator, ops and context: allocations counted, nothing stored or computed.
#include "core/device/meta_device.h"

#include "core/device/cpu_streams.h"

namespace zt {
namespace {

// Above the 47-bit user half and below the kernel half: never a valid address on x86-64.
constexpr std::uint64_t kMetaBase = 0x4d45'0000'0000'0000ULL;
constexpr std::uint64_t kMetaAlignment = 256;

class MetaDeviceOps final : public DeviceOps {
 public:
  std::int64_t stream_copy_bytes() const { return stream_copy_bytes_; }
  void fill(const Tensor&, float) override {}
  void fill_zero_bytes(const Tensor&) override {}
  void scale(const Tensor&, float) override {}
  void axpby(float, const Tensor&, float, const Tensor&) override {}
  HostScalar sum_of_squares(const Tensor&) override { return 0.0; }
  void cast(const Tensor&, const Tensor&) override {}
  void copy(const Tensor&, const Tensor&) override {}
  void copy_on(const Tensor& src, const Tensor&, DeviceStream&) override {
    stream_copy_bytes_ += static_cast<std::int64_t>(src.nbytes());
  }

 private:
  std::atomic<std::int64_t> stream_copy_bytes_{0};
};

class MetaDeviceContext final : public DeviceContext {
 public:
  MetaDeviceContext(Device stands_for, std::int64_t capacity_bytes)
      : allocator_(Device::meta_of(stands_for)),
        staging_(Device::meta_of(Device::cpu(stands_for.index))),
        tracker_(allocator_, capacity_bytes),
        compute_(allocator_.device().to_string() + " compute"),
        copy_(allocator_.device().to_string() + " copy") {}

  const Device& device() const override { return allocator_.device(); }
  MemoryTracker& tracker() override { return tracker_; }
  DeviceAllocator& allocator() override { return allocator_; }
  DeviceStream& compute_stream() override { return compute_; }
  DeviceStream& copy_stream() override { return copy_; }
  DeviceOps& ops() override { return ops_; }
  DeviceAllocator& host_staging_allocator() override { return staging_; }
  void synchronize() override {}
  std::int64_t stream_copy_bytes() const { return ops_.stream_copy_bytes(); }

 private:
  MetaDeviceOps ops_;
  MetaAllocator allocator_;
  MetaAllocator staging_;
  MemoryTracker tracker_;
  InlineCpuStream compute_;
  InlineCpuStream copy_;
};

}  // namespace

MetaAllocator::MetaAllocator(Device device) : device_(Device::meta_of(device)) {}

void* MetaAllocator::allocate(std::size_t bytes) {
  const std::uint64_t rounded = (bytes + kMetaAlignment - 1) / kMetaAlignment * kMetaAlignment;
  const std::uint64_t offset = next_offset_.fetch_add(rounded + kMetaAlignment);
  allocated_bytes_ += static_cast<std::int64_t>(bytes);
  ++allocations_;
  return reinterpret_cast<void*>(kMetaBase + offset);  // NOLINT: an address never dereferenced
}

void MetaAllocator::deallocate(void*, std::size_t bytes) noexcept {
  allocated_bytes_ -= static_cast<std::int64_t>(bytes);
  --allocations_;
}

AllocatorStats MetaAllocator::stats() const {
  AllocatorStats stats;
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = allocated_bytes_;
  stats.allocations = allocations_;
  return stats;
}

DeviceOps& meta_device_ops() {
  static MetaDeviceOps ops;
  return ops;
}

std::int64_t meta_stream_copy_bytes(DeviceContext& context) {
  const auto* meta = dynamic_cast<const MetaDeviceContext*>(&context);
  return meta != nullptr ? meta->stream_copy_bytes() : 0;
}

std::unique_ptr<DeviceContext> make_meta_device_context(Device stands_for,
                                                        std::int64_t capacity_bytes) {
  return std::make_unique<MetaDeviceContext>(stands_for, capacity_bytes);
}

}  // namespace zt
