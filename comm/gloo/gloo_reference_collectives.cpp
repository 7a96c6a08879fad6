// GlooReferenceCollectives: thin calls into gloo::allreduce and gloo::allgather.
#include "comm/gloo/gloo_reference_collectives.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/context.h>
#include <gloo/math.h>

#include "comm/gloo/gloo_connect.h"
#include "comm/gloo/gloo_errors.h"
#include "core/error.h"

namespace zt::comm {

GlooReferenceCollectives::GlooReferenceCollectives(Store& store, int rank, int world_size,
                                                   const CommOptions& options)
    : context_(connect_gloo_context(store, "gloo/" + options.group_name + "/", rank, world_size,
                                    {options.bind_address, options.interface}, options.timeout)),
      timeout_(options.timeout) {}

GlooReferenceCollectives::~GlooReferenceCollectives() = default;

void GlooReferenceCollectives::all_reduce_sum(std::span<float> data) {
  try {
    ::gloo::AllreduceOptions options(context_);
    options.setOutput(data.data(), data.size());
    // gloo::sum is overloaded; the reduce function takes (out, in1, in2, count).
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&::gloo::sum<float>));
    options.setTag(next_tag_++);
    options.setTimeout(timeout_);
    ::gloo::allreduce(options);
  } catch (...) {
    rethrow_as_comm_error("gloo::allreduce");
  }
}

void GlooReferenceCollectives::all_gather(std::span<const float> shard, std::span<float> output) {
  ZT_CHECK(output.size() == shard.size() * static_cast<std::size_t>(context_->size),
           "all_gather output is not world_size shards");
  try {
    ::gloo::AllgatherOptions options(context_);
    // Gloo's input is not const-correct; it is only read.
    options.setInput(const_cast<float*>(shard.data()), shard.size());
    options.setOutput(output.data(), output.size());
    options.setTag(next_tag_++);
    options.setTimeout(timeout_);
    ::gloo::allgather(options);
  } catch (...) {
    rethrow_as_comm_error("gloo::allgather");
  }
}

}  // namespace zt::comm
