// A batch source read from a later sample index on (Note [Held-out synthetic stream]).
#include <utility>

#include "core/error.h"
#include "data/batch.h"

namespace zt::data {
namespace {

class ShiftedSource final : public BatchSource {
 public:
  ShiftedSource(std::unique_ptr<BatchSource> source, std::int64_t first_sample)
      : source_(std::move(source)), first_sample_(first_sample) {}

  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    ZT_CHECK(range.first >= 0 && range.first <= INT64_MAX - first_sample_ - range.count,
             "shifted sample range overflows");
    return source_->load({first_sample_ + range.first, range.count}, tracker);
  }

 private:
  std::unique_ptr<BatchSource> source_;
  std::int64_t first_sample_;
};

}  // namespace

std::unique_ptr<BatchSource> make_shifted_source(std::unique_ptr<BatchSource> source,
                                                 std::int64_t first_sample) {
  ZT_CHECK(source && first_sample >= 0, "shifting no source, or to a negative sample");
  return std::make_unique<ShiftedSource>(std::move(source), first_sample);
}

}  // namespace zt::data
