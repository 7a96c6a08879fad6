// GlooReferenceCollectives: Gloo's own new-style allreduce and allgather, synchronous, f32,
// on a context of their own (nothing mixes with a communicator's). The baseline that
// bench/collectives.cpp measures our ring algorithms against; not for training code.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

#include "comm/communicator_factory.h"
#include "comm/store/store.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace zt::comm {

class GlooReferenceCollectives {
 public:
  // Connects like create_cpu_communicator (world size >= 2), under its own group name.
  GlooReferenceCollectives(Store& store, int rank, int world_size, const CommOptions& options);
  GlooReferenceCollectives(const GlooReferenceCollectives&) = delete;
  GlooReferenceCollectives& operator=(const GlooReferenceCollectives&) = delete;
  ~GlooReferenceCollectives();

  // gloo::allreduce (its ring, 1 MiB segments) with gloo::sum<float>, in place.
  void all_reduce_sum(std::span<float> data);
  // gloo::allgather: `shard` from every rank into `output` (world_size * shard.size()).
  void all_gather(std::span<const float> shard, std::span<float> output);

 private:
  std::shared_ptr<::gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  std::uint32_t next_tag_ = 1;
};

}  // namespace zt::comm
